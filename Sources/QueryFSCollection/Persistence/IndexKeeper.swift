#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import QueryFSEngine

/// A mount's side of its index file: it holds the index's lock for the
/// mount's life, appends each applied batch to the journal, rewrites the
/// whole file when the journal has outgrown the snapshot, and writes a last
/// snapshot at unmount. All file work runs on a thread of its own, so the
/// watcher never waits on the disk; the order of the queue is the order of
/// the changes. A write that fails removes the index (so nothing trusts a
/// file that stopped following) and the mount keeps none from then on.
final class IndexKeeper: @unchecked Sendable {
    enum Task {
        case append([IndexFile.Record])
        /// Rewrite the whole file from the catalog's current items.
        case snapshot
        /// The same, at unmount, when the journal holds changes.
        case close
        /// Items are read with other field sources or ignore patterns from now on.
        case reading(FieldSources, [String])
        /// What is queued before this is written: the lock says "mount PID".
        case current
    }

    let location: IndexLocation
    private let lock: IndexLock
    private var identity: IndexFile.Identity
    private let queue = QueueThread<Task>(named: "queryfs-index")
    private let logger: Logger
    /// The catalog's items and their stamps, and its views' members, read
    /// under its lock at one moment (on the keeper's thread).
    private let currentState: @Sendable () -> (records: [ItemRecord], views: LiveIndex.ViewListings)
    private var journalFD: Int32 = -1
    private var bodyBytes: Int
    private var journalBytes: Int
    private let failed = Atomic<Bool>(false)
    /// Whether the journal holds changes a last snapshot would fold in.
    private var journalHasChanges = false

    /// `contents`: the index as loaded, nil when there was none to use. A
    /// snapshot is then written first, before any journal record; also
    /// when the journal ends in a torn record (appended records would sit
    /// behind it, unread) or the file was written another way (an index
    /// keeping more payload keys than this mount reads).
    init(location: IndexLocation, lock: IndexLock, identity: IndexFile.Identity, loaded contents: IndexFile.Contents?,
         logger: Logger,
         currentState: @escaping @Sendable () -> (records: [ItemRecord], views: LiveIndex.ViewListings))
    {
        self.location = location
        self.lock = lock
        self.identity = identity
        bodyBytes = contents?.bodyBytes ?? 0
        journalBytes = contents?.journalBytes ?? 0
        self.logger = logger
        self.currentState = currentState
        queue.start { [self] tasks in
            for task in tasks where !failed.load(ordering: .relaxed) { run(task) }
        }
        if contents == nil || contents?.tornJournal == true || contents?.identity != identity { queue.add(.snapshot) }
    }

    /// Tells readers that the index is current (the lock says "mount PID"),
    /// once everything queued so far is in the file.
    func markCurrent() { queue.add(.current) }

    private func setOwner(_ owner: String) {
        do {
            try lock.setOwner(owner)
        } catch {
            logger.warning("index \(location.path).lock: \(error.operation): \(error.message); commands will compare stamps rather than trust it")
        }
    }

    /// Writes a snapshot, with the views' orders as they are now, once
    /// what is queued so far is in the file.
    func storeViewOrders() { queue.add(.snapshot) }

    /// Whether the keeper still follows (no write has failed).
    var isKeeping: Bool { !failed.load(ordering: .relaxed) }

    func append(_ records: [IndexFile.Record]) {
        guard !records.isEmpty else { return }
        queue.add(.append(records))
    }

    /// Items are read with these field sources and ignore patterns from now on (a reloaded configuration).
    func setReading(sources: FieldSources, ignorePatterns: [String]) { queue.add(.reading(sources, ignorePatterns)) }

    /// Drains the queue, writes the last snapshot if the journal holds
    /// changes, and lets go of the lock.
    func close() {
        // A mount started right after this unmount waits for "closing", rather than keeping no index.
        setOwner("closing \(getpid())")
        queue.add(.close)
        guard queue.stop(waitingUpTo: 120) else {
            return logger.warning("index \(location.path): the last snapshot took over 120 s; left to the next start's comparison")
        }
        if journalFD >= 0 { Glibc.close(journalFD) }
        journalFD = -1
        setOwner("")
    }

    private func run(_ task: Task) {
        switch task {
        case .append(let records):
            guard !records.isEmpty else { return }
            journalHasChanges = true
            write(IndexFile.journal(records))
            // Replaying a journal costs as much as decoding as many items: past the snapshot's size, fold it in.
            if journalBytes > max(bodyBytes, 4 << 20) { rewrite() }
        case .snapshot: rewrite()
        case .close: if journalHasChanges { rewrite() }
        case .current: setOwner("mount \(getpid())")
        case .reading(let sources, let patterns):
            guard sources != identity.sources || patterns != identity.ignorePatterns else { return }
            identity.sources = sources
            identity.ignorePatterns = patterns
            rewrite()
        }
    }

    private func write(_ bytes: [UInt8]) {
        if journalFD < 0 {
            journalFD = open(location.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
            guard journalFD >= 0 else { return fail(SystemError.current("open", path: location.path)) }
        }
        do {
            try writeAll(bytes, to: journalFD, path: location.path)
        } catch {
            return fail(error)
        }
        journalBytes += bytes.count
    }

    /// The whole file again, from the catalog's items.
    private func rewrite() {
        // Each record's item is rebuilt as it is written, not all at once:
        // a copy of every item would cost the daemon about 600 bytes per item.
        let written: Int
        // A scope of its own: the file's bytes and the copy of the records
        // are freed at its end, before the trim below (a local lives until
        // some point after its last use, maybe past the trim).
        do {
            let (records, views) = currentState()
            let bytes = IndexFile.snapshot(records.lazy.map { IndexedItem(item: $0.item, stamp: $0.stamp) }, identity: identity,
                                           viewOrders: StoredViewOrders(records: records, listings: views))
            do {
                try IndexFile.replace(at: location, with: bytes)
            } catch {
                return fail(error)
            }
            written = bytes.count
        }
        if journalFD >= 0 { Glibc.close(journalFD) }
        journalFD = -1
        bodyBytes = written
        journalBytes = 0
        journalHasChanges = false
        // The file's bytes, freed on this thread's arena.
        MemoryTrim.returnFreedMemory()
    }

    private func fail(_ error: SystemError) {
        guard !failed.exchange(true, ordering: .relaxed) else { return }
        // First the lock: no command may trust the file from now on, even if it cannot be removed.
        setOwner("failed \(getpid())")
        if journalFD >= 0 { Glibc.close(journalFD) }
        journalFD = -1
        let removed = unlink(location.path) == 0 || errno == ENOENT
        let fate = removed ? "removed" : "left (unlink: \(String(cString: strerror(errno))))"
        logger.warning("index \(location.path): \(error.operation): \(error.message); \(fate), and this mount keeps no index from now on")
    }
}
