#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// A thin, typed wrapper over one inotify instance.
final class Inotify {
    struct Event {
        var descriptor: Int32
        var mask: UInt32
        /// Name bytes of the entry the event is about, empty for the watched directory itself.
        var name: [UInt8]

        func has(_ flag: Int32) -> Bool { mask & UInt32(bitPattern: flag) != 0 }
        var isDirectory: Bool { has(IN_ISDIR) }
    }

    let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 256 * 1024)

    init() throws(SystemError) {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError.current("inotify_init1") }
    }

    deinit { close(fd) }

    /// Adds (or refreshes) a watch; inotify returns the same descriptor for the same inode.
    func addWatch(path: [UInt8], mask: UInt32) throws(SystemError) -> Int32 {
        let descriptor = path.withCString { inotify_add_watch(fd, $0, mask) }
        guard descriptor >= 0 else {
            throw SystemError.current("inotify_add_watch", path: String(decoding: path, as: UTF8.self))
        }
        return descriptor
    }

    func removeWatch(_ descriptor: Int32) {
        _ = inotify_rm_watch(fd, descriptor)
    }

    /// Reads every event queued now, without blocking.
    func readAvailable() -> [Event] {
        var events: [Event] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count <= 0 { return events }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let base = raw.baseAddress! + offset
                    let descriptor = base.loadUnaligned(as: Int32.self)
                    let mask = base.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
                    let length = Int(base.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<(nameStart + length)].prefix { $0 != 0 }
                    events.append(Event(descriptor: descriptor, mask: mask, name: Array(nameBytes)))
                    offset = nameStart + length
                }
            }
        }
    }
}
