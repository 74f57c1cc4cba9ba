#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A backing directory kept indexed as it changes: an initial scan, then
/// inotify events coalesced per item, each burst re-reading only the items
/// it touched and updating every view through the `LiveIndex`. Subscribers
/// get each batch of view changes on the watcher's thread.
public final class LiveCatalog: @unchecked Sendable {
    public struct Timing: Sendable {
        /// A burst is over once no event came for this long.
        public var quietMilliseconds: Int32 = 5
        /// …or once this long has passed since its first event.
        public var maximumDelayMilliseconds: Double = 40
        /// An item the mount is writing is read once it has been left alone
        /// this long (so the index does not read it between every two writes,
        /// nor hold its lock while the writer waits)…
        public var writerQuietSeconds: Double = 0.005
        /// …or once it has waited this long.
        public var writerMaximumDelaySeconds: Double = 0.1
        /// How often bundles that could not be watched are rescanned.
        public var unwatchedRescanMilliseconds: Int32 = 2000
        /// Views with relative ages (`modified>7d`) are evaluated again every
        /// hundredth of their shortest age, within these bounds.
        public var ageRecountSeconds: ClosedRange<Double> = 60...3600
        public init() {}

        func ageRecountPeriod(shortestAge: Double) -> Double {
            min(ageRecountSeconds.upperBound, max(ageRecountSeconds.lowerBound, shortestAge / 100))
        }
    }

    public let backing: BackingDirectory
    /// Reads items; its field sources change when the configuration is
    /// reloaded (under the index lock, on the watcher's thread).
    public private(set) var scanner: Scanner
    /// Names the configuration says are not items (ignore patterns).
    private var ignored: @Sendable (ItemName) -> Bool
    /// Payload key paths kept whatever the configuration says (--payload-key).
    private let requestedKeyPaths: Set<String>
    public var timing = Timing()
    /// The index, guarded: the watcher thread updates it under this lock,
    /// and `withIndex` reads it under the same lock from any thread.
    private let index: LiveIndex
    private let indexLock = PlainLock()
    private let watcher: BackingWatcher
    private let log: @Sendable (String) -> Void
    private var wakePipe: [Int32] = [-1, -1]
    private let stopping = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)

    /// Scans `path` and starts watching it (events queue up until `start`).
    public init(backingPath path: String, viewSet: ViewSet = ViewSet(), sources: FieldSources = FieldSources(),
                ignoring ignored: @escaping @Sendable (ItemName) -> Bool = { _ in false },
                log: @escaping @Sendable (String) -> Void) throws(SystemError)
    {
        self.ignored = ignored
        requestedKeyPaths = sources.extraKeyPaths
        let root = try BackingDirectory(path: path)
        backing = root
        var sources = sources
        sources.extraKeyPaths.formUnion(viewSet.payloadKeyPaths)
        var coordinated = Scanner(sources: sources)
        coordinated.respectsLocks = true
        scanner = coordinated
        self.log = log
        guard pipe(&wakePipe) == 0 else { throw SystemError.current("pipe") }
        _ = fcntl(wakePipe[0], F_SETFL, O_NONBLOCK)
        // Watch first, then scan: a change during the scan is then seen twice, never missed.
        watcher = try BackingWatcher(rootPath: path, log: log)
        // The first scan reads without locks (there is no earlier state to
        // keep); items a writer holds are read again once it lets go.
        let names = try root.itemNames().filter { !ignored($0) }
        var lockedNames: [ItemName] = []
        var items: [Item] = []
        items.reserveCapacity(names.count)
        let plain = Scanner(sources: sources)
        let scans = parallelMap(names, threads: Scanner.defaultThreads) { name in
            coordinated.scanListingDirectories(named: name, in: root.fd)
        }
        for (name, result) in zip(names, scans) {
            switch result.scan {
            case .item(let item):
                items.append(item)
                if item.kind == .bundle { watcher.watchBundle(name, directories: result.directories) }
            case .gone: break
            case .locked:
                lockedNames.append(name)
                if let item = plain.scanItem(named: name, in: root.fd) { items.append(item) }
                watcher.watchBundle(name)
            }
        }
        index = LiveIndex(items: items, viewSet: viewSet)
        for name in lockedNames { waitForRelease(of: name) }
    }

    /// Items a writer held when last read, waited on by one thread each.
    private let waitingForRelease = Mutex<Set<ItemName>>([])
    private let released = Mutex<Set<ItemName>>([])

    /// Shared locks taken by `waitForRelease`, held until the watcher has
    /// read their items.
    private let heldForReading = Mutex<[ItemName: ItemLock]>([:])

    /// Waits (on its own thread) until the writer holding `name` lets go,
    /// then has the watcher read it again. The shared lock it got is kept
    /// until that read: let go at once, a writer rewriting the item every
    /// few milliseconds would take it back first, again and again, and the
    /// views would fall ever further behind.
    private func waitForRelease(of name: ItemName) {
        let isNew = waitingForRelease.withLock { $0.insert(name).inserted }
        guard isNew else { return }
        let rootFD = backing.fd
        startThread { [self] in
            if let lock = try? ItemLock(item: name, in: rootFD), (try? lock.lock(.shared, timeout: nil)) != nil {
                heldForReading.withLock { $0[name] = lock }
                // The watcher may have ended meanwhile: nobody would read it, so let go.
                if stopping.load(ordering: .relaxed) { releaseHeldLocks(of: nil) }
            }
            waitingForRelease.withLock { _ = $0.remove(name) }
            released.withLock { _ = $0.insert(name) }
            wake()
        }
    }

    /// Lets go of the shared locks of items just read (nil: of all).
    private func releaseHeldLocks(of names: Set<ItemName>?) {
        let locks: [ItemLock] = heldForReading.withLock { held in
            guard !held.isEmpty else { return [] }
            guard let names else { defer { held.removeAll() }; return Array(held.values) }
            return names.compactMap { held.removeValue(forKey: $0) }
        }
        for lock in locks { lock.unlock() }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe[1], &byte, 1)
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakePipe[0], &buffer, buffer.count) > 0 {}
    }

    deinit {
        close(wakePipe[0])
        close(wakePipe[1])
    }

    /// What one burst did: the view changes, the new listing of every
    /// changed view, and every item the burst touched (even those whose
    /// fields did not change: their files may have).
    public struct Update: Sendable {
        public let changes: [ViewChange]
        public let listings: [[String]: RecordList]
        public let touchedItems: Set<ItemName>
        /// The configured views changed (their listings are in `listings`).
        public var reconfiguration: LiveIndex.Reconfiguration?
        /// The saved queries of a reloaded configuration.
        public var savedQueries: [String]?
    }

    /// What a reloaded configuration asks of the index.
    public struct Settings: Sendable {
        public var viewSet: ViewSet
        public var sources: FieldSources
        public var ignoring: @Sendable (ItemName) -> Bool
        /// Queries whose views the mount keeps as `query/` folders.
        public var savedQueries: [String]
        public init(viewSet: ViewSet, sources: FieldSources, savedQueries: [String] = [],
                    ignoring: @escaping @Sendable (ItemName) -> Bool) {
            self.viewSet = viewSet
            self.sources = sources
            self.savedQueries = savedQueries
            self.ignoring = ignoring
        }
    }

    /// Reads the configuration again after its file changed (on the watcher's
    /// thread); nil keeps the current one (it is broken, or unchanged).
    /// Set before `start`, with `watchConfiguration`.
    public var reloadConfiguration: (@Sendable () -> Settings?)?

    /// The configuration with its relative ages counted from the given now,
    /// nil if no configured view has one (on the watcher's thread; set before `start`).
    public var countingAges: (@Sendable (Timestamp) -> Settings?)?

    /// Evaluates again every view with relative ages, counted from now.
    private func recountAges(_ onChange: (Update) -> Void) {
        let now = Timestamp.now
        let configuration = countingAges?(now)
        let update: Update? = indexLock.withLock {
            var reconfiguration = LiveIndex.Reconfiguration()
            // Only the views' thresholds move: sources and ignores stay, nothing is read again.
            if let configuration { reconfiguration = index.reconfigure(configuration.viewSet) }
            reconfiguration.remade += index.countQueryAges(from: now)
            guard !reconfiguration.remade.isEmpty else { return nil }
            var listings: [[String]: RecordList] = [:]
            for path in reconfiguration.remade { listings[path] = index.view(at: path)?.records ?? [] }
            var update = Update(changes: [], listings: listings, touchedItems: [])
            update.reconfiguration = reconfiguration
            return update
        }
        if let update { onChange(update) }
    }

    private let configurationEdited = Atomic<Bool>(false)

    /// Has the watcher read the configuration again soon: the mount itself
    /// edited it (`mkdir` under `query/`), and inotify may not tell (a
    /// configuration that is a symlink to a file elsewhere).
    public func reloadConfigurationSoon() {
        configurationEdited.store(true, ordering: .relaxed)
        wake()
    }

    /// Watches the configuration file at `path` (before `start`).
    public func watchConfiguration(at path: String) throws(SystemError) {
        try watcher.watchConfiguration(path: path)
    }

    /// Takes a reloaded configuration: views change in place; new field
    /// sources or ignore patterns mean every item is read again.
    private func apply(_ configuration: Settings, to index: LiveIndex) -> (LiveIndex.Reconfiguration, rescan: Bool) {
        var sources = configuration.sources
        sources.extraKeyPaths = requestedKeyPaths.union(configuration.viewSet.payloadKeyPaths)
            .union(configuration.sources.extraKeyPaths)
        let rescan = sources != scanner.sources || !sameIgnores(configuration.ignoring)
        scanner.sources = sources
        ignored = configuration.ignoring
        return (index.reconfigure(configuration.viewSet), rescan)
    }

    /// Whether `other` ignores the same of the names present now.
    private func sameIgnores(_ other: (ItemName) -> Bool) -> Bool {
        let names = (try? backing.itemNames()) ?? []
        return names.allSatisfy { ignored($0) == other($0) }
    }

    public typealias Subscriber = @Sendable (Update) -> Void
    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let nextSubscriberID = Atomic<Int>(0)
    private let started = Atomic<Bool>(false)

    /// Calls `subscriber` on the watcher thread after each burst, outside the
    /// index lock (so it may call `withIndex`, and FUSE notifications made
    /// there cannot deadlock with request handlers). Returns a token for `unsubscribe`.
    @discardableResult
    public func subscribe(_ subscriber: @escaping Subscriber) -> Int {
        let id = nextSubscriberID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = subscriber }
        return id
    }

    public func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.removeValue(forKey: id) }
    }

    /// Runs `body` with the index, safe from any thread.
    /// Writes one line to the mount's log.
    public func logMessage(_ message: String) { log(message) }

    /// Why an ad-hoc query cannot become a view.
    public enum QueryViewFailure: Error, CustomStringConvertible {
        case unparsable(QueryError)
        case payloadKeysNotExtracted(Set<String>)

        public var description: String {
            switch self {
            case .unparsable(let error): "\(error)"
            case .payloadKeysNotExtracted(let paths):
                "payload keys the scan does not keep: \(paths.sorted().joined(separator: ", ")) (mount with --payload-key)"
            }
        }
    }

    /// The view of query `text` (made and kept current from now on if new);
    /// `install` receives its records under the index lock, so a listing
    /// installed from here is never newer than the next change's.
    public func queryView(_ text: String, install: (RecordList) -> Void) throws(QueryViewFailure) {
        let query: Query
        do {
            query = try Query(parsing: text, now: .now)
        } catch {
            throw .unparsable(error)
        }
        let missing: Set<String> = indexLock.withLock {
            let missing = query.payloadKeyPaths.subtracting(scanner.sources.extraKeyPaths)
            if missing.isEmpty { install(index.queryView(text, query).records) }
            return missing
        }
        guard missing.isEmpty else { throw .payloadKeysNotExtracted(missing) }
        // The watcher may be waiting with no timeout: it now has ages to recount.
        if query.shortestAge != nil { wake() }
    }

    /// Stops keeping the view of query `text` current.
    public func forgetQueryView(_ text: String) {
        indexLock.withLock { index.forgetQueryView(text) }
    }

    public func hasQueryView(_ text: String) -> Bool {
        indexLock.withLock { index.hasQueryView(text) }
    }

    /// Tells whether the mount is writing an item right now (set before `start`).
    public var isBeingWritten: (@Sendable (ItemName, Double) -> Bool)?

    public func withIndex<R>(_ body: (LiveIndex) throws -> R) rethrows -> R {
        try indexLock.withLock { try body(index) }
    }

    /// Starts the watcher thread (once).
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        startThread { [self] in
            run { update in
                for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber(update) }
            }
            finished.withLock { $0 = true }
        }
    }

    /// The changes of one view as an async sequence, for Swift programs
    /// (starts the watcher if needed). Ends when the catalog stops.
    public func changes(of path: [String]) -> AsyncStream<ViewChange> {
        AsyncStream { continuation in
            let id = subscribe { update in
                for change in update.changes where change.path == path { continuation.yield(change) }
            }
            continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
            start()
        }
    }

    /// Stops the watcher thread (returns at once; the thread ends after its current batch).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        wake()
    }

    private func run(onChange: (Update) -> Void) {
        var pending = BackingWatcher.Observation()
        var burstStart: Double?
        var deferredSince: [ItemName: Double] = [:]
        var lastUnwatchedRescan = monotonicSeconds()
        var lastAgeRecount = monotonicSeconds()
        while !stopping.load(ordering: .relaxed) {
            var timeout: Int32 = -1
            if let start = burstStart {
                let left = timing.maximumDelayMilliseconds - (monotonicSeconds() - start) * 1000
                timeout = max(0, min(timing.quietMilliseconds, Int32(left.rounded(.up))))
            } else if watcher.watchLimitReached {
                timeout = timing.unwatchedRescanMilliseconds
            }
            let agePeriod = indexLock.withLock { index.shortestAge }.map { timing.ageRecountPeriod(shortestAge: $0) }
            if let agePeriod {
                let left = Int32(min(Double(Int32.max), max(0, (lastAgeRecount + agePeriod - monotonicSeconds()) * 1000)).rounded(.up))
                timeout = timeout < 0 ? left : min(timeout, left)
            }
            let events = watcher.fdWait(timeout: timeout, wakeFD: wakePipe[0])
            if stopping.load(ordering: .relaxed) { break }
            drainWakePipe()
            if configurationEdited.exchange(false, ordering: .relaxed) { pending.configurationChanged = true }
            if let agePeriod, monotonicSeconds() - lastAgeRecount >= agePeriod {
                recountAges(onChange)
                // Counted from the end: a recount slower than the period never runs back to back.
                lastAgeRecount = monotonicSeconds()
            }
            // Items whose writer let go: read now, as any other change.
            let releasedNames = released.withLock { names in defer { names.removeAll() }; return names }
            if !releasedNames.isEmpty {
                pending.dirtyItems.formUnion(releasedNames)
                if burstStart == nil { burstStart = monotonicSeconds() }
            }
            if !events.isEmpty {
                watcher.observe(events, into: &pending)
                if burstStart == nil { burstStart = monotonicSeconds() }
                if (monotonicSeconds() - burstStart!) * 1000 < timing.maximumDelayMilliseconds { continue }
            }
            if watcher.watchLimitReached, monotonicSeconds() - lastUnwatchedRescan > Double(timing.unwatchedRescanMilliseconds) / 1000 {
                pending.dirtyItems.formUnion(watcher.unwatchedItems)
                lastUnwatchedRescan = monotonicSeconds()
            }
            burstStart = nil
            guard pending.needsFullRescan || pending.configurationChanged || !pending.dirtyItems.isEmpty else { continue }
            // Read outside the index lock: requests wait on it.
            let configuration = pending.configurationChanged ? reloadConfiguration?() : nil
            pending.configurationChanged = false
            // Items the mount is writing wait until it pauses (at most writerMaximumDelaySeconds).
            var deferred = Set<ItemName>()
            if let isBeingWritten, !pending.needsFullRescan {
                let now = monotonicSeconds()
                // An item whose lock we hold (released by its writer) cannot be
                // being written: read it now, whichever wake-up released it.
                let held = heldForReading.withLock { Set($0.keys) }
                for name in pending.dirtyItems where !held.contains(name) && isBeingWritten(name, timing.writerQuietSeconds) {
                    let since = deferredSince[name] ?? now
                    if now - since < timing.writerMaximumDelaySeconds {
                        deferredSince[name] = since
                        deferred.insert(name)
                    }
                }
                pending.dirtyItems.subtract(deferred)
                for name in pending.dirtyItems { deferredSince[name] = nil }
            }
            defer {
                if !deferred.isEmpty {
                    pending.dirtyItems.formUnion(deferred)
                    burstStart = burstStart ?? monotonicSeconds()
                }
            }
            guard pending.needsFullRescan || configuration != nil || !pending.dirtyItems.isEmpty else { continue }
            let observation = pending
            pending = BackingWatcher.Observation(backingGone: pending.backingGone)
            let update: Update = indexLock.withLock {
                var reconfiguration: LiveIndex.Reconfiguration?
                var rescan = false
                if let configuration { (reconfiguration, rescan) = apply(configuration, to: index) }
                let changes = flush(observation, into: index, rescanAll: rescan)
                var listings: [[String]: RecordList] = [:]
                for change in changes where change.kind != .vanished {
                    listings[change.path] = index.view(at: change.path)?.records ?? []
                }
                for path in reconfiguration?.remade ?? [] { listings[path] = index.view(at: path)?.records ?? [] }
                var update = Update(changes: changes, listings: listings, touchedItems: observation.dirtyItems)
                update.reconfiguration = reconfiguration
                update.savedQueries = configuration?.savedQueries
                return update
            }
            releaseHeldLocks(of: observation.dirtyItems)
            if !update.changes.isEmpty || !update.touchedItems.isEmpty || update.reconfiguration != nil { onChange(update) }
        }
        releaseHeldLocks(of: nil)
    }

    /// Re-reads the dirty items (all of them after an overflow) and updates the index.
    private func flush(_ observation: BackingWatcher.Observation, into index: LiveIndex, rescanAll: Bool = false) -> [ViewChange] {
        var names = observation.dirtyItems
        if observation.needsFullRescan { log("inotify queue overflowed: rescanning \(backing.path)") }
        if observation.needsFullRescan || rescanAll {
            names.formUnion(index.records.keys)
            names.formUnion((try? backing.itemNames()) ?? [])
        }
        var batch: [ItemName: Item?] = [:]
        // Items whose released locks we hold: let go as soon as each is read,
        // not after the whole batch (a full rescan takes seconds at 100,000).
        let held = heldForReading.withLock { Set($0.keys) }
        for name in names {
            if ignored(name) {
                batch[name] = Item?.none
                continue
            }
            let scan = scanner.scan(named: name, in: backing.fd)
            if held.contains(name) { releaseHeldLocks(of: [name]) }
            switch scan {
            case .item(let item):
                if observation.needsFullRescan || rescanAll, item.kind == .bundle { watcher.watchBundle(name) }
                batch[name] = item
            case .gone:
                watcher.unwatch(name)
                batch[name] = Item?.none
            case .locked:
                // Views keep the last complete state until the writer lets go.
                waitForRelease(of: name)
            }
        }
        return index.apply(batch)
    }
}

extension BackingWatcher {
    func fdWait(timeout: Int32, wakeFD: Int32) -> [Inotify.Event] {
        inotifyWait(timeout: timeout, wakeFD: wakeFD)
    }
}
