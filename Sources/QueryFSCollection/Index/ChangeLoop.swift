import QueryFSEngine
/// The watcher thread's loop. It gathers what the change sources report
/// into bursts — an item is read once its events pause for
/// `quietMilliseconds`, or `maximumDelayMilliseconds` after the first —
/// leaves items the mount is writing alone until the writes pause, wakes for
/// relative ages and reloads of the configuration, and hands each burst to
/// the updater and the result to `publish`.
/// Made by `LiveCatalog.start` and then used by the watcher thread alone.
final class ChangeLoop: @unchecked Sendable {
    struct Hooks {
        var reloadConfiguration: (@Sendable () -> LiveCatalog.Settings?)?
        var countingAges: (@Sendable (Timestamp) -> LiveCatalog.Settings?)?
        var isBeingWritten: (@Sendable (ItemName, Double) -> Bool)?
        /// A trusted start's background comparison, and what to do once what it found is applied.
        var reconciliation: BackgroundReconciliation?
        var reconciled: ((_ changed: Int, _ seconds: Double, _ failure: String?) -> Void)?
    }

    private let sources: ChangeSources
    private let updater: CatalogUpdater
    private let releaseWaiters: ReleaseWaiters
    private let settleWaiters: SettleWaiters
    private let wake: WakeSignal
    /// Read at each use: a program may change the catalog's timing while it runs.
    private let currentTiming: () -> LiveCatalog.Timing
    private var timing: LiveCatalog.Timing { currentTiming() }
    private let hooks: Hooks
    private let shortestAge: () -> Double?
    /// Seconds until the index's evaluation cache expires (nil: none), and
    /// dropping it (true if it was dropped): see `LiveIndex.allRecords`.
    private let evaluationCacheExpiry: () -> Double?
    private let dropIdleEvaluationCache: () -> Bool
    private let idleTrim: IdleMemoryTrim
    private let takeConfigurationEdited: () -> Bool
    private let isStopping: () -> Bool
    /// Work others asked to run on this thread (`LiveCatalog.onWatcherThread`).
    private let takeTasks: () -> [@Sendable () -> Void]

    init(sources: ChangeSources, updater: CatalogUpdater, releaseWaiters: ReleaseWaiters, settleWaiters: SettleWaiters, wake: WakeSignal,
         timing: @escaping () -> LiveCatalog.Timing, hooks: Hooks, shortestAge: @escaping () -> Double?,
         evaluationCacheExpiry: @escaping () -> Double?, dropIdleEvaluationCache: @escaping () -> Bool,
         idleTrim: IdleMemoryTrim,
         takeConfigurationEdited: @escaping () -> Bool, isStopping: @escaping () -> Bool,
         takeTasks: @escaping () -> [@Sendable () -> Void])
    {
        self.sources = sources
        self.updater = updater
        self.releaseWaiters = releaseWaiters
        self.settleWaiters = settleWaiters
        self.wake = wake
        currentTiming = timing
        self.hooks = hooks
        self.shortestAge = shortestAge
        self.evaluationCacheExpiry = evaluationCacheExpiry
        self.dropIdleEvaluationCache = dropIdleEvaluationCache
        self.idleTrim = idleTrim
        self.takeConfigurationEdited = takeConfigurationEdited
        self.isStopping = isStopping
        self.takeTasks = takeTasks
    }

    func run(publish: (LiveCatalog.Update) -> Void) {
        var pending = BackingWatcher.Observation()
        var burstStart: Double?
        var deferredSince: [ItemName: Double] = [:]
        var lastAgeRecount = monotonicSeconds()
        // The reconciliation's finding, until the update that applies it.
        var reconciledAwaitingUpdate: (changed: Int, seconds: Double)?
        while !isStopping() {
            var timeout: Int32 = -1
            if burstStart == nil, !pending.needsFullRescan, !pending.configurationChanged, pending.dirtyItems.isEmpty {
                settleWaiters.watcherIsIdle()
                // Round again at once: a wait that begins after a waiter came lets it go.
                if settleWaiters.anyWaiting { timeout = 0 }
            }
            if let start = burstStart {
                let left = timing.maximumDelayMilliseconds - (monotonicSeconds() - start) * 1000
                timeout = max(0, min(timing.quietMilliseconds, Int32(left.rounded(.up))))
            }
            let agePeriod = shortestAge().map { timing.ageRecountPeriod(shortestAge: $0) }
            if let agePeriod {
                let left = Int32(min(Double(Int32.max), max(0, (lastAgeRecount + agePeriod - monotonicSeconds()) * 1000)).rounded(.up))
                timeout = timeout < 0 ? left : min(timeout, left)
            }
            // Asked once per wake (it takes the index lock): nil, as nearly always, and nothing is dropped after.
            let cacheExpiry = evaluationCacheExpiry()
            for due in [cacheExpiry, idleTrim.secondsUntilDue].compactMap({ $0 }) {
                let left = Int32(min(Double(Int32.max), due * 1000).rounded(.up))
                timeout = timeout < 0 ? left : min(timeout, left)
            }
            settleWaiters.waitBeginning()
            let events = sources.wait(timeout: timeout, wakeFD: wake.fd)
            if isStopping() { break }
            wake.drain()
            // Its memory is given back as a handler's garbage is: after a quiet second, off this thread.
            if cacheExpiry != nil, dropIdleEvaluationCache() { idleTrim.mark() }
            idleTrim.trimIfDue()
            for task in takeTasks() { task() }
            if takeConfigurationEdited() { pending.configurationChanged = true }
            if let agePeriod, monotonicSeconds() - lastAgeRecount >= agePeriod {
                if let update = updater.recountAges(now: .now, configuration: hooks.countingAges?(.now)) { publish(update) }
                // Counted from the end: a recount slower than the period never runs back to back.
                lastAgeRecount = monotonicSeconds()
            }
            // Items whose writer let go, and what the poller found: read now, as any other change.
            let released = releaseWaiters.takeReleased()
            pending.dirtyItems.formUnion(released)
            var polled = sources.takePolled(into: &pending)
            if let (names, seconds, failure) = hooks.reconciliation?.take() {
                if names.isEmpty {
                    hooks.reconciled?(0, seconds, failure)
                } else {
                    pending.dirtyItems.formUnion(names)
                    reconciledAwaitingUpdate = (names.count, seconds)
                    polled = true
                }
            }
            if (!released.isEmpty || polled), burstStart == nil { burstStart = monotonicSeconds() }
            if !events.isEmpty {
                sources.observe(events, into: &pending)
                if burstStart == nil { burstStart = monotonicSeconds() }
                if (monotonicSeconds() - burstStart!) * 1000 < timing.maximumDelayMilliseconds { continue }
            }
            burstStart = nil
            sources.settle(into: &pending)
            guard pending.needsFullRescan || pending.configurationChanged || !pending.dirtyItems.isEmpty else { continue }
            // Read outside the index lock: requests wait on it.
            let configuration = pending.configurationChanged ? hooks.reloadConfiguration?() : nil
            pending.configurationChanged = false
            let deferred = deferItemsBeingWritten(&pending, since: &deferredSince)
            defer {
                if !deferred.isEmpty {
                    pending.dirtyItems.formUnion(deferred)
                    burstStart = burstStart ?? monotonicSeconds()
                }
            }
            guard pending.needsFullRescan || configuration != nil || !pending.dirtyItems.isEmpty else { continue }
            let observation = pending
            pending = BackingWatcher.Observation(backingGone: pending.backingGone)
            let update = updater.update(observation, configuration: configuration)
            if !update.changes.isEmpty || !update.touchedItems.isEmpty || update.reconfiguration != nil { publish(update) }
            if let (changed, seconds) = reconciledAwaitingUpdate {
                hooks.reconciled?(changed, seconds, nil)
                reconciledAwaitingUpdate = nil
            }
        }
        releaseWaiters.stop()
        settleWaiters.stop()
    }

    /// Takes out of `pending` the items the mount is writing right now: they
    /// are read once the writes pause (at most `writerMaximumDelaySeconds`).
    private func deferItemsBeingWritten(_ pending: inout BackingWatcher.Observation, since deferredSince: inout [ItemName: Double])
        -> Set<ItemName>
    {
        guard let isBeingWritten = hooks.isBeingWritten, !pending.needsFullRescan else { return [] }
        let now = monotonicSeconds()
        // An item whose lock we hold (released by its writer) cannot be
        // being written: read it now, whichever wake-up released it.
        let held = releaseWaiters.heldNames
        var deferred = Set<ItemName>()
        for name in pending.dirtyItems where !held.contains(name) && isBeingWritten(name, timing.writerQuietSeconds) {
            let since = deferredSince[name] ?? now
            if now - since < timing.writerMaximumDelaySeconds {
                deferredSince[name] = since
                deferred.insert(name)
            }
        }
        pending.dirtyItems.subtract(deferred)
        for name in pending.dirtyItems { deferredSince[name] = nil }
        return deferred
    }
}
