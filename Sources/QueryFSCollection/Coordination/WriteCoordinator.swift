#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// How the mount coordinates writes through `bundles/` (SPEC §5): every
/// mutating operation takes the exclusive lock of the item it changes — the
/// same flock(2) on the item in BACKING that other processes take — for the
/// length of that one operation; a file open for writing in kernel
/// passthrough mode holds it from open to release instead.
///
/// No deadlock, by two rules:
/// - A client that holds the item's lock *through the mount* (flock on a
///   plain-file item in `bundles/`, carried to BACKING) is the writer: its
///   writes, and any other writes through the mount to that item, pass
///   without waiting for the lock it already holds.
/// - Otherwise the wait is bounded (`timeout`, default 5 s): if someone else
///   (in BACKING, or another mount) keeps the lock that long, the operation
///   fails with EBUSY ("Device or resource busy") instead of hanging.
package final class WriteCoordinator: @unchecked Sendable {
    package let rootFD: Int32
    package let timeout: Double
    package let enabled: Bool
    private let lock = PlainLock()
    /// Items locked by clients through the mount: how many of their open files hold a lock.
    private var clientLockCounts: [ItemName: Int] = [:]
    /// Which open file (FUSE file handle) holds a client lock on which item.
    private var clientLockHolders: [UInt64: ItemName] = [:]

    package init(rootFD: Int32, timeout: Double = 5, enabled: Bool = true) {
        self.rootFD = rootFD
        self.timeout = timeout
        self.enabled = enabled
    }

    /// Runs `operation` under the exclusive lock of each item in `items`
    /// (nil entries, such as an item being created, need none). Returns the
    /// operation's errno, or EBUSY when a lock could not be had in time.
    package func withExclusiveLocks(_ items: [ItemName?], _ operation: () -> Int32) -> Int32 {
        noteWriting(items)
        defer { noteWriting(items) }
        guard enabled else { return operation() }
        // Sorted, so two operations over the same pair never wait on each other.
        let names = Set(items.compactMap { $0 }).sorted()
        var acquired: [ItemName] = []
        defer { for name in acquired { release(name) } }
        for name in names where !isHeldByClient(name) {
            switch acquire(name) {
            case .held: acquired.append(name)
            case .nothingToLock: continue  // gone or new
            case .busy: return EBUSY
            case .failed(let code): return code
            }
        }
        return operation()
    }

    /// Open files that hold their item's lock from open to release: files
    /// opened for writing in kernel passthrough mode, whose writes never
    /// reach the mount one by one. A lock taker sees the file before the
    /// open or after the close, never a part of the writes in between.
    private var openFileHolds: [UInt64: ItemName] = [:]

    /// Takes `item`'s exclusive lock for open file `handle` until
    /// `releaseOpenFile`. Returns 0, or EBUSY after the bounded wait.
    package func holdForOpenFile(handle: UInt64, item: ItemName) -> Int32 {
        noteWriting([item])
        guard enabled, !isHeldByClient(item) else { return 0 }
        switch acquire(item) {
        case .held: lock.withLock { openFileHolds[handle] = item }
        case .nothingToLock: break
        case .busy: return EBUSY
        case .failed(let code): return code
        }
        return 0
    }

    /// The kernel released open file `handle`.
    package func releaseOpenFile(handle: UInt64) {
        guard let item = lock.withLock({ openFileHolds.removeValue(forKey: handle) }) else { return }
        noteWriting([item])
        release(item)
    }

    /// A client asks for `item`'s lock through the mount: the mount stops
    /// holding it for files open for writing, or a process that opened a file
    /// for writing and then locks its item (`exec 3>>f; flock 3`) would wait
    /// on the mount forever. The client becomes the writer, as above.
    package func yieldOpenFileHolds(of item: ItemName) {
        let handles = lock.withLock {
            let handles = openFileHolds.filter { $0.value == item }.map(\.key)
            for handle in handles { openFileHolds[handle] = nil }
            return handles
        }
        for _ in handles { release(item) }
    }

    /// The mount's own hold on an item's exclusive lock, shared by every
    /// request handler working on that item at the same moment. Against
    /// other processes the item is locked either way; what sharing saves is
    /// the mount waiting on itself: a handler replies to the kernel before it
    /// lets go, so the client's next request (the write after the create)
    /// often arrives while the previous one still holds the lock.
    private final class Hold {
        let lock: ItemLock
        var users = 1
        init(_ lock: ItemLock) { self.lock = lock }
    }
    private var holds: [ItemName: Hold] = [:]

    private enum Acquisition {
        case held, nothingToLock, busy
        /// The lock could not be opened: the write fails with this errno
        /// rather than go ahead without the lock.
        case failed(Int32)
    }

    private func acquire(_ name: ItemName) -> Acquisition {
        if join(name) { return .held }
        let itemLock: ItemLock
        do {
            itemLock = try ItemLock(item: name, in: rootFD)
        } catch {
            // Gone or not made yet, or a FIFO/device (no lock): nothing to coordinate.
            if error.errno == ENOENT || error.errno == ENOTSUP { return .nothingToLock }
            return .failed(error.errno)
        }
        let start = monotonicSeconds()
        let deadline = start + timeout
        var pause: useconds_t = 20
        while true {
            // Taking the flock and publishing the hold happen under one mutex,
            // so a handler never joins a hold that is being released.
            let outcome: Acquisition? = lock.withLock { () -> Acquisition? in
                if let hold = holds[name] { hold.users += 1; return .held }
                do throws(SystemError) {
                    guard try itemLock.tryLock(.exclusive) else { return nil }  // busy: retry until the deadline
                } catch {
                    // A real failure (ENOLCK on NFS without a lock manager) is
                    // the caller's answer, not "busy" after the timeout.
                    return .failed(error.errno)
                }
                holds[name] = Hold(itemLock)
                return .held
            }
            if let outcome { return outcome }
            let now = monotonicSeconds()
            if now >= deadline { return .busy }
            usleep(pause)
            // Short pauses first: the usual holder (the live index reading
            // the item) lets go within milliseconds.
            pause = min(pause * 2, now - start < 0.05 ? 1_000 : 20_000)
        }
    }

    private func join(_ name: ItemName) -> Bool {
        lock.withLock {
            guard let hold = holds[name] else { return false }
            hold.users += 1
            return true
        }
    }

    private func release(_ name: ItemName) {
        lock.withLock {
            guard let hold = holds[name] else { return }
            hold.users -= 1
            if hold.users == 0 {
                hold.lock.unlock()
                holds[name] = nil
            }
        }
    }

    /// When the mount last wrote each item (with or without coordination):
    /// the live index leaves an item alone while the mount is filling it.
    private var lastWrites: [ItemName: Double] = [:]

    private func noteWriting(_ items: [ItemName?]) {
        let now = monotonicSeconds()
        lock.withLock {
            for case let item? in items { lastWrites[item] = now }
            if lastWrites.count > 4096 { lastWrites = lastWrites.filter { now - $0.value < 1 } }
        }
    }

    /// Whether the mount wrote `item` within the last `seconds` (or is writing it now).
    package func isWriting(_ item: ItemName, within seconds: Double) -> Bool {
        let now = monotonicSeconds()
        return lock.withLock { holds[item] != nil || (lastWrites[item].map { now - $0 < seconds } ?? false) }
    }

    private func isHeldByClient(_ item: ItemName) -> Bool {
        lock.withLock { (clientLockCounts[item] ?? 0) > 0 }
    }

    /// A client's flock through the mount on open file `handle` of `item` succeeded (or was released).
    package func clientLockChanged(handle: UInt64, item: ItemName, locked: Bool) {
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
