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
        /// Entry operations in a view folder that turn listing `old` into
        /// `new`, then (when over the bound) the folder itself touched.
        /// `old` and `new` are nil for a name typed through the mount,
        /// which no listing has (`EventScript.removing`).
        case entries(folder: ViewFolder, old: ViewListing?, new: ViewListing?, script: EventScript)
        /// A backlog given up (`merged`): the folder's watchers are brought
        /// from what they heard — or, if the replay does not know, `from` —
        /// to its listing by names (`HeardNames`).
        case catchUp(folder: ViewFolder, from: ViewListing?)
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

    /// Ends the thread after the step in progress: the session must outlive
    /// every operation it makes. The connection is released before this
    /// (`FuseSession`), so what the step asks of the mount fails at once;
    /// the wait is bounded all the same.
    func stop() {
        queueLock.withLock { stopped = true; queue.removeAll() }
        wake.wake()
        _ = finished.wait(milliseconds: 10_000)
    }

    func add(_ steps: [Step]) {
        guard !steps.isEmpty else { return }
        queueLock.withLock {
            queue += steps
            var shiftsQueued = 0
            for case .entries(_, _, _, let script) in queue { shiftsQueued += script.shifts.count }
            // A backlog (or its rank shifts past the budget) is one catch-up per folder.
            if queue.count > Self.queuedStepLimit || shiftsQueued > Self.queuedShiftLimit {
                queue = Self.merged(queue, keepingLargeFolders: queue.count <= Self.queuedStepLimit)
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

    /// A backlog as one catch-up per view folder, from the listing its
    /// first queued script started at; typed names' removals kept as they
    /// are. A folder too large to catch up by names keeps, when
    /// `keepingLargeFolders`, its scripts without their rank shifts (the
    /// entries that came, left or changed are still heard), else a touch.
    private static func merged(_ steps: [Step], keepingLargeFolders: Bool) -> [Step] {
        var seen = Set<UInt32>()
        var result: [Step] = []
        for step in steps {
            switch step {
            case .entries(let folder, let old?, let new?, let script)
                where keepingLargeFolders && max(old.count, new.count) > followedEntryLimit:
                result.append(.entries(folder: folder, old: old, new: new, script: script.withoutShifts()))
            case .entries(let folder, let old?, _, _):
                if seen.insert(folder.serial).inserted { result.append(.catchUp(folder: folder, from: old)) }
            case .catchUp(let folder, _):
                if seen.insert(folder.serial).inserted { result.append(step) }
            default: result.append(step)
            }
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
    /// that came, left or changed — then the rank shifts, given up as soon
    /// as newer changes are queued: those matter more. A folder whose
    /// script was given up is brought up to date by names later
    /// (`catchUp`), so that what its watchers hear always adds up.
    private func replay(_ steps: [Step]) {
        // Nothing is done when the mount point no longer leads to this mount.
        _ = root.withRoot { rootFD in
            let folders = ConfinedFolders(root: rootFD)
            defer { folders.close() }
            replay(steps, in: folders)
        }
    }

    /// One folder's scripts in this batch, in order, and how far they got.
    private final class FolderWork {
        struct Script {
            let old: ViewListing
            let new: ViewListing
            let operations: [EventScript.Operation]
            let urgentCount: Int
            let overBound: Bool
        }

        let folder: ViewFolder
        var scripts: [Script] = []
        var script = 0
        var operation = 0

        init(_ folder: ViewFolder) { self.folder = folder }

        var isDone: Bool { script >= scripts.count }
    }

    /// What watchers of each view folder heard last (this thread only): the
    /// listing the last script replayed whole led to, or nil when unknown (a
    /// script over the bound left stale ranks; a folder too large to follow by names).
    private var announced: [UInt32: ViewListing] = [:]
    /// Folders whose watchers are behind (this thread only): the names they heard.
    private var behind: [UInt32: (folder: ViewFolder, heard: HeardNames)] = [:]
    /// The largest listing followed by names when behind: a name table of it
    /// lives only until the catch-up (about 0.5 MB at this size); larger
    /// folders are touched instead, as over the bound.
    static let followedEntryLimit = 4096
    /// Operations made in this batch (rank shifts and catch-ups): past
    /// `shiftsBeforeYielding`, queued work cuts the rest short.
    private var madeInBatch = 0

    private func replay(_ steps: [Step], in folders: ConfinedFolders) {
        madeInBatch = 0
        var work: [FolderWork] = []
        var workBySerial: [UInt32: FolderWork] = [:]
        for step in steps {
            switch step {
            case .entries(let folder, let old?, let new?, let script):
                if behind[folder.serial] != nil { continue }   // its catch-up covers this
                if let existing = workBySerial[folder.serial] {
                    existing.scripts.append(Self.script(old: old, new: new, script))
                } else if let started = start(folder, old: old, new: new) {
                    let folderWork = FolderWork(folder)
                    if started { folderWork.scripts.append(Self.script(old: old, new: new, script)) }
                    work.append(folderWork)
                    workBySerial[folder.serial] = folderWork
                }
            case .entries(let folder, _, _, let script):
                // A typed name: no listing has it, so it goes now, whatever else waits.
                for operation in script.operations { replay(operation, in: folder, folders: folders) }
                behind[folder.serial]?.heard.apply(script.operations)
            case .catchUp(let folder, let from):
                fallBehind(folder, from: from)
                workBySerial[folder.serial]?.scripts.removeAll()
                // Not followed by names (too large, or nothing known): a touch stands for the backlog.
                if behind[folder.serial] == nil { touchFolder(folder, in: folders) }
            case .folder:
                replayUrgent(step, in: folders)
                forgetRemovedFolders()
            default:
                replayUrgent(step, in: folders)
            }
        }
        // The first script's urgent operations in every folder, then the rest in order.
        for folderWork in work { replayNext(folderWork, urgentOnly: true, in: folders) }
        for folderWork in work where !folderWork.isDone {
            guard replayNext(folderWork, urgentOnly: false, in: folders) else {
                for left in work where !left.isDone { giveUp(left, in: folders) }
                return
            }
        }
        for serial in behind.keys.sorted() {
            guard catchUp(serial, in: folders) else { return }
        }
    }

    /// Whether a script from `old` to `new` replays as made (true), is
    /// already announced (false), or the folder is behind (nil: its catch-up covers it).
    private func start(_ folder: ViewFolder, old: ViewListing, new: ViewListing) -> Bool? {
        if behind[folder.serial] != nil { return nil }
        guard let heard = announced[folder.serial], heard !== old else { return true }
        if heard === new { return false }
        fallBehind(folder, from: heard)
        return behind[folder.serial] == nil ? true : nil
    }

    private static func script(old: ViewListing, new: ViewListing, _ script: EventScript) -> FolderWork.Script {
        FolderWork.Script(old: old, new: new, operations: script.operations, urgentCount: script.urgent.count, overBound: script.overBound)
    }

    /// Replays the folder's scripts from where they got to: the urgent part
    /// of the current one only, or everything, stopping (false) when newer
    /// work is queued and this batch made enough operations.
    @discardableResult
    private func replayNext(_ work: FolderWork, urgentOnly: Bool, in folders: ConfinedFolders) -> Bool {
        while !work.isDone {
            let script = work.scripts[work.script]
            let end = urgentOnly ? script.urgentCount : script.operations.count
            while work.operation < end {
                if !urgentOnly, madeInBatch >= Self.shiftsBeforeYielding, hasQueuedWork { return false }
                replay(script.operations[work.operation], in: work.folder, folders: folders)
                work.operation += 1
                if !urgentOnly { madeInBatch += 1 }
            }
            if urgentOnly && work.operation < script.operations.count { return true }
            if script.overBound { touchFolder(work.folder, in: folders) }
            announced[work.folder.serial] = script.overBound ? nil : script.new
            (work.script, work.operation) = (work.script + 1, 0)
            if urgentOnly { return true }
        }
        return true
    }

    /// Newer work came: what the folder's watchers heard so far is kept by
    /// names, for its catch-up (a folder too large to follow is touched).
    private func giveUp(_ work: FolderWork, in folders: ConfinedFolders) {
        let script = work.scripts[work.script]
        announced[work.folder.serial] = nil
        guard !script.overBound, script.old.count <= Self.followedEntryLimit, script.new.count <= Self.followedEntryLimit else {
            touchFolder(work.folder, in: folders)
            return
        }
        var heard = HeardNames(script.old)
        heard.apply(script.operations[..<work.operation])
        behind[work.folder.serial] = (work.folder, heard)
    }

    /// Marks `folder` behind, its watchers having heard what the replay
    /// announced last or else `from`; nothing when neither is known or the
    /// folder is too large to follow (then it is touched at its catch-up's place).
    private func fallBehind(_ folder: ViewFolder, from: ViewListing?) {
        guard behind[folder.serial] == nil else { return }
        let heard = announced.removeValue(forKey: folder.serial) ?? from
        guard let heard, heard.count <= Self.followedEntryLimit else { return }
        behind[folder.serial] = (folder, HeardNames(heard))
    }

    /// Drops what was announced in folders a reload removed.
    private func forgetRemovedFolders() {
        for serial in Array(announced.keys) where filesystem.folders.folder(serial: serial) == nil { announced[serial] = nil }
    }

    /// Brings a folder's watchers from what they heard to its listing now;
    /// false when newer work cut it short (what was made is kept).
    private func catchUp(_ serial: UInt32, in folders: ConfinedFolders) -> Bool {
        guard let state = behind[serial] else { return true }
        let folder = state.folder
        var heard = state.heard
        let listing = folder.listing
        guard filesystem.folders.folder(serial: serial) === folder, listing.count <= Self.followedEntryLimit else {
            // Gone (its removal was heard), or grown past following: a touch stands for the rest.
            behind[serial] = nil
            if filesystem.folders.folder(serial: serial) === folder { touchFolder(folder, in: folders) }
            return true
        }
        let operations = heard.operations(to: listing)
        for (made, operation) in operations.enumerated() {
            if madeInBatch >= Self.shiftsBeforeYielding, hasQueuedWork {
                heard.apply(operations[..<made])
                behind[serial] = (folder, heard)
                return false
            }
            noteShown(operation, in: listing)
            replay(operation, in: folder, folders: folders)
            madeInBatch += 1
        }
        behind[serial] = nil
        announced[serial] = listing
        return true
    }

    /// The name an operation gives the kernel, noted as shown by the listing (see `KernelCacheInvalidator.replayStep`).
    private func noteShown(_ operation: EventScript.Operation, in listing: ViewListing) {
        switch operation {
        case .create(let name, _), .rename(_, let name, _), .touch(let name, _):
            if let index = name.withUnsafeBufferPointer({ listing.index(ofEntryNamed: $0) }) { listing.noteShown(index..<index + 1) }
        case .remove: break
        }
    }

    private func replayUrgent(_ step: Step, in folders: ConfinedFolders) {
        switch step {
        case .entries, .catchUp:
            break   // `replay(_:in:)` takes these
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
        // (ECONNABORTED: the daemon's own shutdown aborted the connection under it.)
        guard code != ENOENT && code != EEXIST && code != ENOTCONN && code != ECONNABORTED,
              filesystem.kernelConnected.load(ordering: .acquiring) else { return }
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
