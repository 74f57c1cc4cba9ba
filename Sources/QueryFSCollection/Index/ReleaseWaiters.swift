#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine

/// Items a writer held (its exclusive `flock`) when the watcher last read
/// them: the views keep the item's last complete state, and one thread per
/// item waits for the writer to let go, then has the watcher read it again.
///
/// The shared lock a waiter gets is kept until the watcher has read the
/// item: let go at once, a writer rewriting the item every few milliseconds
/// would take it back first, again and again, and the views would fall ever
/// further behind. The watcher lets go of it as soon as it has read that
/// item (`letGo`), not after its whole batch.
final class ReleaseWaiters: @unchecked Sendable {
    private let rootFD: Int32
    private let onRelease: @Sendable () -> Void
    private let waiting = Mutex<Set<ItemName>>([])
    private let released = Mutex<Set<ItemName>>([])
    private let held = Mutex<[ItemName: ItemLock]>([:])
    private let stopping = Atomic<Bool>(false)

    init(rootFD: Int32, onRelease: @escaping @Sendable () -> Void) {
        self.rootFD = rootFD
        self.onRelease = onRelease
    }

    /// Waits (on its own thread) until the writer holding `name` lets go.
    func wait(for name: ItemName) {
        guard waiting.withLock({ $0.insert(name).inserted }) else { return }
        let rootFD = rootFD
        startThread(named: "queryfs-release") { [self] in
            if let lock = try? ItemLock(item: name, in: rootFD), (try? lock.lock(.shared, timeout: nil)) != nil {
                held.withLock { $0[name] = lock }
                // The watcher may have ended meanwhile: nobody would read it, so let go.
                if stopping.load(ordering: .relaxed) { letGo(of: nil) }
            }
            waiting.withLock { _ = $0.remove(name) }
            released.withLock { _ = $0.insert(name) }
            onRelease()
        }
    }

    /// Items whose writer let go since the last call: to be read now.
    func takeReleased() -> Set<ItemName> {
        released.withLock { names in defer { names.removeAll() }; return names }
    }

    /// Items whose writer is waited for now.
    var waitingNames: Set<ItemName> { waiting.withLock { $0 } }

    /// Items whose shared lock is held for the watcher: none of them can be
    /// being written now.
    var heldNames: Set<ItemName> { held.withLock { Set($0.keys) } }

    /// Lets go of the shared locks of items just read (nil: of all).
    func letGo(of names: Set<ItemName>?) {
        let locks: [ItemLock] = held.withLock { held in
            guard !held.isEmpty else { return [] }
            guard let names else { defer { held.removeAll() }; return Array(held.values) }
            return names.compactMap { held.removeValue(forKey: $0) }
        }
        for lock in locks { lock.unlock() }
    }

    /// The watcher ends: every lock still held goes, and waiters still to come let go at once.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        letGo(of: nil)
    }
}
