#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// An errno from a failed system call, with the call and path it came from,
/// so that one line can tell the user what went wrong and where.
package struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    package let errno: Int32
    package let operation: String
    package let path: String
    /// Said instead of strerror's text when errno alone would mislead
    /// ("not a regular file" rather than "Invalid argument").
    package let detail: String?

    package init(errno: Int32, operation: String, path: String = "", detail: String? = nil) {
        self.errno = errno
        self.operation = operation
        self.path = path
        self.detail = detail
    }

    /// Captures the current `errno` for `operation`.
    package static func current(_ operation: String, path: String = "") -> SystemError {
        SystemError(errno: Glibc.errno, operation: operation, path: path)
    }

    package var message: String { detail ?? String(cString: strerror(errno)) }

    package var description: String {
        path.isEmpty ? "\(operation): \(message)" : "\(path): \(message)"
    }
}

/// Retries a system call interrupted by a signal: the one EINTR policy.
///
/// libfuse's handlers for SIGINT, SIGTERM and SIGHUP are installed without
/// SA_RESTART, so a call that blocks — open (a FIFO, a network filesystem),
/// read and write of pipes and files, fsync, a waiting flock, waitpid — may
/// fail with EINTR on whichever thread takes a signal. Those go through
/// here. Calls that never block (fstat, statx, renameat, unlinkat, a flock
/// with LOCK_NB) are called bare; close is never retried (on Linux the
/// descriptor is gone even when it reports EINTR); poll and the wake
/// signal's wait treat EINTR as "nothing yet", and their callers loop.
@inline(__always)
func retryingOnEINTR<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -1 && Glibc.errno == EINTR { continue }
        return result
    }
}
