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
