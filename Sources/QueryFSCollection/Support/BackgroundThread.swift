#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// Starts `body` on a dedicated POSIX thread (not a Swift concurrency
/// executor: the watcher blocks in poll(2), and FUSE notifications must come
/// from a thread that no request handler waits on). `name` is what
/// `top -H`, `ps -L` and /proc/PID/task/*/comm show (at most 15 bytes), so a
/// busy thread can be told apart from the others. Returns whether it started.
///
/// Detached: nobody joins these threads, and a joinable thread that ends
/// unjoined keeps its 8 MB stack mapped and its touched pages resident. The
/// link warmer starts sixteen per listing read: a 30-minute soak at 2,000
/// items left 24,784 dead threads' stacks, 282 MB resident.
@discardableResult
package func startThread(named name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    let box = Unmanaged.passRetained(Box({
        // Only a diagnostic: prctl fails only for a bad pointer, and a longer name is cut, not refused.
        _ = qfs_name_thread(name)
        body()
    })).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    // Fails only for an invalid state constant.
    _ = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let result = pthread_create(&thread, &attributes, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        return false
    }
    return true
}

/// Monotonic clock in seconds.
package func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The wall clock in nanoseconds since 1970: what file times are compared with.
func realtimeNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
}
