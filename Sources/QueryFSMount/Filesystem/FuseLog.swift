#if canImport(Glibc)
import Glibc
#endif
import CFuse
import Logging
import Synchronization
import QueryFSEngine
import QueryFSCollection

/// libfuse's own messages ("fuse: unknown option(s): `-o x'", "fuse: reading
/// device: …"), taken from its stderr and kept: while the session is being
/// set up they become part of the one error line queryfs prints (SPEC §3: one
/// clear line, not libfuse's line and then ours); afterwards they go to the
/// mount's log.
enum FuseLog {
    private static let pending = Mutex<[String]>([])
    private static let sink = Mutex<Logger?>(nil)

    /// Routes libfuse's messages here from now on; a logger receives those
    /// that come once setup is over (`forward`).
    static func capture() {
        pending.withLock { $0.removeAll() }
        sink.withLock { $0 = nil }
        fuse_set_log_func(receive)
    }

    /// The messages collected since `capture`, as one clause ("unknown option(s): `-o x'").
    static func takeMessages() -> String? {
        let messages = pending.withLock { messages in defer { messages.removeAll() }; return messages }
        guard !messages.isEmpty else { return nil }
        return messages.map { $0.hasPrefix("fuse: ") ? String($0.dropFirst(6)) : $0 }.joined(separator: "; ")
    }

    /// From now on, messages go straight to `logger`, at libfuse's level.
    static func forward(to logger: Logger) {
        sink.withLock { $0 = logger }
    }

    private static let receive: fuse_log_func_t = { level, format, arguments in
        guard let format, let arguments else { return }
        var buffer = [CChar](repeating: 0, count: 1024)
        _ = vsnprintf(&buffer, buffer.count, format, arguments)
        var message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        while message.hasSuffix("\n") { message.removeLast() }
        guard !message.isEmpty else { return }
        if let logger = FuseLog.sink.withLock({ $0 }) {
            logger.log(level: Self.level(of: level), "\(message)")
        } else {
            FuseLog.pending.withLock { $0.append(message) }
        }
    }

    /// swift-log's level for libfuse's (syslog's priorities).
    private static func level(of level: fuse_log_level) -> Logger.Level {
        switch level {
        case FUSE_LOG_EMERG, FUSE_LOG_ALERT, FUSE_LOG_CRIT: .critical
        case FUSE_LOG_ERR: .error
        case FUSE_LOG_WARNING: .warning
        case FUSE_LOG_NOTICE: .notice
        case FUSE_LOG_INFO: .info
        default: .debug
        }
    }
}
