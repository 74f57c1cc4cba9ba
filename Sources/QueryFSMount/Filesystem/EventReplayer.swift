#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import Synchronization
import QueryFSEngine
import QueryFSCollection

/// Makes the kernel raise inotify events for changes the watcher found in
/// BACKING. inotify on a FUSE mount hears only operations made through the
/// mount, so this thread makes them: for each change it calls `unlinkat`,
/// `renameat`, `symlinkat`, `mkdirat` and `utimensat` in the mount's folders,
/// each folder opened beneath the mount's own root (`MountRoot`), never by
/// path,
/// and the request handlers, seeing the request come from this thread
/// (`isReplay`), answer each as a confirmation of the state the watcher
/// already published (`ReplayAnswers`) — nothing in BACKING changes, no
/// item lock is taken, no edit is made or journaled.
///
/// Its own thread: the watcher must never wait on a folder lock in the
/// kernel (an edit holds one while it waits for the watcher), so it queues
/// steps here and goes on. Past `bound` operations in one folder the
/// replay keeps only the entries that came, left, moved or changed, and
/// touches the folder itself (see DEVELOPERS.md, "Events for file managers").
final class EventReplayer: @unchecked Sendable {
    /// What one step asks the kernel to see.
    enum Step {
        /// Entry operations in a view folder, then (when over the bound) the folder itself touched.
        case entries(folder: ViewFolder, script: EventScript)
        /// A folder of `tag/` or `query/` (or the root) appeared or went.
        case folder(parent: UInt64, parentPath: [String], name: String, entry: fuse_entry_param, made: Bool)
        /// An item of BACKING appeared in bundles/: `mkdir` for a bundle,
        /// `mknod` for a file item (a note), `symlink` for a link; `type` is its `S_IFMT`.
        case bundleMade(ItemName, type: mode_t)
        /// An item of BACKING went (`rmdir` or `unlink` in bundles/ of the node the kernel holds).
        case bundleGone(ItemName, entry: fuse_entry_param)
        /// Files of BACKING changed: `utimensat` on each path under bundles/.
        case touched([[UInt8]])
    }

    /// The per-folder operation bound: below it every renamed entry gets
    /// its own event. Each rename is two events; inotify queues 16,384 per
    /// watcher by default and GIO drops an overflow silently, so the bound
    /// keeps a burst far below that, and a replay of it well under 50 ms.
    static let defaultBound = 1000
    /// Steps queued past this are merged into folder touches (a watcher
    /// behind by this much is better served by one reload than by history).
    static let queuedStepLimit = 256

    let bound: Int
    private let filesystem: QueryFilesystem
    private let root: MountRoot
    private let threadID = Atomic<Int32>(0)
    private let queueLock = PlainLock()
    private let wake: WakeSignal
    private var queue: [Step] = []
    private var stopped = false
    private let finished: WakeSignal
    /// What handlers answer this thread (its current operation).
    let answers = ReplayAnswers()

    init(filesystem: QueryFilesystem, root: MountRoot, bound: Int = EventReplayer.defaultBound) throws(SystemError) {
        wake = try WakeSignal()
        finished = try WakeSignal()
        self.filesystem = filesystem
        self.root = root
        self.bound = bound
    }

    /// Whether `request` was made by this thread.
    func isReplay(_ request: fuse_req_t?) -> Bool {
        guard let context = fuse_req_ctx(request) else { return false }
        let own = threadID.load(ordering: .relaxed)
        return own != 0 && context.pointee.pid == own
    }

    func start() {
        startThread(named: "queryfs-replay") { [self] in
            threadID.store(qfs_thread_id(), ordering: .relaxed)
            while let steps = next() { replay(steps) }
            finished.wake()
        }
    }

    /// Ends the thread after the step in progress (at most a second's wait):
    /// the session must outlive every operation it makes.
    func stop() {
        queueLock.withLock { stopped = true; queue.removeAll() }
        wake.wake()
        _ = finished.wait(milliseconds: 1000)
    }

    func add(_ steps: [Step]) {
        guard !steps.isEmpty else { return }
        queueLock.withLock {
            queue += steps
            if queue.count > Self.queuedStepLimit { queue = Self.merged(queue) }
            // Rank shifts queued past the budget are dropped for folder touches.
            var shiftsQueued = 0
            for case .entries(_, let script) in queue { shiftsQueued += script.shifts.count }
            if shiftsQueued > Self.queuedShiftLimit {
                queue = queue.map { step in
                    guard case .entries(let folder, let script) = step else { return step }
                    return .entries(folder: folder, script: script.withoutShifts())
                }
            }
        }
        wake.wake()
    }

    /// Queued rank-shift renames past this are given up (a few seconds of replay).
    static let queuedShiftLimit = 4000
    /// Rank-shift renames a replay makes before newer work may cut it short
    /// (a millisecond or two of renames): a small folder's shifts always complete.
    static let shiftsBeforeYielding = 32

    private var hasQueuedWork: Bool { queueLock.withLock { !queue.isEmpty || stopped } }

    /// A backlog as folder touches: one per view folder, no entry operations.
    private static func merged(_ steps: [Step]) -> [Step] {
        var seen = Set<UInt32>()
        var result: [Step] = []
        for step in steps {
            guard case .entries(let folder, _) = step else { result.append(step); continue }
            guard seen.insert(folder.serial).inserted else { continue }
            result.append(.entries(folder: folder, script: EventScript.folderOnly))
        }
        return result
    }

    private func next() -> [Step]? {
        while true {
            let taken: [Step]? = queueLock.withLock {
                if stopped { return nil }
                defer { queue.removeAll() }
                return queue
            }
            guard let taken else { return nil }
            if !taken.isEmpty { return taken }
            _ = wake.wait(milliseconds: -1)
            wake.drain()
        }
    }

    // MARK: Replaying

    /// What every watcher waits for first — in every folder, the entries
    /// that came, left or changed — then the rank shifts, given up (for a
    /// folder touch) as soon as newer changes are queued: those matter more.
    private func replay(_ steps: [Step]) {
        // Nothing is done when the mount point no longer leads to this mount.
        _ = root.withRoot { rootFD in
            let folders = ConfinedFolders(root: rootFD)
            defer { folders.close() }
            replay(steps, in: folders)
        }
    }

    private func replay(_ steps: [Step], in folders: ConfinedFolders) {
        for step in steps { replayUrgent(step, in: folders) }
        var pending = steps.compactMap { step -> (ViewFolder, EventScript)? in
            guard case .entries(let folder, let script) = step, !script.shifts.isEmpty else { return nil }
            return (folder, script)
        }[...]
        var shifted = 0
        while let (folder, script) = pending.first {
            for operation in script.shifts {
                // The first few always go: an `rm` through the mount queues the
                // item's other changes at once, and giving up then left every
                // watcher with the old ranks for good (pcmanfm showed 0002…0009,
                // found from outside); a folder touch is no reload to most.
                if shifted >= Self.shiftsBeforeYielding, hasQueuedWork {
                    for (left, _) in pending { touchFolder(left, in: folders) }
                    return
                }
                replay(operation, in: folder, folders: folders)
                shifted += 1
            }
            if script.overBound { touchFolder(folder, in: folders) }
            pending = pending.dropFirst()
        }
    }

    private func replayUrgent(_ step: Step, in folders: ConfinedFolders) {
        switch step {
        case .entries(let folder, let script):
            for operation in script.urgent { replay(operation, in: folder, folders: folders) }
            if script.overBound && script.shifts.isEmpty { touchFolder(folder, in: folders) }
        case .folder(let parent, let parentPath, let name, let entry, let made):
            let place = Place(folder: parentPath.map { Array($0.utf8) }, name: Array(name.utf8))
            if made {
                perform(parent: parent, present: [:], made: entry, invalidating: [place.name], at: place, in: folders) { mkdirat($0, $1, 0o755) }
            } else {
                perform(parent: parent, present: [place.name: entry], invalidating: [place.name], at: place, in: folders) {
                    unlinkat($0, $1, AT_REMOVEDIR)
                }
            }
        case .bundleMade(let item, let type):
            // The kernel takes the answer only if its type is the one the call makes.
            guard let make = Self.making(type) else { return }
            perform(parent: NodeID.bundles, present: [:], madePassthrough: true, invalidating: [item.bytes],
                    at: Place(folder: [Self.bundles], name: item.bytes), in: folders, make)
        case .bundleGone(let item, let entry):
            // Its dentry, if cached, is the one the rmdir removes: not dropped first.
            let flags = entry.attr.st_mode & S_IFMT == S_IFDIR ? AT_REMOVEDIR : 0
            perform(parent: NodeID.bundles, present: [item.bytes: entry], invalidating: [],
                    at: Place(folder: [Self.bundles], name: item.bytes), in: folders) { unlinkat($0, $1, flags) }
        case .touched(let paths):
            for relative in paths {
                let components = relative.split(separator: UInt8(ascii: "/")).map(Array.init)
                guard let name = components.last else { continue }
                touch(Place(folder: [Self.bundles] + components.dropLast(), name: name), in: folders)
            }
        }
    }

    private static let bundles = Array(QueryFilesystem.bundlesName.utf8)

    /// The call that makes an entry of file type `type` (its answer comes
    /// from BACKING): nil for devices, which are never items.
    private static func making(_ type: mode_t) -> ((Int32, UnsafePointer<CChar>) -> Int32)? {
        switch type {
        case S_IFDIR: return { mkdirat($0, $1, 0o755) }
        case S_IFLNK: return { symlinkat("queryfs-replay", $0, $1) }
        case S_IFREG, S_IFIFO, S_IFSOCK: return { mknodat($0, $1, type | 0o644, 0) }
        default: return nil
        }
    }

    private func replay(_ operation: EventScript.Operation, in folder: ViewFolder, folders: ConfinedFolders) {
        let folderPath = folder.path.map { Array($0.utf8) }
        // Names an operation starts from are not dropped from the kernel's
        // cache first: if cached, they are the old state (a lookup of a
        // stale name is answered but never cached). Names it lands on are.
        switch operation {
        case .remove(let name, let record):
            perform(parent: folder.id, present: [name: entry(record, in: folder)], invalidating: [],
                    at: Place(folder: folderPath, name: name), in: folders) { unlinkat($0, $1, 0) }
        case .rename(let from, let to, let record):
            perform(parent: folder.id, present: [from: entry(record, in: folder)], invalidating: [to],
                    at: Place(folder: folderPath, name: from), in: folders) { folderFD, source in
                to.withCString { renameat(folderFD, source, folderFD, $0) }
            }
        case .create(let name, let record) where folder.listing.naming.desktopFile:
            // A desktop entry is a file: made by mknod, whose answer must be one.
            perform(parent: folder.id, present: [:], made: entry(record, in: folder), invalidating: [name],
                    at: Place(folder: folderPath, name: name), in: folders) { mknodat($0, $1, S_IFREG | 0o444, 0) }
        case .create(let name, let record):
            let target = filesystem.linkStyle.target(for: record.name, depth: folder.depth)
            perform(parent: folder.id, present: [:], made: entry(record, in: folder), invalidating: [name],
                    at: Place(folder: folderPath, name: name), in: folders) { symlinkat(target, $0, $1) }
        case .touch(let name, let record):
            perform(parent: folder.id, present: [name: entry(record, in: folder)], invalidating: [],
                    at: Place(folder: folderPath, name: name), in: folders) { utimensat($0, $1, nil, AT_SYMLINK_NOFOLLOW) }
        }
    }

    /// The folder's own IN_ATTRIB: KIO lists a folder again when it gets one.
    private func touchFolder(_ folder: ViewFolder, in folders: ConfinedFolders) {
        let components = folder.path.map { Array($0.utf8) }
        guard let name = components.last else { return }
        touch(Place(folder: Array(components.dropLast()), name: name), in: folders)
    }

    /// `utimensat` of the entry itself (not what a symlink leads to): IN_ATTRIB.
    /// Every lookup on its way is answered as anyone's (no folder of its own).
    private func touch(_ place: Place, in folders: ConfinedFolders) {
        perform(parent: 0, present: [:], invalidating: [], at: place, in: folders) { utimensat($0, $1, nil, AT_SYMLINK_NOFOLLOW) }
    }

    /// Where an operation is made: a name in a folder of the mount, given by
    /// its components below the root (names may be any bytes but `/` and NUL).
    private struct Place {
        let folder: [[UInt8]]
        let name: [UInt8]

        var display: String {
            String(decoding: Array((folder + [name]).joined(separator: [UInt8(ascii: "/")])), as: UTF8.self)
        }
    }

    /// Makes one operation on `place` with the answers the handlers give
    /// this thread meanwhile. Names it works on are first dropped from the
    /// kernel's cache: a watcher's lookup since the change may have cached
    /// the new state there, which would make the kernel refuse the operation
    /// (or skip it) without asking — and raise no event.
    private func perform(parent: UInt64, present: [[UInt8]: fuse_entry_param], made: fuse_entry_param? = nil, madePassthrough: Bool = false,
                         invalidating names: [[UInt8]], at place: Place, in folders: ConfinedFolders,
                         _ operation: (Int32, UnsafePointer<CChar>) -> Int32)
    {
        for name in names { notifications?.invalidateEntry(parent: parent, name: name) }
        answers.expect(ReplayAnswers.Expected(parent: parent, present: present, made: made, madePassthrough: madePassthrough))
        defer { answers.expect(nil) }
        guard !isStopped else { return }
        let failed: Bool
        if let folderFD = folders.folder(place.folder) {
            failed = place.name.withCString { operation(folderFD, $0) } != 0
        } else {
            failed = true
        }
        guard failed else { return }
        let code = errno
        // The mount is going away, or a user's edit got there first: the event is theirs.
        guard code != ENOENT && code != EEXIST && code != ENOTCONN else { return }
        // Once per errno: a folder the daemon may not write (bundles/ of a
        // BACKING it cannot change) would otherwise log every change, and a
        // symbolic link in BACKING on the way (ELOOP) is never followed.
        guard queueLock.withLock({ loggedFailures.insert(code).inserted }) else { return }
        filesystem.catalog.logger.warning("""
            no inotify event for \(place.display): \(String(cString: strerror(code))) \
            (logged once per reason; file managers may need a refresh)
            """)
    }

    private var loggedFailures = Set<Int32>()
    private var isStopped: Bool { queueLock.withLock { stopped } }

    private func entry(_ record: ItemRecord, in folder: ViewFolder) -> fuse_entry_param {
        let id = NodeID.entry(folder: folder.serial, item: record.serial)
        var entry = filesystem.entryParameters(id: id, attributes: filesystem.entryAttributes(id: id, record: record, depth: folder.depth,
                                                                                               desktop: folder.listing.naming.desktopFile),
                                               timeout: filesystem.policy.viewTimeout)
        // Attributes are asked for again: the record replayed may be older than the latest.
        entry.attr_timeout = 0
        return entry
    }

    private var notifications: KernelNotifications? {
        filesystem.session.map { KernelNotifications(session: $0, logger: filesystem.catalog.logger) }
    }
}
