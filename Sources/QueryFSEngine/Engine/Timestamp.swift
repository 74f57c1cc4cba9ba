#if canImport(Glibc)
import Glibc
#endif

/// A point in time with the nanosecond precision of the filesystem.
package struct Timestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var seconds: Int64
    package var nanoseconds: UInt32

    package init(seconds: Int64, nanoseconds: UInt32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    package static let distantPast = Timestamp(seconds: .min)

    package static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.seconds != b.seconds ? a.seconds < b.seconds : a.nanoseconds < b.nanoseconds
    }

    package static let distantFuture = Timestamp(seconds: .max, nanoseconds: 999_999_999)

    /// The instant `seconds` after 1970, or nil when `seconds` is not a
    /// finite number inside what a Timestamp holds (about ±292 billion
    /// years): converting such a Double to Int64 would trap.
    package init?(secondsSince1970 seconds: Double) {
        guard seconds.isFinite else { return nil }
        let whole = seconds.rounded(.down)
        guard let wholeSeconds = Int64(exactly: whole) else { return nil }
        let fraction = ((seconds - whole) * 1e9).rounded(.down)
        self.init(seconds: wholeSeconds, nanoseconds: UInt32(min(999_999_999, max(0, fraction))))
    }

    /// The same, with values past either end held at that end; nil only for NaN.
    package init?(clampingSecondsSince1970 seconds: Double) {
        if seconds.isNaN { return nil }
        if let exact = Timestamp(secondsSince1970: seconds) {
            self = exact
        } else {
            self = seconds < 0 ? .distantPast : .distantFuture
        }
    }

    /// Seconds since 1970 as a floating-point value (for display and queries).
    package var timeInterval: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    package var description: String { "\(seconds).\(nanoseconds)" }
}

extension Timestamp {
    /// The wall clock now (CLOCK_REALTIME), as file times are stamped.
    package static var now: Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(seconds: Int64(time.tv_sec), nanoseconds: UInt32(time.tv_nsec))
    }
}
