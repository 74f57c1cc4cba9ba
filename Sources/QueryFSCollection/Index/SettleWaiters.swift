import Dispatch
import Synchronization

/// Callers waiting until the watcher has heard and applied everything that
/// happened in BACKING before they asked (`LiveCatalog.waitUntilSettled`):
/// an edit command's change, shown by a running mount of the same
/// directory before the command returns (found from outside: `queryfs tag
/// B X --add new; ls MOUNT/tag/new` failed 20 times in 20, the watcher
/// applying the edit 6–14 ms later).
///
/// A waiter is let go once the watcher is idle (nothing heard and not yet
/// applied) after a wait for events that began after the waiter came: the
/// events of anything done before it are queued by then, so that wait
/// returned them and they were applied.
final class SettleWaiters: Sendable {
    private struct Waiter {
        /// How many waits for events had begun when it came.
        let waitsBegun: UInt64
        let done: DispatchSemaphore
    }

    private let state = Mutex<(waitsBegun: UInt64, waiters: [Waiter])>((0, []))

    /// A semaphore signalled once the watcher has settled (see above).
    func register() -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        state.withLock { $0.waiters.append(Waiter(waitsBegun: $0.waitsBegun, done: done)) }
        return done
    }

    /// Whether anyone waits: the watcher then waits for events without blocking, and comes round again.
    var anyWaiting: Bool { state.withLock { !$0.waiters.isEmpty } }

    /// The watcher is about to wait for events.
    func waitBeginning() { state.withLock { $0.waitsBegun &+= 1 } }

    /// The watcher is idle: lets go of those who came before its last wait began.
    func watcherIsIdle() {
        let due = state.withLock { state -> [Waiter] in
            let (due, rest) = (state.waiters.filter { $0.waitsBegun < state.waitsBegun }, state.waiters.filter { $0.waitsBegun >= state.waitsBegun })
            state.waiters = rest
            return due
        }
        for waiter in due { waiter.done.signal() }
    }

    /// The watcher stopped: nobody waits for it any more.
    func stop() {
        let all = state.withLock { state -> [Waiter] in
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in all { waiter.done.signal() }
    }
}
