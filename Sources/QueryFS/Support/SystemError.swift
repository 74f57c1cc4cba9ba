#if canImport(Glibc)
import Glibc
#endif

/// An errno from a failed system call, with the call and path it came from,
/// so that one line can tell the user what went wrong and where.
public struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    public let errno: Int32
    public let operation: String
    public let path: String
    /// Said instead of strerror's text when errno alone would mislead
    /// ("not a regular file" rather than "Invalid argument").
    public let detail: String?

    public init(errno: Int32, operation: String, path: String = "", detail: String? = nil) {
        self.errno = errno
        self.operation = operation
        self.path = path
        self.detail = detail
    }

    /// Captures the current `errno` for `operation`.
    public static func current(_ operation: String, path: String = "") -> SystemError {
        SystemError(errno: Glibc.errno, operation: operation, path: path)
    }

    public var message: String { detail ?? String(cString: strerror(errno)) }

    public var description: String {
        path.isEmpty ? "\(operation): \(message)" : "\(path): \(message)"
    }
}

/// Retries a system call interrupted by a signal.
@inline(__always)
func retryingOnEINTR<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -1 && Glibc.errno == EINTR { continue }
        return result
    }
}
