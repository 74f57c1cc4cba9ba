#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// A kernel file handle of a folder: what fanotify names a folder by.
struct FolderHandle: Hashable {
    var type: Int32
    var bytes: [UInt8]

    init(_ event: qfs_fanotify_event) {
        type = event.handle_type
        var event = event
        bytes = withUnsafeBytes(of: &event.handle) { Array($0.prefix(Int(event.handle_length))) }
    }

    /// The handle in the C form the shims take.
    var cEvent: qfs_fanotify_event {
        var event = qfs_fanotify_event()
        event.handle_type = type
        event.handle_length = UInt32(bytes.count)
        withUnsafeMutableBytes(of: &event.handle) { $0.copyBytes(from: bytes.prefix($0.count)) }
        return event
    }
}

/// A thin, typed wrapper over one fanotify instance with one mark on a
/// whole filesystem (CAP_SYS_ADMIN), reporting each change by the handle of
/// its folder and the name in it.
final class Fanotify {
    struct Event {
        var mask: UInt64
        /// The folder the change happened in (nil for an overflow).
        var folder: FolderHandle?
        /// The entry's name in that folder, empty for the folder itself.
        var name: [UInt8]

        var isOverflow: Bool { mask & QFS_FAN_Q_OVERFLOW != 0 }
        /// A folder moved away or deleted: folder paths known so far may be wrong.
        var reshapesFolders: Bool { mask & QFS_FAN_ONDIR != 0 && mask & (QFS_FAN_MOVED_FROM | QFS_FAN_DELETE) != 0 }
        /// `folder` itself was deleted (reported with its own handle).
        var deletesFolder: Bool { mask & QFS_FAN_ONDIR != 0 && mask & QFS_FAN_DELETE_SELF != 0 }
    }

    let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 256 * 1024)

    /// Marks the filesystem that holds `path`.
    init(filesystemOf path: String) throws(SystemError) {
        fd = qfs_fanotify_open_filesystem(path, QFS_FAN_CHANGES)
        guard fd >= 0 else { throw SystemError.current("fanotify", path: path) }
    }

    deinit { close(fd) }

    /// Reads every event queued now, without blocking.
    func readAvailable() -> [Event] {
        var events: [Event] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count <= 0 { return events }
            buffer.withUnsafeBytes { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var offset = 0
                var decoded = qfs_fanotify_event()
                while qfs_fanotify_next(base, count, &offset, &decoded) == 1 {
                    let name = decoded.name.map { Array(UnsafeRawBufferPointer(start: $0, count: decoded.name_length)) } ?? []
                    let folder = decoded.handle_length > 0 ? FolderHandle(decoded) : nil
                    events.append(Event(mask: decoded.mask, folder: folder, name: name))
                }
            }
        }
    }
}
