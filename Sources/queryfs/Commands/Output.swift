#if canImport(Glibc)
import Glibc
#endif

/// Buffered writes of raw bytes to stdout: entry names and targets are
/// bytes (item names need not be UTF-8), and 100,000 lines must be quick.
struct StandardOutput {
    private var buffer: [UInt8] = []
    /// Said after a write failure's reason: what was done all the same
    /// (an undo whose output is lost was still made: a script that retried
    /// on status 2 took back a second edit, found from outside).
    private let doneAnyway: String?

    init(doneAnyway: String? = nil) {
        self.doneAnyway = doneAnyway
        buffer.reserveCapacity(1 << 16)
    }

    mutating func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func write(_ text: String) { write(Array(text.utf8)) }

    mutating func line(_ text: String) { write(Array(text.utf8) + [0x0A]) }

    /// Writes what is buffered. A reader gone (`| head`: EPIPE, where
    /// SIGPIPE is ignored) ends the command quietly, as SIGPIPE would; any
    /// other failure (a full disk, `> /dev/full`, stdout closed) ends it with
    /// one line and status 2, as `ls` does: the output is not what was asked
    /// (found from outside: a truncated list exited 0, and `watch` wrote
    /// into a full disk for good).
    mutating func flush() {
        guard !buffer.isEmpty else { return }
        if StandardDescriptors.outputWasClosed { fail(EBADF) }
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(1, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE { exit(128 + SIGPIPE) }
                    fail(errno)
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private func fail(_ code: Int32) -> Never {
        printError("cannot write the output: \(String(cString: strerror(code)))" + (doneAnyway.map { " (\($0))" } ?? ""))
        exit(2)
    }
}

extension StandardOutput {
    /// Flushes and ends the process at once, with status 0: a command that
    /// loaded 100,000 items would otherwise spend a fifth of its time
    /// freeing them one by one on the way out (measured: `perf record`
    /// of `queryfs ls BACKING tag/x`), for nothing the kernel does not do.
    mutating func finish() -> Never {
        flush()
        exit(0)
    }
}

