#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex for state that is not `Sendable` (such as the live
/// index): Swift's `Mutex` insists on `sending` values in and out, which
/// shared, long-lived objects cannot satisfy.
package final class PlainLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// `body` under the lock if it is free now; nil, without waiting, if not.
    package func withLockIfFree<R>(_ body: () throws -> R) rethrows -> R? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
