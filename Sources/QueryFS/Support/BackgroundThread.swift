#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// Starts `body` on a dedicated POSIX thread (not a Swift concurrency
/// executor: the watcher blocks in poll(2), and FUSE notifications must come
/// from a thread that no request handler waits on). `name` is what
/// `top -H`, `ps -L` and /proc/PID/task/*/comm show (at most 15 bytes), so a
/// busy thread can be told apart from the others.
@discardableResult
func startThread(named name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    let box = Unmanaged.passRetained(Box({
        // Only a diagnostic: prctl fails only for a bad pointer, and a longer name is cut, not refused.
        _ = qfs_name_thread(name)
        body()
    })).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        return nil
    }
    return thread
}

/// Monotonic clock in seconds.
func monotonicSeconds() -> Double {
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
