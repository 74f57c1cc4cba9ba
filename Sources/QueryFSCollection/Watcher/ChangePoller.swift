#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import QueryFSEngine

/// Finds the changes no notification reports, by comparing stamps
/// (`ItemStamp`: a stat of every file and folder of an item, nothing read):
/// bundles the inotify watch limit left unwatched; every item, and the
/// listing of BACKING itself, when BACKING could not be watched; and single
/// files (the configuration) whose folder could not be watched.
///
/// Its cost is bounded, not its latency: it works at most `share` of one
/// core — after each slice of work it sleeps long enough to keep to that
/// share — and starts a round at most every `interval` seconds. A change is
/// seen within one round: `interval`, or the stat walk of every polled item
/// divided by `share`, whichever is longer (at 100,000 polled bundles and
/// the default 10 %, about ten seconds here).
///
/// On a network filesystem (`deepEvery` > 1) rounds are mostly quick:
/// BACKING's listing only when its own times moved (items made, removed,
/// renamed), and per item one stat, its payload's (`Scanner.quickStamp`:
/// saved by rename or in place). A different `deepEvery`-th of the items
/// gets the full stamp walk each round, for what only it sees (a file added
/// or replaced inside a bundle, attribute tags): spread so, no round is
/// ever a full walk of everything, which at 100,000 items over a network
/// held every quick check back for two minutes (`poll-bench.sh`).
final class ChangePoller: @unchecked Sendable {
    struct Settings: Sendable {
        /// The share of one core the poller may use.
        var share = 0.1
        /// The shortest time between the starts of two rounds, in seconds.
        var interval = 2.0
        /// How much work is done before the poller sleeps to keep its share.
        var slice = 0.02
        /// Every how many rounds the full stamp walk is done (1: every round).
        var deepEvery = 1
    }

    private struct State {
        /// Polled items and their last stamp (nil: not seen yet, or gone).
        var items: [ItemName: ItemStamp?] = [:]
        /// Their last quick stamp (`Scanner.quickStamp`), once a quick round saw them.
        var quick: [ItemName: ItemStamp?] = [:]
        /// When an item's quick stamp was let go to be taken afresh after a
        /// read (`settledSince`): a first quick stamp changed since then is a change.
        var quickDroppedAt: [ItemName: Int64] = [:]
        /// Items last seen within a clock tick of a change (`ItemStamp.isSettled`):
        /// a second change in that tick would leave the same stamp, so they
        /// are read again once their times have settled.
        var unsettled = Set<ItemName>()
        /// BACKING's own status when its listing was last read (quick rounds skip an unchanged listing).
        var listingStamp: FileStamp?
        /// Whether BACKING's own listing is polled, and the names it held.
        var pollsListing = false
        var listed = Set<ItemName>()
        /// Single files polled, by path, with their last status.
        var files: [String: FileStamp?] = [:]
    }

    /// What a file looked like: enough to tell it was written or replaced.
    struct FileStamp: Equatable {
        var inode: UInt64, size: Int64, mtime: timespec, ctime: timespec
        static func == (a: FileStamp, b: FileStamp) -> Bool {
            a.inode == b.inode && a.size == b.size && a.mtime.tv_sec == b.mtime.tv_sec && a.mtime.tv_nsec == b.mtime.tv_nsec
                && a.ctime.tv_sec == b.ctime.tv_sec && a.ctime.tv_nsec == b.ctime.tv_nsec
        }

        init?(path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            mtime = status.st_mtim
            ctime = status.st_ctim
        }
    }

    /// What the rounds found since the last `takeFound`.
    struct Found: Sendable {
        var items = Set<ItemName>()
        var files = Set<String>()
        var isEmpty: Bool { items.isEmpty && files.isEmpty }
    }

    private let root: BackingDirectory
    let settings: Settings

    /// On a network filesystem: seconds between rounds (`--poll`), and every
    /// how many rounds one is a full stamp walk.
    static let networkInterval = 5.0
    static let deepRoundEvery = 6
    private let state = Mutex(State())
    private let found = Mutex(Found())
    /// Tells the catalog that something was found.
    private let onFound: @Sendable () -> Void
    private let stopSignal: WakeSignal
    private let running = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Stats only: no field source plays a part in a stamp, but the
    /// collection's shape does (its payload file names, its sidecars).
    private let scanner: Scanner

    /// Where a failed listing is said (once until a listing works again).
    private let logger: Logger
    private let listingFailed = Atomic<Bool>(false)
    /// When following began: before the scan read anything (the catalog
    /// follows first, then scans).
    private let followingSince = realtimeNanoseconds()

    init(root: BackingDirectory, settings: Settings = Settings(), logger: Logger = .discarding,
         onFound: @escaping @Sendable () -> Void) throws(SystemError) {
        self.root = root
        self.settings = settings
        self.logger = logger
        self.onFound = onFound
        var shape = FieldSources()
        (shape.recursive, shape.payloadNames, shape.sidecars) = (root.recursive, root.payloadNames, root.sidecars)
        scanner = Scanner(sources: shape)
        stopSignal = try WakeSignal()
    }

    /// Whether anything is polled at all.
    var isPolling: Bool { state.withLock { !$0.items.isEmpty || $0.pollsListing || !$0.files.isEmpty } }

    var polledItemCount: Int { state.withLock { $0.items.count } }

    /// Whether BACKING's listing is polled.
    var isPollingListing: Bool { state.withLock { $0.pollsListing } }

    /// Polls `name` from now on; `stamp` is what it looked like when last
    /// read (nil: unknown, so the first round reports it once).
    /// `settled` false: the read may have missed a change in the same clock tick (`unsettled`).
    func poll(_ name: ItemName, stamp: ItemStamp?, settled: Bool = true) {
        state.withLock {
            $0.items[name] = .some(stamp)
            if settled { $0.unsettled.remove(name) } else { $0.unsettled.insert(name) }
        }
        startIfNeeded()
    }

    func stopPolling(_ name: ItemName) {
        state.withLock {
            _ = $0.items.removeValue(forKey: name)
            _ = $0.quick.removeValue(forKey: name)
            _ = $0.quickDroppedAt.removeValue(forKey: name)
            $0.unsettled.remove(name)
        }
    }

    func isPolling(_ name: ItemName) -> Bool { state.withLock { $0.items[name] != nil } }

    /// Polls BACKING's listing too (it could not be watched): names that
    /// appear are reported and polled from then on, names that go reported.
    func pollListing(knownNames: Set<ItemName>) {
        state.withLock {
            $0.pollsListing = true
            $0.listed = knownNames
        }
        startIfNeeded()
    }

    /// Polls the file at `path` (reported by path when it changes).
    func pollFile(_ path: String) {
        state.withLock { $0.files[path] = .some(FileStamp(path: path)) }
        startIfNeeded()
    }

    func takeFound() -> Found {
        found.withLock { found in defer { found = Found() }; return found }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        stopSignal.wake()
    }

    private func startIfNeeded() {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        startThread(named: "queryfs-poller") { [self] in
            while !stopping.load(ordering: .relaxed) {
                let start = monotonicSeconds()
                round()
                completedRounds.add(1, ordering: .releasing)
                let left = settings.interval - (monotonicSeconds() - start)
                if left > 0 { sleep(left) }
            }
        }
    }

    /// Waits `seconds`, or less if stopped.
    private func sleep(_ seconds: Double) {
        _ = stopSignal.wait(milliseconds: Int32(min(Double(Int32.max), seconds * 1000).rounded(.up)))
        stopSignal.drain()
    }

    /// Work done since the last pause, and the pause that keeps the share.
    private var slice = 0.0

    private func account(since start: Double) {
        slice += monotonicSeconds() - start
        guard slice >= settings.slice else { return }
        sleep(slice * (1 - settings.share) / settings.share)
        slice = 0
    }

    private var rounds = 0
    /// Rounds done to the end: what a caller waits for to know a round has
    /// looked at everything it was asked to poll before some moment.
    package let completedRounds = Atomic<Int>(0)

    private func round() {
        rounds += 1
        // Every deepEvery-th round the listing is read even if BACKING's own times stand.
        let readListingAnyway = settings.deepEvery <= 1 || rounds % settings.deepEvery == 0
        var discovered = Found()
        let (pollsListing, files) = state.withLock { ($0.pollsListing, $0.files) }
        if pollsListing { pollListing(into: &discovered, evenIfUnchanged: readListingAnyway) }
        for (path, old) in files {
            let new = FileStamp(path: path)
            if new != old {
                discovered.files.insert(path)
                state.withLock { $0.files[path] = .some(new) }
            }
        }
        report(discovered)
        discovered = Found()
        let names = state.withLock { Array($0.items.keys) }
        for name in names {
            if stopping.load(ordering: .relaxed) { return }
            let start = monotonicSeconds()
            // The same sixth every time for a given name, whatever the table's order does meanwhile.
            let slot = Int(UInt(bitPattern: name.hashValue) % UInt(max(1, settings.deepEvery)))
            let full = settings.deepEvery <= 1 || (slot + rounds) % settings.deepEvery == 0
            let changed = settledSince(name) || (full ? deepCheck(name) : quickCheck(name))
            if changed { discovered.items.insert(name) }
            account(since: start)
            // Report as we go: a change early in a long round need not wait for its end.
            if discovered.items.count >= 256 {
                report(discovered)
                discovered = Found()
            }
        }
        report(discovered)
    }

    /// Whether `name` was unsettled and has settled since: read it again now.
    private func settledSince(_ name: ItemName) -> Bool {
        guard state.withLock({ $0.unsettled.contains(name) }) else { return false }
        guard scanner.stamp(named: name, in: root.fd)?.isSettled(at: realtimeNanoseconds()) ?? true else { return false }
        return state.withLock { state in
            guard state.unsettled.remove(name) != nil, state.items[name] != nil else { return false }
            state.quick[name] = nil  // taken afresh after the read
            state.quickDroppedAt[name] = realtimeNanoseconds()
            return true
        }
    }

    /// The full stamp of `name` against the last one; whether it changed.
    private func deepCheck(_ name: ItemName) -> Bool {
        // The quick stamp first: a change landing during this check (a
        // payload renamed over while the item is read) still differs from it
        // at the next quick round, so it is read again then.
        let quick = settings.deepEvery > 1 ? scanner.quickStamp(named: name, in: root.fd) : nil
        let stamp = scanner.stamp(named: name, in: root.fd)
        let now = realtimeNanoseconds()
        return state.withLock { state in
            guard let old = state.items[name] else { return false }  // no longer polled
            state.items[name] = .some(stamp)
            let changed = old == nil || old != stamp
            if changed, settings.deepEvery > 1 { state.quick[name] = .some(quick) }
            if let stamp, !stamp.isSettled(at: now) { state.unsettled.insert(name) }
            return changed
        }
    }

    /// The quick stamp of `name` against the last one; whether it changed.
    /// The first one seen is the baseline — a change unless its file changed
    /// before the item was last read (before following began, or before the
    /// read that let the last baseline go): a change made between that read
    /// and this first quick round would otherwise wait for a deep round
    /// (up to `deepEvery` rounds: 15–25 s seen on a bindfs mount).
    private func quickCheck(_ name: ItemName) -> Bool {
        let quick = scanner.quickStamp(named: name, in: root.fd)
        let now = realtimeNanoseconds()
        return state.withLock { state in
            guard state.items[name] != nil else { return false }  // no longer polled
            defer { state.quick[name] = .some(quick) }
            if let quick, !quick.isSettled(at: now) { state.unsettled.insert(name) }
            guard let old = state.quick[name] else {
                let since = state.quickDroppedAt.removeValue(forKey: name) ?? followingSince
                // A time ahead of this clock (a server's running fast) says nothing either way.
                guard let quick, quick.newestChange <= now else { return false }
                return quick.mayHaveChanged(since: since)
            }
            return old != quick
        }
    }

    /// `evenIfUnchanged` false: skipped while BACKING's own times say no name came or went.
    private func pollListing(into discovered: inout Found, evenIfUnchanged: Bool = true) {
        let start = monotonicSeconds()
        let listingStamp = FileStamp(path: root.path)
        if !evenIfUnchanged, let listingStamp, state.withLock({ $0.listingStamp == listingStamp }) { return }
        let names: [ItemName]
        do {
            names = try root.itemNames()
            if listingFailed.exchange(false, ordering: .relaxed) { logger.notice("polling: \(root.path) can be listed again") }
        } catch {
            // A network filesystem's passing fault (EIO, a timeout) or BACKING
            // gone (the watcher says so too): said once, tried again next round.
            if !listingFailed.exchange(true, ordering: .relaxed) {
                logger.warning("polling: cannot list \(root.path) (\(error)): items made or removed there show once it can be listed again")
            }
            return
        }
        state.withLock { $0.listingStamp = listingStamp }
        let current = Set(names)
        let (appeared, gone): ([ItemName], [ItemName]) = state.withLock { state in
            let appeared = current.subtracting(state.listed)
            let gone = state.listed.subtracting(current)
            state.listed = current
            for name in appeared where state.items[name] == nil { state.items[name] = .some(nil) }
            return (Array(appeared), Array(gone))
        }
        discovered.items.formUnion(appeared)
        discovered.items.formUnion(gone)
        account(since: start)
    }

    private func report(_ discovered: Found) {
        guard !discovered.isEmpty else { return }
        found.withLock {
            $0.items.formUnion(discovered.items)
            $0.files.formUnion(discovered.files)
        }
        onFound()
    }
}
