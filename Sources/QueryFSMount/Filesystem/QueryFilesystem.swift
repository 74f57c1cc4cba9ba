#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import Synchronization
import QueryFSEngine
import QueryFSCollection

/// The mounted filesystem: the root, the view folders of the live index as
/// folders of symlinks, and `bundles/` passed through to the backing
/// directory. Request handlers read immutable view snapshots and never wait
/// on the index; the watcher thread swaps snapshots in and tells the kernel
/// exactly what changed (`KernelCacheInvalidator`).
package final class QueryFilesystem: @unchecked Sendable {
    let catalog: LiveCatalog
    /// The live index's, for stale-name lookups without its lock (`EntryTitlePresence`).
    let titlePresence: EntryTitlePresence
    let linkStyle: LinkStyle
    let folders = ViewFolderTable()
    let passthrough: PassthroughTable
    let policy = CachePolicy()
    /// Locks taken around every mutating operation under bundles/ (SPEC §5).
    let writes: WriteCoordinator
    /// Regular files the kernel reads and writes itself (FUSE passthrough).
    let kernelPassthrough: KernelPassthrough
    let mountTime: Timestamp
    /// When the root's, `tag/`'s and `query/`'s own listings last changed.
    let rootClock: FolderClock, tagRootClock: FolderClock, queryRootClock: FolderClock
    let owner: (uid: uid_t, gid: gid_t)
    /// Serializes tag/ listings with tag folders appearing and vanishing (see ViewFolder.replyLock).
    let tagRootLock = PlainLock()
    /// What the mount was asked for, fixed for its life.
    let settings: Settings
    /// The configuration file that `mkdir`/`rmdir` under `query/` edit (nil: they fail with EROFS).
    var configurationFile: ConfigurationReloader? { settings.configurationFile }
    /// The queries saved in the configuration, as `query/` shows them.
    let savedQueries = Mutex<Set<String>>([])
    /// `query/` folders a file manager made under its placeholder name
    /// ("Untitled Folder"), empty until renamed to a query (`QueryDrafts`),
    /// with who made each.
    let draftQueries = Mutex<[String: QueryDrafts.Maker]>([:])
    /// Logged once: the mount cannot tell a mkdir lookup from another.
    let warnedSyscallUnreadable = Atomic<Bool>(false)
    var queryFolderLimit: Int { settings.queryFolderLimit }
    /// Whether a drop of ad-hoc query folders beyond the limit is queued.
    let queryFolderDropPending = Atomic<Bool>(false)
    /// A drop left folders over the limit that were listed too lately: asked again once they are not.
    let queryFolderRecheckPending = Atomic<Bool>(false)
    var lockTimeout: Double { settings.lockTimeout }
    var mountPoint: String { settings.mountPoint }
    /// Tag folders made by `mkdir tag/<name>`: they stay, empty, until
    /// `rmdir` or unmount, so that items can be dragged into them.
    let madeTagFolders = Mutex<Set<String>>([])
    /// Names programs gave entries by renaming them, which the entries do not carry.
    let retitledNames = RetitledNames()
    let recentRemovals = RecentRemovals()
    /// Removals made by moving an entry to the trash, taken back by its restore into the same folder.
    let trashedRemovals = RecentRemovals(window: nil, kept: 1024)
    /// Names `ln -s` gave entries (not their own), for an `mv` that follows (`ln -sf`): never for a lookup.
    let linkedNames = RetitledNames()
    /// The items processes opened lately: their looks at a stale name of one still find it (`OpenedItems`).
    let openedItems = OpenedItems()
    /// The thread that tells the kernel which names to forget.
    let nameInvalidations: NameInvalidations
    let nameSweeps: NameSweeps
    /// The parts that exist once mounted (`attach`), each set once and read
    /// without a lock by handlers and the watcher: the session notifications
    /// go through; the reader of view link targets ahead of a program (nil:
    /// not mounted, or the mount cannot be told in mountinfo); the replayer
    /// of changes as inotify events (nil: `--no-events`, read-only, or not mounted).
    private let sessionStorage = Atomic<OpaquePointer?>(nil)
    private let linkWarmerStorage = AtomicLazyReference<LinkWarmer>()
    private let eventReplayerStorage = AtomicLazyReference<EventReplayer>()
    /// Set when the kernel's INIT arrives (`FuseOperations.negotiate`).
    let kernelConnected = Atomic<Bool>(false)
    /// Nil until the kernel connected too: before its INIT the kernel has
    /// cached nothing, and libfuse answers every notification ENOSYS (a
    /// saved query's folder, installed at the start, logged a false
    /// "views may show stale entries", found from outside).
    var session: OpaquePointer? { kernelConnected.load(ordering: .acquiring) ? sessionStorage.load(ordering: .acquiring) : nil }
    var linkWarmer: LinkWarmer? { linkWarmerStorage.load() }
    var eventReplayer: EventReplayer? { eventReplayerStorage.load() }
    /// The process that aborts the connection if the daemon is killed (set once mounted).
    let connectionGuard = Mutex<ConnectionGuard.State>(.unavailable("not started"))
    /// The errnos of failed closes at RELEASE already logged.
    let releaseFailuresLogged = Mutex<Set<Int32>>([])
    /// The kernel keeps symlink targets (FUSE_CAP_CACHE_SYMLINKS, known at INIT).
    let kernelCachesSymlinks = Atomic<Bool>(false)
    /// The kernel checks a folder's mtime before it serves a kept listing
    /// from the start, and starts over if it moved (FUSE_CAP_AUTO_INVAL_DATA,
    /// known at INIT): a view folder's listing is then dropped by dropping
    /// its attributes (`KernelCacheInvalidator.invalidateListing`).
    let kernelChecksListingTimes = Atomic<Bool>(false)
    /// The options the mount was made with (for `.queryfs/status`).
    var mountOptions: [String] { settings.mountOptions }
    /// When the watcher last applied a change (see `lastChange`).
    let lastChangeStorage = Mutex<Timestamp?>(nil)
    /// Opens of `.queryfs/settled` waiting now (`openSettled`).
    let settleOpens = Atomic<Int>(0)

    /// The fixed top-level names of the root, in listing order (then the configured views).
    package static let bundlesName = "bundles"

    /// What a mount is asked for, given once: nothing of it changes while mounted.
    package struct Settings: Sendable {
        package var linkStyle: LinkStyle = .relative
        /// Longest wait for an item's lock, for writes under bundles/ and edits through views.
        package var lockTimeout: Double = 5
        package var coordinatesWrites = true
        package var kernelPassthrough = true
        package var configurationFile: ConfigurationReloader?
        /// How many ad-hoc (unsaved) `query/` folders are kept; the least recently used beyond it are dropped.
        package var queryFolderLimit = 256
        /// Where the mount is (link targets may name it).
        package var mountPoint = ""
        package var mountOptions: [String] = []
        package init() {}
    }

    package init(catalog: LiveCatalog, settings: Settings = Settings()) throws(SystemError) {
        self.settings = settings
        self.kernelPassthrough = KernelPassthrough(enabled: settings.kernelPassthrough, logger: catalog.logger)
        self.catalog = catalog
        self.linkStyle = settings.linkStyle
        nameInvalidations = NameInvalidations(logger: catalog.logger)
        nameSweeps = NameSweeps(logger: catalog.logger,
                                drop: { [nameInvalidations] folder, names in nameInvalidations.add(parent: folder, names: names) })
        let writes = WriteCoordinator(rootFD: catalog.backing.fd, timeout: settings.lockTimeout, enabled: settings.coordinatesWrites)
        self.writes = writes
        // The index reads an item the mount is filling once the writes pause.
        catalog.isBeingWritten = { item, seconds in writes.isWriting(item, within: seconds) }
        passthrough = try PassthroughTable(backing: catalog.backing,
                                           sharedName: { [catalog] name in catalog.withIndexIfFree { $0.records[name]?.name } ?? nil })
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        mountTime = Timestamp(seconds: Int64(now.tv_sec), nanoseconds: UInt32(now.tv_nsec))
        (rootClock, tagRootClock, queryRootClock) = (FolderClock(mountTime), FolderClock(mountTime), FolderClock(mountTime))
        owner = (getuid(), getgid())
        titlePresence = catalog.withIndex { $0.titlePresence }
        catalog.withIndex { index in
            fixedPathsStorage = index.viewSet.fixed.map(\.path)
            viewSetStorage = index.viewSet
            folders.rememberAll(index.records)
            for view in index.views { installListing(of: view.definition.path, records: view.records, at: mountTime) }
            installGroups(at: mountTime)
        }
        reserveDescriptorTable()
    }

    /// Joins what exists once mounted; each part once, before the session loop starts.
    func attach(session: OpaquePointer) {
        let (stored, _) = sessionStorage.compareExchange(expected: nil, desired: session, ordering: .acquiringAndReleasing)
        precondition(stored, "a filesystem serves one session")
    }

    func attach(_ linkWarmer: LinkWarmer) { _ = linkWarmerStorage.storeIfNil(linkWarmer) }
    func attach(_ eventReplayer: EventReplayer) { _ = eventReplayerStorage.storeIfNil(eventReplayer) }

    /// Grows the descriptor table once, so that it need not grow while
    /// serving (see `DescriptorLimit.reserveTable`): room for the node
    /// descriptors the passthrough table may keep for these items (a
    /// bundle and its payload each, up to its limit) and 256 more. On a
    /// thread of its own: growing waits out an RCU grace period (10–15 ms
    /// here) that nothing else needs to wait for. A trusted start at
    /// 100,000 items took 403–636 ms (median 437) with it, 388–611 (median
    /// 438) without, alternating ten times each.
    private func reserveDescriptorTable() {
        let count = min(passthrough.descriptorLimit, 2 * catalog.withIndex { $0.records.count }) + 256
        if !startThread(named: "queryfs-fds", { DescriptorLimit.reserveTable(for: count) }) {
            // No thread to be had (EAGAIN): the table grows when it must, as before.
            return
        }
    }

    /// Publishes the current listing of `view` (called at mount and by the watcher).
    @discardableResult
    func installListing(of path: [String], records: RecordList, at time: Timestamp) -> (folder: ViewFolder, old: ViewListing?) {
        let listing = ViewListing(records: records, naming: entryTitle(forPath: path))
        let (folder, isNew) = folders.folder(path: path, listing: listing, time: time)
        var old: ViewListing?
        if !isNew {
            old = folder.listing
            folder.replace(listing, at: time)
        }
        return (folder, old)
    }

    /// `installListing` for the watcher: the listing of a `query/` folder
    /// removed meanwhile (rmdir, between the index's change and this) does
    /// not make the folder again, with no view behind it to keep it current.
    func publishListing(of path: [String], records: RecordList, at time: Timestamp) -> (folder: ViewFolder, old: ViewListing?)? {
        guard path.count == 2, path[0] == ViewDefinition.queryFolder else { return installListing(of: path, records: records, at: time) }
        guard let folder = folders.folder(path: path) else { return nil }
        let old = folder.listing
        folder.replace(ViewListing(records: records, naming: entryTitle(forPath: path)), at: time)
        return (folder, old)
    }

    /// The node holding the folder at `path`: the root, `tag/`, `query/`, or
    /// a group folder (nil if that group is gone).
    func parentID(ofFolderAt path: [String]) -> UInt64? {
        if path.count == 1 { return NodeID.root }
        if path.count == 2, path[0] == ViewDefinition.queryFolder { return NodeID.queryRoot }
        if path.count == 2, path[0] == ViewDefinition.tagFolder {
            // A nested tag's folder lies in its parent tag's folder.
            guard let slash = path[1].lastIndex(of: "/") else { return NodeID.tagRoot }
            return folders.folder(path: [ViewDefinition.tagFolder, String(path[1][..<slash])])?.id
        }
        return folders.folder(path: Array(path.dropLast()))?.id
    }

    /// Where a folder lies below the mount's root, component by component
    /// (a nested tag's folder `["tag", "a/b"]` is `tag/a/b`).
    static func mountPath(of path: [String]) -> [String] {
        guard path.count == 2, path[0] == ViewDefinition.tagFolder else { return path }
        return [ViewDefinition.tagFolder] + path[1].split(separator: "/").map(String.init)
    }

    /// The folder at a path below the mount's root (`tag/a/b` is the tag folder `["tag", "a/b"]`).
    static func folderPath(ofMountPath path: [String]) -> [String] {
        guard path.count > 2, path[0] == ViewDefinition.tagFolder else { return path }
        return [ViewDefinition.tagFolder, path.dropFirst().joined(separator: "/")]
    }

    /// Paths of the fixed views, in root listing order (read once: handlers
    /// must not take the index lock).
    private var fixedPathsStorage: [[String]] = []
    private let fixedPathsLock = PlainLock()
    var fixedPaths: [[String]] { fixedPathsLock.withLock { fixedPathsStorage } }
    /// The views as configured (read under `fixedPathsLock`): what each
    /// folder's entries are named after and whether they are desktop files.
    private var viewSetStorage = ViewSet()

    /// How entries of the folder at `path` are named, and what they are.
    func entryTitle(forPath path: [String]) -> ViewDefinition.EntryTitle {
        fixedPathsLock.withLock { viewSetStorage }.entryTitle(forPath: path)
    }

    /// Top-level folders of the root (fixed views and groups of nested
    /// views, in configuration order), excluding `tag/` and `query/`.
    var topLevelFolders: [ViewFolder] {
        var seen = Set<String>()
        return fixedPaths.compactMap { path in seen.insert(path[0]).inserted ? folders.folder(path: [path[0]]) : nil }
    }

    /// The folders that hold nested views (`reading/` of `reading/today`):
    /// each group's children in configuration order, groups in order met.
    private static func groups(of paths: [[String]]) -> [(path: [String], children: [String])] {
        var children: [[String]: [String]] = [:]
        var order: [[String]] = []
        for path in paths where path.count > 1 {
            for depth in 1..<path.count {
                let group = Array(path.prefix(depth))
                if children[group] == nil { order.append(group) }
                if !(children[group, default: []].contains(path[depth])) { children[group, default: []].append(path[depth]) }
            }
        }
        return order.map { ($0, children[$0]!) }
    }

    private func installGroups(at time: Timestamp) {
        for group in Self.groups(of: fixedPaths) {
            let (folder, _) = folders.folder(path: group.path, listing: ViewListing(records: []), time: time)
            folder.makeGroup(of: group.children)
        }
    }

    /// The configured views changed (the configuration was reloaded): gone
    /// views and groups leave, remade views take their new listing, groups
    /// list their new children. Returns what the kernel must forget: the
    /// names (parent node, name) of every folder gone, remade or new, and
    /// the folders whose listings changed.
    func reconfigure(_ change: LiveIndex.Reconfiguration, listings: [[String]: RecordList], at time: Timestamp)
        -> (entries: [(parent: UInt64, name: [UInt8])], inodes: [UInt64], folders: [(path: [String], old: ViewFolder?, new: ViewFolder?)])
    {
        // The view folders as they were, for the events that tell watchers they went or were made anew.
        var before: [[String]: ViewFolder] = [:]
        for path in change.removed + change.remade { if let folder = folders.folder(path: path) { before[path] = folder } }
        let oldPaths = fixedPaths
        let viewSet = change.viewSet ?? catalog.withIndex { $0.viewSet }
        let newPaths = viewSet.fixed.map(\.path)
        let oldGroups = Self.groups(of: oldPaths).map(\.path)
        let newGroups = Self.groups(of: newPaths).map(\.path)
        var entries: [(parent: UInt64, name: [UInt8])] = []
        var inodes: [UInt64] = [NodeID.root]
        func forget(_ path: [String]) {
            if let parent = parentID(ofFolderAt: path) { entries.append((parent, Array(path.last!.utf8))) }
        }
        // Names first, while the old parents still stand.
        let gone = change.removed + oldGroups.filter { !newGroups.contains($0) }
        for path in gone + change.remade { forget(path) }
        for path in gone {
            if let folder = folders.folder(path: path) { inodes.append(folder.id) }
            folders.removeFolder(path: path)
        }
        // A path that was a group and is now a view (or the reverse) gets a new folder.
        for path in change.remade where oldGroups.contains(path) { folders.removeFolder(path: path) }
        fixedPathsLock.withLock { (fixedPathsStorage, viewSetStorage) = (newPaths, viewSet) }
        for path in change.remade {
            guard let (folder, _) = publishListing(of: path, records: listings[path] ?? [], at: time) else { continue }
            inodes.append(folder.id)
        }
        installGroups(at: time)
        for group in newGroups {
            if let folder = folders.folder(path: group) { inodes.append(folder.id) }
            if !oldGroups.contains(group) { forget(group) }
        }
        let changed = change.removed.map { ($0, before[$0], nil as ViewFolder?) }
            + change.remade.map { ($0, before[$0], folders.folder(path: $0)) }
        return (entries, inodes, changed.filter { $0.1 != nil || $0.2 != nil })
    }

    // MARK: Attributes

    /// When a folder without a `ViewFolder` (the root, `tag/`, `query/`) last changed.
    func changed(_ id: UInt64) -> Timestamp {
        switch id {
        case NodeID.tagRoot: tagRootClock.changed
        case NodeID.queryRoot: queryRootClock.changed
        default: rootClock.changed
        }
    }

    /// What every node of the views shares: its id, the mount's owner, its
    /// type and permissions, a size and one time for all three.
    func viewNodeAttributes(id: UInt64, mode: mode_t, links: Int = 1, size: Int = 0, time: Timestamp) -> stat {
        var attributes = stat()
        attributes.st_ino = ino_t(id)
        attributes.st_mode = mode
        attributes.st_nlink = nlink_t(links)
        attributes.st_uid = owner.uid
        attributes.st_gid = owner.gid
        attributes.st_size = off_t(size)
        attributes.st_blksize = 4096
        let time = timespec(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds))
        attributes.st_mtim = time
        attributes.st_ctim = time
        attributes.st_atim = time
        return attributes
    }

    func directoryAttributes(id: UInt64, changed: Timestamp) -> stat {
        // Writable by the owner: query/ takes mkdir and rmdir (saved
        // queries), tag/ mkdir, rmdir and mv of tag folders, view folders ln,
        // rm and mv of entries (edits), the root mkdir of the owner's trash
        // folder (`.Trash-UID`, TrashOperations; the rest it refuses); the
        // kernel checks permissions (default_permissions).
        viewNodeAttributes(id: id, mode: S_IFDIR | 0o755, links: 2, time: changed)
    }

    /// An entry's attributes: a symlink's, or (`desktop`) a desktop entry's.
    func entryAttributes(id: UInt64, record: ItemRecord, depth: Int, desktop: Bool) -> stat {
        desktop ? desktopEntryAttributes(id: id, record: record) : linkAttributes(id: id, record: record, depth: depth)
    }

    func linkAttributes(id: UInt64, record: ItemRecord, depth: Int) -> stat {
        viewNodeAttributes(id: id, mode: S_IFLNK | 0o777, size: linkStyle.target(for: record.name, depth: depth).count, time: record.modified)
    }

    func entryParameters(id: UInt64, attributes: stat, timeout: Double) -> fuse_entry_param {
        var entry = fuse_entry_param()
        entry.ino = id
        entry.generation = 1
        entry.attr = attributes
        entry.attr_timeout = timeout
        entry.entry_timeout = timeout
        return entry
    }
}

/// Kernel cache timeouts. Views and passthrough nodes of items are cached
/// for a day and invalidated exactly when the watcher sees them change;
/// entries outside any item (hidden names such as `.git`) are not watched,
/// so they are cached for a second only.
struct CachePolicy {
    var viewTimeout = 86_400.0
    var itemTimeout = 86_400.0
    var unwatchedTimeout = 1.0
    /// How long the kernel may remember that a name is not in the root.
    /// GIO asks for `.Trash` and `.Trash-UID` at the mount's root for every
    /// file it describes (can it be trashed?): Thunar's open of a 1,000-entry
    /// view sent 2,000 lookups of the two, each a round trip to the daemon.
    /// The root changes only when the configuration does, and
    /// a reload drops every name it adds (`reconfigure`); the bound covers a
    /// lookup answered from the old set while a reload lands.
    var rootMissTimeout = 10.0

    func timeout(forPassthroughItem item: ItemName?) -> Double {
        guard let item else { return itemTimeout }
        return item.isHidden ? unwatchedTimeout : itemTimeout
    }
}

extension QueryFilesystem {
    /// Runs `body` under the lock that orders readdir replies of directory
    /// `id` with changes to its listing.
    func withListingLock(of id: UInt64, _ body: () -> Void) {
        switch NodeID.kind(of: id) {
        case .folder(let serial):
            guard let folder = folders.folder(serial: serial) else { return body() }
            folder.replyLock.withLock(body)
        case .tagRoot:
            tagRootLock.withLock(body)
        default:
            body()
        }
    }

    /// Runs a mutating handler under the exclusive locks of the items it
    /// changes; replies EBUSY itself if a lock could not be had in time.
    func coordinated(_ request: fuse_req_t?, _ items: [ItemName?], _ handler: () -> Void) {
        var ran = false
        let code = writes.withExclusiveLocks(items) {
            handler()
            ran = true
            return 0
        }
        if !ran { fuse_reply_err(request, code) }
    }

    /// The item a name in a passthrough folder belongs to: the name itself
    /// directly under bundles/ (or its path, in a folder of items), else the
    /// folder's item.
    func item(named name: UnsafePointer<CChar>, in parent: PassthroughNode) -> ItemName? {
        guard parent.id == NodeID.bundles || parent.folder != nil else { return parent.item }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
        return ItemName((parent.folder.map { $0.bytes + [UInt8(ascii: "/")] } ?? []) + bytes)
    }

    /// Replies with an error; Void, so handlers can `return fail(…)`.
    func fail(_ request: fuse_req_t?, _ code: Int32) {
        fuse_reply_err(request, code)
    }
}
