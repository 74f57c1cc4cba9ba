#if canImport(Glibc)
import Glibc
#endif
import CFuse

/// The names the kernel is to forget (`fuse_lowlevel_notify_inval_entry`),
/// sent by a thread of their own. Dropping a name locks its folder in the
/// kernel, and the kernel holds that lock while a request in the folder
/// waits for its answer: an edit through a view (`rm`, `ln -s`, `mv`) waits
/// for the watcher to update every view before it answers, so the watcher
/// must never wait for a folder lock — it hands names over here and goes on.
/// Folder listings and attributes (`inval_inode`, no folder lock) the watcher
/// still drops itself, before an edit is answered.
final class NameInvalidations: @unchecked Sendable {
    private var queue: [(parent: UInt64, name: [UInt8])] = []
    // Allocated, not stored inline: a pthread object must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var stopped = false
    private var session: OpaquePointer?
    private let log: @Sendable (String) -> Void

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    private var finished = false

    /// Starts sending through `session` (once the mount is live).
    func start(session: OpaquePointer) {
        self.session = session
        startThread { [self] in
            while let batch = next(), let session = self.session {
                let kernel = KernelNotifications(session: session, log: log)
                for (parent, name) in batch { kernel.invalidateEntry(parent: parent, name: name) }
            }
            pthread_mutex_lock(mutex)
            finished = true
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
    }

    func add(parent: UInt64, name: [UInt8]) {
        pthread_mutex_lock(mutex)
        queue.append((parent, name))
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Ends the thread once the names queued so far are sent, and waits
    /// for it (at most a second): the session must outlive every notification.
    func stop() {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_broadcast(condition)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += 1
        while session != nil && !finished {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        pthread_mutex_unlock(mutex)
    }

    private func next() -> [(parent: UInt64, name: [UInt8])]? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while queue.isEmpty && !stopped { pthread_cond_wait(condition, mutex) }
        // Once stopped, what is left is sent and then the thread ends.
        if queue.isEmpty { return nil }
        defer { queue.removeAll() }
        return queue
    }
}
