import Synchronization

/// Who hears of each update of the live catalog: called in turn on the
/// watcher thread, after the index lock is released.
public final class UpdateSubscribers: Sendable {
    public typealias Subscriber = @Sendable (LiveCatalog.Update) -> Void

    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let nextID = Atomic<Int>(0)

    func add(_ subscriber: @escaping Subscriber) -> Int {
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = subscriber }
        return id
    }

    func remove(_ id: Int) {
        _ = subscribers.withLock { $0.removeValue(forKey: id) }
    }

    func publish(_ update: LiveCatalog.Update) {
        for (_, subscriber) in subscribers.withLock({ $0.sorted { $0.key < $1.key } }) { subscriber(update) }
    }
}
