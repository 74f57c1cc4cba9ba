#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// A queue drained by a thread of its own: producers `add` and go on; the
/// thread hands each batch taken to `drain`. For work that must not run on
/// the thread that finds it (kernel notifications, which may wait on a
/// request handler). `stop` lets what is queued be drained, then ends it.
package final class QueueThread<Element>: @unchecked Sendable {
    private var queue: [Element] = []
    // Allocated, not stored inline: a pthread object must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var started = false
    private var stopped = false
    private var finished = false
    /// The thread's name (see `startThread`).
    private let name: String
    package init(named name: String) {
        self.name = name
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Starts the thread; it runs `prepare` first (a thread setting of its own).
    package func start(prepare: @escaping @Sendable () -> Void = {}, drain: @escaping @Sendable ([Element]) -> Void) {
        pthread_mutex_lock(mutex)
        started = true
        pthread_mutex_unlock(mutex)
        startThread(named: name) { [self] in
            prepare()
            while let batch = next() { drain(batch) }
            pthread_mutex_lock(mutex)
            finished = true
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
    }

    /// Queues an element (dropped once stopped).
    package func add(_ element: Element) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !stopped else { return }
        queue.append(element)
        pthread_cond_signal(condition)
    }

    /// Ends the thread once what is queued is drained, and waits for it (at
    /// most `seconds`); whether it ended.
    @discardableResult
    package func stop(waitingUpTo seconds: Int = 1) -> Bool {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_broadcast(condition)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        while started && !finished {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        let ended = !started || finished
        pthread_mutex_unlock(mutex)
        return ended
    }

    private func next() -> [Element]? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while queue.isEmpty && !stopped { pthread_cond_wait(condition, mutex) }
        if queue.isEmpty { return nil }
        defer { queue.removeAll(keepingCapacity: true) }
        return queue
    }
}
