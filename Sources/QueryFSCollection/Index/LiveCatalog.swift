#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import Synchronization
import QueryFSEngine

/// A backing directory kept indexed as it changes: a first scan, then the
/// watcher thread (`ChangeLoop`) re-reads only the items that changes touch
/// and updates every view through the `LiveIndex`. Subscribers get each
/// batch of view changes on the watcher's thread.
///
/// The parts, each in its own file: `GuardedIndex` (the index, its lock and
/// the locking rules), `ChangeSources` (inotify, and polling where inotify
/// cannot watch), `ReleaseWaiters` (items a writer holds), `CatalogUpdater`
/// (reading items and applying them, reloads and age recounts), `ChangeLoop`
/// (bursts and the watcher thread), `UpdateSubscribers`.
package final class LiveCatalog: @unchecked Sendable {
    package struct Timing: Sendable {
        /// A burst is over once no event came for this long.
        package var quietMilliseconds: Int32 = 5
        /// …or once this long has passed since its first event.
        package var maximumDelayMilliseconds: Double = 40
        /// An item the mount is writing is read once it has been left alone
        /// this long (so the index does not read it between every two writes,
        /// nor hold its lock while the writer waits)…
        package var writerQuietSeconds: Double = 0.005
        /// …or once it has waited this long.
        package var writerMaximumDelaySeconds: Double = 0.1
        /// Views with relative ages (`modified>7d`) are evaluated again every
        /// hundredth of their shortest age, within these bounds.
        package var ageRecountSeconds: ClosedRange<Double> = 60...3600
        package init() {}

        func ageRecountPeriod(shortestAge: Double) -> Double {
            min(ageRecountSeconds.upperBound, max(ageRecountSeconds.lowerBound, shortestAge / 100))
        }
    }

    package let backing: BackingDirectory
    /// How the watcher paces itself; may be changed at any time, before or
    /// after `start` (the watcher reads it at each use).
    package var timing: Timing {
        get { timingStorage.withLock { $0 } }
        set { timingStorage.withLock { $0 = newValue } }
    }
    private let timingStorage = Mutex<Timing>(Timing())
    private let guarded: GuardedIndex
    /// The index's title filter, counted as updates are published.
    private let titlePresence: EntryTitlePresence
    private let sources: ChangeSources
    private let releaseWaiters: ReleaseWaiters
    private let requestedKeyPaths: Set<String>
    /// Where the catalog and every layer of the mount says what happens.
    package let logger: Logger
    private let wakeSignal: WakeSignal
    /// Marked by request handlers that leave garbage; the watcher trims.
    package let idleTrim: IdleMemoryTrim
    private let subscribers = UpdateSubscribers()
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let configurationEdited = Atomic<Bool>(false)
    /// The index file's keeper, nil when the mount keeps none.
    private let keeper: IndexKeeper?
    private let indexStatus: Mutex<IndexStatus>
    /// A trusted start's comparison, until the watcher has applied what it found.
    private let reconciliation: BackgroundReconciliation?
    /// What the start has to say about the index, logged by `start`.
    private let indexNotes: [LogNote]

    /// Scans `path` and starts following it (changes queue up until `start`).
    /// With `index`, items whose files are as the index file recorded them
    /// are taken from it instead of read (`IndexSettings.trust`: all of them,
    /// compared in the background once live), and the file is kept current.
    package init(backingPath path: String, viewSet: ViewSet = ViewSet(), sources: FieldSources = FieldSources(),
                ignoring ignored: @escaping @Sendable (ItemName) -> Bool = { _ in false },
                pollerSettings: ChangePollerSettings = ChangePollerSettings(),
                index indexSettings: IndexSettings? = nil,
                progress: (@Sendable (_ read: Int, _ total: Int) -> Void)? = nil,
                logger: Logger) throws(SystemError)
    {
        requestedKeyPaths = sources.extraKeyPaths
        let root = try BackingDirectory(path: path, readingAs: sources)
        backing = root
        var sources = sources
        sources.extraKeyPaths.formUnion(viewSet.payloadKeyPaths)
        var coordinated = Scanner(sources: sources)
        coordinated.respectsLocks = true
        self.logger = logger
        let wakeSignal = try WakeSignal()
        self.wakeSignal = wakeSignal
        idleTrim = IdleMemoryTrim(wake: { wakeSignal.wake() })
        releaseWaiters = ReleaseWaiters(rootFD: root.fd, onRelease: { wakeSignal.wake() })
        // Follow first, then scan: a change during the scan is then seen twice, never missed.
        let changeSources = try ChangeSources(root: root, logger: logger, pollerSettings: pollerSettings.poller,
                                              notification: pollerSettings.notification, pollEvery: pollerSettings.pollEvery,
                                              onPolledChange: { wakeSignal.wake() })
        self.sources = changeSources
        if root.recursive { changeSources.followFolders(try root.listing().folders) }
        let start = try CatalogStart(root: root, viewSet: viewSet, sources: sources, coordinated: coordinated,
                                     ignored: ignored, changeSources: changeSources, releaseWaiters: releaseWaiters,
                                     index: indexSettings, progress: progress, wake: { wakeSignal.wake() }, logger: logger)
        guarded = start.guarded
        titlePresence = guarded.withLock { $0.titlePresence }
        // Polling everything is said at `start` (once live: a mount that fails says one line).
        if changeSources.poller.isPolling, !changeSources.pollsEverything { logger.info("changes are followed by \(changeSources.summary)") }
        // The start's garbage (decoded file, read buffers) is not the mount's to keep.
        MemoryTrim.returnFreedMemory()
        (keeper, reconciliation, indexNotes) = (start.keeper, start.reconciliation, start.notes)
        indexStatus = Mutex(start.status)
    }

    /// How changes are followed: the notification mode, and how the poller
    /// behaves where notifications cannot reach.
    package struct ChangePollerSettings: Sendable {
        var poller = ChangePoller.Settings()
        package var notification = ChangeNotification.automatic
        /// Seconds between polling rounds of every item (`--poll`); nil: on
        /// network filesystems only, every 5 s; 0: never.
        package var pollEvery: Double?
        package init() {}
        /// The share of one core polling may use (0.1: 10 %).
        package var share: Double {
            get { poller.share }
            set { poller.share = newValue }
        }
        /// The shortest time between two polling rounds, in seconds.
        package var interval: Double {
            get { poller.interval }
            set { poller.interval = newValue }
        }
    }

    /// What one burst did: the view changes, the new listing of every
    /// changed view, and every item the burst touched (even those whose
    /// fields did not change: their files may have).
    package struct Update: Sendable {
        package let changes: [ViewChange]
        package let listings: [[String]: RecordList]
        package let touchedItems: Set<ItemName>
        /// The configured views changed (their listings are in `listings`).
        package var reconfiguration: LiveIndex.Reconfiguration?
        /// The saved queries of a reloaded configuration.
        package var savedQueries: [String]?
    }

    /// What a reloaded configuration asks of the index.
    package struct Settings: Sendable {
        package var viewSet: ViewSet
        package var sources: FieldSources
        package var ignoring: @Sendable (ItemName) -> Bool
        /// Queries whose views the mount keeps as `query/` folders.
        package var savedQueries: [String]
        /// The patterns behind `ignoring`, as written (the index file names them).
        package var ignorePatterns: [String] = []
        package init(viewSet: ViewSet, sources: FieldSources, savedQueries: [String] = [],
                    ignoring: @escaping @Sendable (ItemName) -> Bool) {
            self.viewSet = viewSet
            self.sources = sources
            self.savedQueries = savedQueries
            self.ignoring = ignoring
        }
    }

    /// What the watcher calls back, set before `start` (under a lock: the
    /// setters run on any thread), and handed to the watcher at `start`.
    private let hooks = Mutex(ChangeLoop.Hooks())

    /// Reads the configuration again after its file changed (on the watcher's
    /// thread); nil keeps the current one (it is broken, or unchanged).
    /// Set before `start`, with `watchConfiguration`.
    package var reloadConfiguration: (@Sendable () -> Settings?)? {
        get { hooks.withLock { $0.reloadConfiguration } }
        set { hooks.withLock { $0.reloadConfiguration = newValue } }
    }

    /// The configuration with its relative ages counted from the given now,
    /// nil if no configured view has one (on the watcher's thread; set before `start`).
    package var countingAges: (@Sendable (Timestamp) -> Settings?)? {
        get { hooks.withLock { $0.countingAges } }
        set { hooks.withLock { $0.countingAges = newValue } }
    }

    /// Tells whether the mount is writing an item right now (set before `start`).
    package var isBeingWritten: (@Sendable (ItemName, Double) -> Bool)? {
        get { hooks.withLock { $0.isBeingWritten } }
        set { hooks.withLock { $0.isBeingWritten = newValue } }
    }

    /// Has the watcher read the configuration again soon: the mount itself
    /// edited it (`mkdir` under `query/`), and inotify may not tell (a
    /// configuration that is a symlink to a file elsewhere).
    package func reloadConfigurationSoon() {
        configurationEdited.store(true, ordering: .relaxed)
        wakeSignal.wake()
    }

    /// Follows the configuration file at `path` (before `start`): its folder
    /// is watched, or the file polled where it cannot be.
    package func watchConfiguration(at path: String) {
        sources.followConfiguration(at: path)
    }

    /// Which payload keys feed which field now (the configuration's, as last reloaded).
    package var fieldSources: FieldSources { guarded.withLock { _ in guarded.scanner.sources } }

    /// How changes are followed (inotify, polling), for the log and `queryfs status`.
    package var changeFollowing: String { sources.summary }

    /// BACKING's filesystem, and whether every item is polled (seconds between rounds; nil: not).
    package var backingFilesystem: BackingFilesystem { sources.filesystem }
    package var pollingInterval: Double? { sources.pollsEverything ? sources.poller.settings.interval : nil }

    /// "fanotify", "inotify" or "polling": how the insides of bundles are followed.
    package var changeNotificationMode: String { sources.mode }

    /// Items changed while a writer held their lock, waited for: what the
    /// views do not show yet (tests wait for this instead of sleeping).
    package var itemsWaitingForTheirLock: Set<ItemName> { releaseWaiters.waitingNames }

    /// How many inotify watches the mount holds.
    package var inotifyWatchCount: Int { sources.watcher.watchCount }

    package typealias Subscriber = UpdateSubscribers.Subscriber

    /// Calls `subscriber` on the watcher thread after each burst, outside the
    /// index lock (so it may call `withIndex`, and FUSE notifications made
    /// there cannot deadlock with request handlers). Returns a token for `unsubscribe`.
    @discardableResult
    package func subscribe(_ subscriber: @escaping Subscriber, onEnd: (@Sendable () -> Void)? = nil) -> Int {
        let id = subscribers.add(subscriber, onEnd: onEnd)
        // Stopped already (or meanwhile): told at once that nothing more comes.
        if onEnd != nil, stopping.load(ordering: .relaxed) { subscribers.endAll() }
        return id
    }

    package func unsubscribe(_ id: Int) { subscribers.remove(id) }

    /// Why an ad-hoc query cannot become a view.
    package enum QueryViewFailure: Error, CustomStringConvertible {
        case unparsable(QueryError)
        case payloadKeysNotExtracted(Set<String>)

        package var description: String {
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
    package func queryView(_ text: String, install: (RecordList) -> Void) throws(QueryViewFailure) {
        let query: Query
        do {
            query = try Query(parsing: text, now: .now)
        } catch {
            throw .unparsable(error)
        }
        let missing: Set<String> = guarded.withLock { index in
            let missing = query.payloadKeyPaths.subtracting(guarded.scanner.sources.extraKeyPaths)
            if missing.isEmpty { install(index.queryView(text, query).records) }
            return missing
        }
        guard missing.isEmpty else { throw .payloadKeysNotExtracted(missing) }
        // The watcher may be waiting with no timeout: it now has ages to
        // recount, and the evaluation cache to drop once idle.
        wakeSignal.wake()
    }

    /// Stops keeping the view of query `text` current.
    package func forgetQueryView(_ text: String) {
        guarded.withLock { $0.forgetQueryView(text) }
    }

    package func hasQueryView(_ text: String) -> Bool {
        guarded.withLock { $0.hasQueryView(text) }
    }

    /// Runs `body` with the index, under its lock (see `GuardedIndex`).
    package func withIndex<R>(_ body: (LiveIndex) throws -> R) rethrows -> R {
        try guarded.withLock(body)
    }

    /// `withIndex` if the index is free now; nil, without waiting, while
    /// the watcher holds it (for a request handler that can do without).
    package func withIndexIfFree<R>(_ body: (LiveIndex) throws -> R) rethrows -> R? {
        try guarded.withLockIfFree(body)
    }

    private let tasks = Mutex<[@Sendable () -> Void]>([])

    /// Runs `task` on the watcher thread soon (between bursts, outside the
    /// index lock): the one thread that may tell the kernel to drop cached
    /// names, so request handlers hand such work over here.
    package func onWatcherThread(_ task: @escaping @Sendable () -> Void) {
        tasks.withLock { $0.append(task) }
        wakeSignal.wake()
    }

    /// Reads `items` again and updates every view at once, returning when
    /// that is done (or after `timeout` seconds, should the watcher be busy
    /// with a long batch): what an edit through a view waits for, so that
    /// when `ln`, `rm` or `mv` returns, every view already shows it (the
    /// subscribers drop the kernel's cached listings on the watcher thread,
    /// and hand the names to drop to a thread that may wait for the folder
    /// the request works in). Returns false on timeout.
    @discardableResult
    package func applyNow(_ items: Set<ItemName>, timeout: Double = 2) -> Bool {
        guard let updater = updaterForTasks.withLock({ $0 }) else { return false }
        let done = DispatchSemaphore(value: 0)
        onWatcherThread { [self] in
            var observation = BackingWatcher.Observation()
            observation.dirtyItems = items
            publish(updater.update(observation, configuration: nil))
            done.signal()
        }
        return done.wait(timeout: .now() + timeout) == .success
    }

    private let updaterForTasks = Mutex<CatalogUpdater?>(nil)

    private let settleWaiters = SettleWaiters()

    /// Returns once the watcher has applied every change made in BACKING
    /// before this call that it hears of (`SettleWaiters`), or after
    /// `timeout` seconds (false). What a polled filesystem's poller has not
    /// come to yet is not waited for.
    @discardableResult
    package func waitUntilSettled(timeout: Double = 2) -> Bool {
        guard started.load(ordering: .relaxed), !stopping.load(ordering: .relaxed) else { return true }
        let done = settleWaiters.register()
        wakeSignal.wake()
        return done.wait(timeout: .now() + timeout) == .success
    }

    /// Starts the watcher thread (once).
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        for note in indexNotes { note.log(to: logger) }
        if sources.pollsEverything { logger.info("changes are followed by \(sources.summary)") }
        if let note = sources.filesystem.lockNote { logger.warning("\(note)") }
        let updater = CatalogUpdater(guarded: guarded, backing: backing, sources: sources, releaseWaiters: releaseWaiters,
                                     requestedKeyPaths: requestedKeyPaths, keeper: keeper, logger: logger)
        var loopHooks = hooks.withLock { $0 }
        loopHooks.reconciliation = reconciliation
        loopHooks.reconciled = { [unowned self] changed, seconds, failure in
            if let failure {
                // BACKING's listing is then polled from the index's names: what came or went is read once it lists.
                sources.pollListing(knownNames: guarded.withLock { Set($0.records.keys) })
                indexStatus.withLock { $0.note = "loaded, trusted; not reconciled: " + failure }
                return logger.warning("index not reconciled: \(failure); BACKING's listing is polled until it can be read")
            }
            keeper?.markCurrent()
            indexStatus.withLock {
                $0.reconciled = true
                $0.note = "loaded, trusted, reconciled"
                $0.reconciliationSeconds = seconds
                $0.changedWhileUnmounted = changed
            }
            logger.info("index reconciled in \((seconds * 1000).rounded() / 1000) s: \(changed) item\(changed == 1 ? "" : "s") changed while unmounted")
        }
        updaterForTasks.withLock { $0 = updater }
        let loop = ChangeLoop(
            sources: sources, updater: updater, releaseWaiters: releaseWaiters, settleWaiters: settleWaiters, wake: wakeSignal, timing: { [unowned self] in timing }, hooks: loopHooks,
            shortestAge: { [guarded] in guarded.withLock { $0.shortestAge } },
            evaluationCacheExpiry: { [guarded] in guarded.withLock { $0.evaluationCacheExpiry } },
            dropIdleEvaluationCache: { [guarded] in guarded.withLock { $0.dropIdleEvaluationCache() } },
            idleTrim: idleTrim,
            takeConfigurationEdited: { [unowned self] in configurationEdited.exchange(false, ordering: .relaxed) },
            isStopping: { [unowned self] in stopping.load(ordering: .relaxed) },
            takeTasks: { [unowned self] in tasks.withLock { tasks in defer { tasks.removeAll() }; return tasks } })
        startThread(named: "queryfs-watcher") { [self] in
            loop.run { update in publish(update) }
        }
    }

    /// Hands `update` to the subscribers (the filesystem swaps in its new
    /// listings there), then counts the titles it changed: the title
    /// filter follows the listings as published (`EntryTitlePresence`).
    private func publish(_ update: Update) {
        subscribers.publish(update)
        titlePresence.commit()
    }

    /// The changes of one view as an async sequence, for Swift programs
    /// (starts the watcher if needed). Ends when the catalog stops.
    package func changes(of path: [String]) -> AsyncStream<ViewChange> {
        AsyncStream { continuation in
            let id = subscribe({ update in
                for change in update.changes where change.path == path { continuation.yield(change) }
            }, onEnd: { continuation.finish() })
            continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
            start()
        }
    }

    /// Stops the watcher thread and the poller (returns at once; the thread
    /// ends after its current batch).
    package func stop() {
        stopping.store(true, ordering: .relaxed)
        sources.stop()
        wakeSignal.wake()
        // Every `changes(of:)` sequence ends: nothing more will come.
        subscribers.endAll()
        // The last snapshot: what the journal gathered, folded into one file.
        keeper?.close()
    }

    /// What the mount says about its index file.
    package var index: IndexStatus {
        var status = indexStatus.withLock { $0 }
        if let keeper, !keeper.isKeeping { status.note = "stopped keeping: a write failed (see the log)" }
        return status
    }
}
