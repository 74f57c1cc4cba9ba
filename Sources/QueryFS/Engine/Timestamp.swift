#if canImport(Glibc)
import Glibc
#endif

/// A point in time with the nanosecond precision of the filesystem.
public struct Timestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var seconds: Int64
    public var nanoseconds: UInt32

    public init(seconds: Int64, nanoseconds: UInt32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public static let distantPast = Timestamp(seconds: .min)

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.seconds != b.seconds ? a.seconds < b.seconds : a.nanoseconds < b.nanoseconds
    }

    /// Seconds since 1970 as a floating-point value (for display and queries).
    public var timeInterval: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    public var description: String { "\(seconds).\(nanoseconds)" }
}

extension Timestamp {
    /// The wall clock now (CLOCK_REALTIME), as file times are stamped.
    public static var now: Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(seconds: Int64(time.tv_sec), nanoseconds: UInt32(time.tv_nsec))
    }
}
