import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Where a mount's log lines go: the `--log` file from the first line on
/// (so what happens while the mount comes up is there too), else stderr —
/// the terminal while `mount` waits, nothing once the daemon is detached.
/// Each line comes with the level its caller gave it (swift-log's
/// `Logger`): in the file and on stderr, warnings and errors say so
/// ("queryfs: warning: …"); under systemd (stderr is the journal's stream,
/// `JOURNAL_STREAM`), each line carries its syslog priority instead (`<3>`
/// errors, `<4>` warnings, `<5>` notices, `<6>` information, `<7>`
/// debugging), which journald reads, so `journalctl -p warning` finds what
/// went wrong.
final class MountLog: @unchecked Sendable {
    private let fd: Int32
    private let journal: Bool

    init(path: String?) {
        fd = path.map { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } ?? -1
        if let path, fd < 0 { printError("cannot open the log \(path): \(String(cString: strerror(errno))); logging to stderr") }
        journal = fd < 0 && Self.stderrIsTheJournal()
    }

    /// Whether stderr is the stream systemd named in JOURNAL_STREAM ("device:inode").
    private static func stderrIsTheJournal() -> Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return value == "\(status.st_dev):\(status.st_ino)"
    }

    func write(_ message: String, level: Logger.Level) {
        if journal {
            let line = Array("<\(Self.priority(of: level))>\(message)\n".utf8)
            line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress!, $0.count) }
            return
        }
        let text = Self.label(of: level) + message
        guard fd >= 0 else { return printError(text) }
        // One write per line: lines from several threads never interleave.
        let line = Array("queryfs: \(text)\n".utf8)
        line.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress!, $0.count) }
    }

    /// syslog's priority for a level (what journald reads from `<N>`).
    static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .critical: 2
        case .error: 3
        case .warning: 4
        case .notice: 5
        case .info: 6
        case .debug, .trace: 7
        }
    }

    /// What a line at `level` starts with in a file or on a terminal.
    static func label(of level: Logger.Level) -> String {
        switch level {
        case .critical, .error: "error: "
        case .warning: "warning: "
        default: ""
        }
    }
}

/// swift-log's handler for a mount: every line to `MountLog`, with its level
/// (the journal's priority under systemd).
struct MountLogHandler: LogHandler {
    let log: MountLog
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.write(event.message.description, level: event.level)
    }
}
