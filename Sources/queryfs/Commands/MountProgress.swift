import Logging
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How far the first scan of a mount is, for whoever waits: on a terminal
/// one line rewritten in place (items, items per second, time left), in a
/// log a line every 5 s, to systemd a `STATUS=`. Silent for the first
/// second, so a fast mount prints nothing.
final class MountProgress: Sendable {
    private struct State {
        var started = monotonicNow()
        var lastShown = 0.0
        var shownOnTerminal = false
    }

    private let state = Mutex(State())
    private let terminal: Bool
    /// Seconds of silence first (QUERYFS_PROGRESS_AFTER overrides, for tests).
    private let quietSeconds: Double
    private let backing: String
    private let logger: Logger

    init(backing: String, logger: Logger) {
        self.backing = backing
        self.logger = logger
        terminal = isatty(2) == 1
        quietSeconds = getenv("QUERYFS_PROGRESS_AFTER").flatMap { Double(String(cString: $0)) } ?? 1
    }

    func report(read: Int, of total: Int) {
        // A start whose index vouched for every item read none: there is
        // no indexing to tell of ("0 of 0 items" was printed at every such start).
        guard total > 0 else { return }
        let line: String? = state.withLock { state in
            let now = monotonicNow()
            let elapsed = now - state.started
            let finished = read >= total
            guard elapsed >= quietSeconds, finished ? state.shownOnTerminal || !terminal : now - state.lastShown >= (terminal ? 0.25 : 5) else { return nil }
            state.lastShown = now
            if terminal { state.shownOnTerminal = true }
            let rate = Double(read) / max(elapsed, 0.001)
            let left = rate > 0 ? Double(total - read) / rate : 0
            return "indexing \(backing): \(read) of \(total) items (\(Int(rate)) items/s"
                + (finished ? ", done in \(Int(elapsed.rounded())) s)" : ", \(Int(left.rounded())) s left)")
        }
        guard let line else { return }
        SystemdNotify.send(["STATUS=\(line)"])
        if terminal {
            let text = "\rqueryfs: \(line)\u{1B}[K" + (read >= total ? "\n" : "")
            _ = text.withCString { write(2, $0, strlen($0)) }
        } else {
            logger.info("\(line)")
        }
    }
}

private func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
