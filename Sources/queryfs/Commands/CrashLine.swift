#if canImport(Glibc)
import Glibc
#endif

/// What a crash prints: one `queryfs:` line instead of the Swift runtime's
/// multi-line backtrace (a crash is a bug: nothing from outside should
/// reach one, and the fuzzers look for them). Set QUERYFS_BACKTRACE=1 to
/// keep the runtime's backtrace when debugging.
enum CrashLine {
    static func install() {
        guard getenv("QUERYFS_BACKTRACE") == nil else { return }
        for signal in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = report
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// Async-signal-safe: a fixed message, write(2) and _exit(2) only.
    private static let report: @convention(c) (Int32) -> Void = { signal in
        let reason: StaticString
        switch signal {
        case SIGILL, SIGTRAP: reason = "queryfs: internal error: a runtime check failed (above); please report it with the command that caused it\n"
        case SIGSEGV, SIGBUS: reason = "queryfs: internal error: invalid memory access; please report it with the command that caused it\n"
        case SIGFPE: reason = "queryfs: internal error: arithmetic fault; please report it with the command that caused it\n"
        default: reason = "queryfs: internal error: aborted; please report it with the command that caused it\n"
        }
        _ = write(2, reason.utf8Start, reason.utf8CodeUnitCount)
        _exit(70)  // EX_SOFTWARE
    }
}
