#if canImport(Glibc)
import Glibc
#endif

/// How the mount coordinates writes through `bundles/` (SPEC §5): every
/// mutating operation takes the exclusive lock of the item it changes — the
/// same flock(2) on the item in BACKING that other processes take — for the
/// length of that one operation.
///
/// No deadlock, by two rules:
/// - A client that holds the item's lock *through the mount* (flock on a
///   plain-file item in `bundles/`, carried to BACKING) is the writer: its
///   writes, and any other writes through the mount to that item, pass
///   without waiting for the lock it already holds.
/// - Otherwise the wait is bounded (`timeout`, default 5 s): if someone else
///   (in BACKING, or another mount) keeps the lock that long, the operation
///   fails with EBUSY ("Device or resource busy") instead of hanging.
public final class WriteCoordinator: @unchecked Sendable {
    public let rootFD: Int32
    public let timeout: Double
    public let enabled: Bool
    private let lock = PlainLock()
    /// Items locked by clients through the mount: how many of their open files hold a lock.
    private var clientLockCounts: [ItemName: Int] = [:]
    /// Which open file (FUSE file handle) holds a client lock on which item.
    private var clientLockHolders: [UInt64: ItemName] = [:]

    public init(rootFD: Int32, timeout: Double = 5, enabled: Bool = true) {
        self.rootFD = rootFD
        self.timeout = timeout
        self.enabled = enabled
    }

    /// Runs `operation` under the exclusive lock of each item in `items`
    /// (nil entries, such as an item being created, need none). Returns the
    /// operation's errno, or EBUSY when a lock could not be had in time.
    public func withExclusiveLocks(_ items: [ItemName?], _ operation: () -> Int32) -> Int32 {
        guard enabled else { return operation() }
        // Sorted, so two operations over the same pair never wait on each other.
        let names = Set(items.compactMap { $0 }).sorted()
        var held: [ItemLock] = []
        defer { for itemLock in held { itemLock.unlock() } }
        for name in names where !isHeldByClient(name) {
            guard let itemLock = try? ItemLock(item: name, in: rootFD) else { continue }  // gone or new: nothing to lock
            do {
                try itemLock.lock(.exclusive, timeout: timeout)
            } catch {
                return EBUSY
            }
            held.append(itemLock)
        }
        return operation()
    }

    private func isHeldByClient(_ item: ItemName) -> Bool {
        lock.withLock { (clientLockCounts[item] ?? 0) > 0 }
    }

    /// A client's flock through the mount on open file `handle` of `item` succeeded (or was released).
    public func clientLockChanged(handle: UInt64, item: ItemName, locked: Bool) {
        lock.withLock {
            if locked {
                guard clientLockHolders[handle] == nil else { return }
                clientLockHolders[handle] = item
                clientLockCounts[item, default: 0] += 1
            } else {
                guard let holder = clientLockHolders.removeValue(forKey: handle) else { return }
                clientLockCounts[holder, default: 1] -= 1
                if clientLockCounts[holder] == 0 { clientLockCounts[holder] = nil }
            }
        }
    }
}
