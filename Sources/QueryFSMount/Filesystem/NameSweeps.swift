#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Logging
import QueryFSEngine
import QueryFSCollection

/// The names of shifted entries that now mean another item, found by
/// comparing listings off the watcher thread and handed to the name thread
/// (`NameInvalidations`) to drop.
///
/// When an item moves across a large view, every entry in between gets
/// another rank. A name that only lost its rank is left to the kernel (it
/// still leads to its item); one that now means another item (same rank,
/// same title) must go. Finding those is a comparison of every shifted
/// entry — a tenth of a second per million — so it runs here, a chunk at a
/// time, on a thread of the idle scheduling class (SCHED_IDLE): the
/// watcher, the request handlers and the name thread go first, and a CPU
/// running only a sweep counts as idle when one of them wakes. SCHED_IDLE
/// is a tiny share, not none, so a sweep ends on a busy machine too. The
/// names it finds are dropped by the name thread, at normal priority:
/// dropping a name locks its folder in the kernel, and a lookup there must
/// not wait for an idle-class thread preempted while it holds that lock.
final class NameSweeps: @unchecked Sendable {
    /// A folder's names that may now mean another item: those of each
    /// listing in `comparisons` whose entry in `newest`, at the same index,
    /// has the same name but is another item.
    struct Sweep {
        let folder: UInt64
        var newest: ViewListing
        var comparisons: [Comparison]
        /// Whether a chunk was taken: from then on it takes no more changes
        /// (the next change of the folder queues a sweep behind it, which
        /// takes the changes that come while this one runs). Merged into
        /// after it started, a sweep went back to its first entries at
        /// every change of a burst (a create every 20 ms at 1,000,000
        /// items), comparing them again and dropping their names again.
        var started = false
    }

    /// One listing whose names the kernel may hold, compared with the sweep's newest.
    struct Comparison {
        let listing: ViewListing
        /// Where the kernel may hold its names: every index for the listing
        /// a sweep starts from (names the kernel kept from earlier listings
        /// too), the shown ones (`ViewListing.shown`) for a listing merged over.
        let shown: Range<Int>
        /// The indices still to compare.
        var remaining: Range<Int>
    }

    /// What the sweeps did since the mount (the status file's `nameSweeps`).
    struct Counts {
        var queued = 0
        /// Queued sweeps folded into a pending one of the same folder.
        var merged = 0
        var compared = 0
        var dropped = 0
        var pending = 0
    }

    private let queue = QueueThread<Void>(named: "queryfs-sweep")
    private let lock = PlainLock()
    private var pendingSweeps: [Sweep] = []
    private var counts = Counts()
    private let logger: Logger
    /// Where the names found go: the name thread (`NameInvalidations.add`).
    private let drop: @Sendable (_ folder: UInt64, _ names: [[UInt8]]) -> Void
    /// Entries compared between two looks at the queue (how soon `stop` is heard).
    static let chunkSize = 4096

    init(logger: Logger, drop: @escaping @Sendable (_ folder: UInt64, _ names: [[UInt8]]) -> Void) {
        self.logger = logger
        self.drop = drop
    }

    /// Starts the sweep thread (once the mount is live).
    func start() {
        let logger = self.logger
        queue.start(prepare: {
            if qfs_run_thread_when_idle() != 0 {
                logger.notice("name sweeps run at normal priority: sched_setscheduler: \(String(cString: strerror(errno)))")
            }
        }) { [self] _ in
            sweepPending()
        }
    }

    /// Queues a sweep of `range`: the entries of `old` whose name `new`
    /// gives to another item. A sweep of the same folder still pending from
    /// the listing before is extended instead, so a burst of changes to a
    /// million-entry view is compared once against the newest listing, not
    /// once per change (a core busy for minutes after 400 changes at
    /// 1,000,000 items). What that must still compare:
    /// - names from the sweep's first listing, wherever either step shifted
    ///   entries (a name the first step left alone may now mean another item);
    /// - names the kernel was given from a listing in between (`shown`),
    ///   where the new step shifted entries.
    /// A sweep that has started takes no more changes (`Sweep.started`):
    /// the change queues a sweep of its own behind it.
    func sweep(folder: UInt64, old: ViewListing, new: ViewListing, range: Range<Int>) {
        // Other widths: every rank is written differently, so no old name survives.
        guard !range.isEmpty, old.width == new.width else { return }
        lock.withLock {
            counts.queued += 1
            if let last = pendingSweeps.lastIndex(where: { $0.folder == folder }), pendingSweeps[last].newest === old,
               !pendingSweeps[last].started, old.naming == new.naming,
               pendingSweeps[last].comparisons.count < Self.mergedListingLimit
            {
                var merged = pendingSweeps[last]
                for index in merged.comparisons.indices {
                    let widened = merged.comparisons[index].shown.clamped(to: range)
                    merged.comparisons[index].remaining = merged.comparisons[index].remaining.hull(widened)
                }
                if let shown = old.shown { merged.comparisons.append(Comparison(listing: old, shown: shown, remaining: shown.clamped(to: range))) }
                merged.newest = new
                pendingSweeps[last] = merged
                counts.merged += 1
            } else {
                pendingSweeps.append(Sweep(folder: folder, newest: new,
                                           comparisons: [Comparison(listing: old, shown: 0..<old.count, remaining: range)]))
            }
            counts.pending = pendingSweeps.count
        }
        queue.add(())
    }

    /// Past this many listings in one sweep, a new one is queued instead.
    static let mergedListingLimit = 64

    var sweepCounts: Counts { lock.withLock { counts } }

    /// One chunk of a sweep: indices of `listing` to compare with `newest`.
    private struct Chunk {
        let folder: UInt64
        let listing: ViewListing
        let newest: ViewListing
        let indices: Range<Int>
    }

    /// Takes the next chunk of the oldest sweep, removing the sweep once
    /// every chunk is taken (a change queued after that starts a new one).
    private func takeChunk() -> Chunk? {
        lock.withLock {
            defer { counts.pending = pendingSweeps.count }
            while var sweep = pendingSweeps.first {
                guard let index = sweep.comparisons.firstIndex(where: { !$0.remaining.isEmpty }) else {
                    pendingSweeps.removeFirst()
                    continue
                }
                let comparison = sweep.comparisons[index]
                let indices = comparison.remaining.prefix(Self.chunkSize)
                sweep.comparisons[index].remaining = indices.upperBound..<comparison.remaining.upperBound
                sweep.started = true
                if sweep.comparisons.allSatisfy({ $0.remaining.isEmpty }) { pendingSweeps.removeFirst() } else { pendingSweeps[0] = sweep }
                return Chunk(folder: sweep.folder, listing: comparison.listing, newest: sweep.newest, indices: indices)
            }
            return nil
        }
    }

    /// Compares every sweep queued, chunk by chunk (the thread; tests call it directly).
    func sweepPending() {
        while let chunk = takeChunk() { compare(chunk) }
    }

    /// Hands the name thread the names of `chunk` that now mean another item.
    private func compare(_ chunk: Chunk) {
        let indices = chunk.indices.clamped(to: 0..<min(chunk.listing.count, chunk.newest.count))
        var stale: [[UInt8]] = []
        if !indices.isEmpty {
            let olds = chunk.listing.records.records(in: indices), news = chunk.newest.records.records(in: indices)
            for (offset, (before, after)) in zip(olds, news).enumerated() {
                guard before !== after, before.name != after.name,
                      before.hasSameEntryTitle(as: after, naming: chunk.listing.naming) else { continue }
                stale.append(chunk.listing.name(at: indices.lowerBound + offset))
            }
        }
        if !stale.isEmpty { drop(chunk.folder, stale) }
        lock.withLock {
            counts.compared += indices.count
            counts.dropped += stale.count
        }
    }

    /// Ends the thread after the chunk under way (what is left is dropped:
    /// the mount is going), and waits for it (at most a second).
    func stop() {
        lock.withLock { pendingSweeps.removeAll() }
        queue.stop()
    }
}
