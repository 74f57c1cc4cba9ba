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
}
