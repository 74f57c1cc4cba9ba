#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import QueryFSEngine

/// Runs `body` on a thread of its own and waits for it at most `seconds`:
/// `.some(result)` when it returned in time, nil when it did not (it goes
/// on, abandoned, and ends with the process) or no thread could be started.
/// For reads through a FUSE mount from a command: a mount whose daemon is
/// stopped or hung never answers, and a system call waiting on it cannot be
/// interrupted from inside the process (found from outside: `queryfs ls
/// BACKING` with its mount's daemon stopped hung for good).
package func answerWithin<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () -> T) -> T? {
    let slot = AnswerSlot<T>()
    let done = DispatchSemaphore(value: 0)
    guard startThread(named: "queryfs-ask", {
        let value = body()
        slot.lock.withLock { slot.value = value }
        done.signal()
    }) else { return nil }
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return slot.lock.withLock { slot.value }
}

/// Where the thread leaves its answer.
private final class AnswerSlot<T>: @unchecked Sendable {
    let lock = PlainLock()
    var value: T?
}

/// How long a command waits for a mount to answer before it goes on without it.
package let mountAnswerSeconds = 3.0
