#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

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
    /// BACKING's path as the kernel prints it, with a trailing slash; read
    /// again each burst (`settle`), since a folder above BACKING can be renamed.
    private var rootPrefix: [UInt8]
    /// The item each folder seen lies in; nil for folders outside BACKING.
    private var itemOfFolder: [FolderHandle: ItemName?] = [:]
    /// The same, the other way: the folders placed in each item (nil: outside).
    private var foldersIn: [ItemName?: [FolderHandle]] = [:]
    /// Folders placed outside every item because they lie under a hidden
    /// entry of BACKING, by that entry: a bundle assembled as `.staging`
    /// and renamed into place must be placed again, or every later change
    /// in it would be taken for one outside BACKING (found by `make soak`).
    private var foldersUnderHidden: [ItemName: [FolderHandle]] = [:]
    /// Bounds the table: past it, it starts again (each entry is one lookup to remake).
    static let rememberedFolders = 8192
    /// Folders with events since the last `settle`, placed then.
    private var unplaced = Set<FolderHandle>()
    /// Folders deleted since the last `settle`: never placed.
    private var deleted = Set<FolderHandle>()

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
    /// Changes in BACKING itself are placed at once; a folder inside it is
    /// placed by `settle`, once the burst is over.
    func observe(_ events: [Fanotify.Event], into observation: inout BackingWatcher.Observation) {
        for event in events {
            if event.isOverflow {
                observation.needsFullRescan = true
                continue
            }
            guard let folder = event.folder else { continue }
            if event.deletesFolder {
                deleted.insert(folder)
            } else if folder == rootHandle {
                let name = ItemName(event.name)
                if !event.name.isEmpty, !name.isHidden { observation.dirtyItems.insert(name) }
            } else {
                unplaced.insert(folder)
            }
            if event.reshapesFolders { folderLeft(folder, name: event.name) }
        }
    }

    /// Places the folders the burst's events happened in: their items are
    /// dirty. Deleted folders are left out: what deleted them was reported
    /// in their parent, and placing one costs the kernel a search of its
    /// parent's whole listing by inode number (open_by_handle_at reconnects
    /// a folder handle whose entry is gone). A bundle's payload removed and
    /// then the bundle, when placed, read all of BACKING's listing: 26–65 ms
    /// from disk at 100,000 items, on the watcher's thread.
    func settle(into observation: inout BackingWatcher.Observation) {
        for folder in deleted { forget(folder) }
        if !unplaced.isEmpty { followBackingMoves() }
        for folder in unplaced where !deleted.contains(folder) {
            if let item = item(containing: folder) { observation.dirtyItems.insert(item) }
        }
        unplaced.removeAll(keepingCapacity: true)
        deleted.removeAll(keepingCapacity: true)
    }

    /// A folder named `name` moved away from `parent` or was deleted: the
    /// folders that were under it may lie elsewhere now. Only folders
    /// placed where `parent` lies can have been under it (`parent` itself
    /// stays put): the folders of one item, or those outside BACKING (the
    /// whole filesystem's folders come and go there, and a change in
    /// BACKING should not have to place its folders again for that).
    private func folderLeft(_ parent: FolderHandle, name: [UInt8]) {
        if parent == rootHandle {
            for folder in foldersUnderHidden.removeValue(forKey: ItemName(name)) ?? [] { forget(folder) }
            return forgetFolders(in: ItemName(name), keeping: nil)
        }
        guard case .some(let place) = itemOfFolder[parent] else { return forgetAllFolders() }  // not placed: anywhere
        forgetFolders(in: place, keeping: parent)
    }

    /// BACKING's path now: when a folder above it was renamed, every
    /// folder's place is told again (those that seemed outside may be
    /// inside). One open_by_handle_at and one readlink per burst.
    private func followBackingMoves() {
        guard let path = Self.path(of: rootHandle, mountFD: mountFD).0 else { return }
        let prefix = path + [UInt8(ascii: "/")]
        guard prefix != rootPrefix else { return }
        rootPrefix = prefix
        forgetAllFolders()
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
            if name.isHidden { foldersUnderHidden[name, default: []].append(folder) }
        }
        // A folder gone (ESTALE) is not remembered: its handle never comes again.
        guard path != nil else { return item }
        if itemOfFolder.count >= Self.rememberedFolders { forgetAllFolders() }
        itemOfFolder[folder] = .some(item)
        foldersIn[item, default: []].append(folder)
        return item
    }

    private func forgetFolders(in place: ItemName?, keeping kept: FolderHandle?) {
        guard let folders = foldersIn.removeValue(forKey: place) else { return }
        for folder in folders where folder != kept { itemOfFolder[folder] = nil }
        if let kept, folders.contains(kept) { foldersIn[place] = [kept] }
    }

    private func forget(_ folder: FolderHandle) {
        guard case .some(let place) = itemOfFolder.removeValue(forKey: folder) else { return }
        foldersIn[place]?.removeAll { $0 == folder }
        if foldersIn[place]?.isEmpty == true { foldersIn[place] = nil }
    }

    private func forgetAllFolders() {
        itemOfFolder.removeAll(keepingCapacity: true)
        foldersIn.removeAll(keepingCapacity: true)
        foldersUnderHidden.removeAll(keepingCapacity: true)
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
