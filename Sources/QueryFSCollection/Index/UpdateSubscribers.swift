import Synchronization
import QueryFSEngine

/// Who hears of each update of the live catalog: called in turn on the
/// watcher thread, after the index lock is released.
package final class UpdateSubscribers: Sendable {
    package typealias Subscriber = @Sendable (LiveCatalog.Update) -> Void

    private let subscribers = Mutex<[Int: Subscriber]>([:])
    /// What each subscriber that wants to know is told when updates end.
    private let endings = Mutex<[Int: @Sendable () -> Void]>([:])
    private let nextID = Atomic<Int>(0)

    func add(_ subscriber: @escaping Subscriber, onEnd: (@Sendable () -> Void)? = nil) -> Int {
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = subscriber }
        if let onEnd { endings.withLock { $0[id] = onEnd } }
        return id
    }

    func remove(_ id: Int) {
        _ = subscribers.withLock { $0.removeValue(forKey: id) }
        _ = endings.withLock { $0.removeValue(forKey: id) }
    }

    /// No update will come any more: every subscriber that asked is told (once).
    func endAll() {
        let ended = endings.withLock { endings in
            defer { endings.removeAll() }
            return Array(endings.values)
        }
        for end in ended { end() }
    }

    func publish(_ update: LiveCatalog.Update) {
        for (_, subscriber) in subscribers.withLock({ $0.sorted { $0.key < $1.key } }) { subscriber(update) }
    }
}
