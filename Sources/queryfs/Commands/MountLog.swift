#if canImport(Glibc)
import Glibc
#endif

/// Where a mount's log lines go: the `--log` file from the first line on
/// (so what happens while the mount comes up is there too), else stderr —
/// the terminal while `mount` waits, nothing once the daemon is detached.
final class MountLog: @unchecked Sendable {
    private let fd: Int32

    init(path: String?) {
        fd = path.map { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } ?? -1
        if let path, fd < 0 { printError("cannot open the log \(path): \(String(cString: strerror(errno))); logging to stderr") }
    }

    func write(_ message: String) {
        guard fd >= 0 else { return printError(message) }
        // One write per line: lines from several threads never interleave.
        let line = Array("queryfs: \(message)\n".utf8)
        line.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress!, $0.count) }
    }
}
