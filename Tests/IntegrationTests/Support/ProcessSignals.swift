import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What another process has done, read from /proc: signals a test waits for
/// instead of sleeping ("give it time") and hoping.
enum ProcessSignals {
    /// How many inotify watches process `pid` holds (its fdinfo's `inotify wd:` lines):
    /// a watcher that prints nothing when ready (`gio monitor`) is ready once this is past 0.
    static func inotifyWatches(of pid: pid_t) -> Int {
        let folder = "/proc/\(pid)/fdinfo"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return descriptors.reduce(0) { count, fd in
            let info = (try? String(contentsOfFile: folder + "/" + fd, encoding: .utf8)) ?? ""
            return count + info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
        }
    }

    /// Whether process `pid` has no signal pending (its own or its thread
    /// group's): every signal sent to it has been handled (or it is gone).
    static func hasNoPendingSignals(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return true }
        let pending = status.split(separator: "\n").filter { $0.hasPrefix("SigPnd:") || $0.hasPrefix("ShdPnd:") }
        return pending.allSatisfy { $0.split(separator: "\t").last.map { UInt64($0, radix: 16) == 0 } ?? false }
    }

    /// Whether process `pid` ignores `signal` (its `SigIgn:` mask): set
    /// once it has gone through its own signal setup.
    static func ignores(_ pid: pid_t, _ signal: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
              let mask = line.split(separator: "\t").last.flatMap({ UInt64($0, radix: 16) })
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }
}
