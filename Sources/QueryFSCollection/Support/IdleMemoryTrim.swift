#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine

/// Gives memory back once request handlers that allocated and freed a lot
/// have been quiet for `quietSeconds`. Listing a folder of 100,000 entries
/// builds and frees 100,000 names on libfuse's threads, whose malloc arenas
/// glibc never shrinks on its own: 4–10 MB stayed resident at 100,000 items
/// after every view was listed once. Handlers only mark (two atomic
/// operations), and so does the watcher when it drops the index's evaluation
/// cache; the watcher starts each trim on a thread of its own.
package final class IdleMemoryTrim: Sendable {
    package static let quietSeconds = 1.0
    /// `monotonicSeconds()` of the last mark, as its bit pattern.
    private let lastMarked = Atomic<UInt64>(0)
    private let pending = Atomic<Bool>(false)
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    /// Called by a handler that left garbage behind.
    package func mark() {
        lastMarked.store(monotonicSeconds().bitPattern, ordering: .relaxed)
        // The watcher may be waiting with no timeout: woken once per quiet spell.
        if !pending.exchange(true, ordering: .relaxed) { wake() }
    }

    /// Seconds until a trim is due, nil if none is pending.
    var secondsUntilDue: Double? {
        guard pending.load(ordering: .relaxed) else { return nil }
        return max(0, Double(bitPattern: lastMarked.load(ordering: .relaxed)) + Self.quietSeconds - monotonicSeconds())
    }

    /// Trims if the handlers have been quiet long enough (the watcher, after
    /// each wake), on a thread of its own: at 1,000,000 items a trim takes
    /// long enough that a change arriving then waited for it (p99 of a
    /// change 29 ms instead of 14 in the benchmark right after its listings).
    func trimIfDue() {
        guard secondsUntilDue == 0 else { return }
        pending.store(false, ordering: .relaxed)
        if !startThread(named: "queryfs-trim", { MemoryTrim.returnFreedMemory() }) {
            // No thread to be had (EAGAIN): trimmed here, late rather than never.
            MemoryTrim.returnFreedMemory()
        }
    }
}
