#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// Follows the insides of every bundle with one fanotify mark on BACKING's
/// filesystem instead of an inotify watch per folder (100,000 bundles need
/// 92,000 watches; a desktop has about 65,000 in all). The mark hears the
/// whole filesystem, so each event's folder is turned into a path
/// (open_by_handle_at, then the /proc link) and kept only when it lies in
/// BACKING; folders already placed are remembered in a bounded table, so a
/// stream of writes in one bundle costs one lookup. BACKING's own entries
/// are also followed by inotify's one watch (BackingWatcher), which tells
/// when BACKING itself goes.
final class FilesystemMark {
    private let fanotify: Fanotify
    /// BACKING: where handles are opened (any descriptor on its mount, but not O_PATH: EBADF).
    private let mountFD: Int32
    private let rootHandle: FolderHandle
    /// BACKING's path as the kernel prints it, with a trailing slash.
    private let rootPrefix: [UInt8]
    /// The item each folder seen lies in; nil for folders outside BACKING.
    private var itemOfFolder: [FolderHandle: ItemName?] = [:]
    /// Bounds the table: past it, it starts again (each entry is one lookup to remake).
    static let rememberedFolders = 8192

    var fd: Int32 { fanotify.fd }

    /// Marks BACKING's filesystem. Throws when the kernel refuses (EPERM
    /// without CAP_SYS_ADMIN or CAP_DAC_READ_SEARCH; EXDEV or EOPNOTSUPP on
    /// filesystems without file handles, such as most FUSE ones).
    init(root: BackingDirectory) throws(SystemError) {
        fanotify = try Fanotify(filesystemOf: root.path)
        mountFD = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard mountFD >= 0 else { throw SystemError.current("open", path: root.path) }
        var probe = qfs_fanotify_event()
        guard qfs_name_to_handle(mountFD, "", QFS_AT_EMPTY_PATH, &probe) == 0 else {
            let error = SystemError.current("name_to_handle_at", path: root.path)
            close(mountFD)
            throw error
        }
        rootHandle = FolderHandle(probe)
        // Opening BACKING by its handle proves the rest works, and says how the kernel prints its path.
        let (path, errno) = Self.path(of: rootHandle, mountFD: mountFD)
        guard let path else {
            close(mountFD)
            throw SystemError(errno: errno, operation: "open_by_handle_at", path: root.path)
        }
        rootPrefix = path + [UInt8(ascii: "/")]
    }

    deinit { close(mountFD) }

    func readAvailable() -> [Fanotify.Event] { fanotify.readAvailable() }

    /// Turns events into dirty items (and an overflow into a full rescan).
    func observe(_ events: [Fanotify.Event], into observation: inout BackingWatcher.Observation) {
        for event in events {
            if event.isOverflow {
                observation.needsFullRescan = true
                continue
            }
            guard let folder = event.folder else { continue }
            if folder == rootHandle {
                let name = ItemName(event.name)
                if !event.name.isEmpty, !name.isHidden { observation.dirtyItems.insert(name) }
            } else if let item = item(containing: folder) {
                observation.dirtyItems.insert(item)
            }
            // A folder moved or deleted: the paths remembered may have changed.
            if event.reshapesFolders { itemOfFolder.removeAll(keepingCapacity: true) }
        }
    }

    /// The item a folder lies in, nil when it is outside BACKING or gone.
    private func item(containing folder: FolderHandle) -> ItemName? {
        if let known = itemOfFolder[folder] { return known }
        let (path, _) = Self.path(of: folder, mountFD: mountFD)
        var item: ItemName?
        if let path, path.starts(with: rootPrefix) {
            let inside = path[rootPrefix.count...]
            let name = ItemName(Array(inside.prefix { $0 != UInt8(ascii: "/") }))
            if !name.bytes.isEmpty, !name.isHidden { item = name }
        }
        // A folder gone (ESTALE) is not remembered: its handle never comes again.
        guard path != nil else { return item }
        if itemOfFolder.count >= Self.rememberedFolders { itemOfFolder.removeAll(keepingCapacity: true) }
        itemOfFolder[folder] = .some(item)
        return item
    }

    /// The folder's path as the kernel prints it now, or nil and the errno.
    private static func path(of folder: FolderHandle, mountFD: Int32) -> ([UInt8]?, Int32) {
        var handle = folder.cEvent
        let fd = qfs_open_by_handle(mountFD, &handle, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return (nil, errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count)
        guard count > 0 else { return (nil, errno) }
        return (Array(buffer[..<count]), 0)
    }
}
