/// Turns a query's value text into the typed value its field compares with:
/// dates (ISO 8601, or an age such as `7d` counted back from now), sizes
/// with units, booleans, numbers; payload values take the type they look like.
enum QueryValues {
    static func value(_ text: String, for field: Field, now: Timestamp, at position: Int) throws(QueryError) -> FieldValue {
        switch field {
        case .modified, .created:
            if let seconds = age(text) {
                guard seconds <= maximumAge, let date = Timestamp(secondsSince1970: now.timeInterval - seconds) else {
                    throw QueryError("the age '\(text)' is out of range (at most \(Int(maximumAge / 31_536_000)) years)", at: position)
                }
                return .date(date)
            }
            guard let date = ISO8601.parse(text).flatMap(Timestamp.init(secondsSince1970:)) else {
                throw QueryError("'\(text)' is not a date (2024-05-01, 2024-05-01T10:00:00Z) or an age (30m, 12h, 7d, 2w, 1y)", at: position)
            }
            return .date(date)
        case .size:
            guard let bytes = size(text) else {
                throw QueryError("'\(text)' is not a size (512, 10KB, 10MB, 1GiB)", at: position)
            }
            guard bytes <= maximumSize else {
                throw QueryError("the size '\(text)' is out of range (at most 8 EiB)", at: position)
            }
            return .number(bytes)
        case .archived:
            guard let flag = bool(text) else { throw QueryError("'\(text)' is not true or false", at: position) }
            return .bool(flag)
        case .name, .ext, .title, .url, .tags, .conflict:
            return .text(text)
        case .payload:
            // `1` and `0` are numbers here (a payload's count or rating is
            // far likelier than a flag written as a digit); compared with a
            // boolean value they still hold as true and false (`FieldValue.compare`).
            if let number = Double(text) { return .number(number) }
            if let flag = bool(text) { return .bool(flag) }
            if text.first?.isNumber == true, let date = ISO8601.parse(text).flatMap(Timestamp.init(secondsSince1970:)) {
                return .date(date)
            }
            // Shaped as a date but none (2023-02-29): refused as for `modified`, not compared as text (found from outside).
            if looksLikeADate(text) {
                throw QueryError("'\(text)' is not a date (2024-05-01, 2024-05-01T10:00:00Z); quote it to compare text", at: position)
            }
            return .text(text)
        }
    }

    /// `YYYY-MM-DD` at the start.
    static func looksLikeADate(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(10))
        guard bytes.count == 10 else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index == 4 || index == 7 ? byte == UInt8(ascii: "-") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }

    /// Bytes. KB, MB, GB are powers of 1000; KiB, MiB, GiB of 1024.
    static func size(_ text: String) -> Double? {
        let digits = text.prefix { $0.isNumber || $0 == "." }
        guard let number = Double(digits) else { return nil }
        let units: [String: Double] = [
            "": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
            "k": 0x1p10, "m": 0x1p20, "g": 0x1p30, "kib": 0x1p10, "mib": 0x1p20, "gib": 0x1p30, "tib": 0x1p40,
        ]
        guard let unit = units[text.dropFirst(digits.count).lowercased()] else { return nil }
        return number * unit
    }

    /// The longest age a query may name: a million years. Longer ones
    /// (`1e300d`, `infd`) are refused with their column rather than carried
    /// into a date no clock holds.
    static let maximumAge = 1_000_000.0 * 31_536_000

    /// The largest size a query may name (2⁶³ bytes; a file cannot be larger).
    static let maximumSize = 0x1p63

    /// The seconds of an age such as `7d`, or nil if `text` is not one
    /// (infinity and NaN are not; a huge but finite age is, and is then
    /// refused as out of range).
    static func age(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400, "y": 365 * 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count.isFinite, count >= 0 else {
            return nil
        }
        let seconds = count * unit
        return seconds.isFinite ? seconds : .greatestFiniteMagnitude
    }
}

extension Timestamp {
    /// A date (ISO 8601) or an age counted back from `now` (`5m`, `7d`), as
    /// queries read them; nil if it is neither, or out of range.
    package init?(dateOrAge text: String, now: Timestamp) {
        guard case .date(let date)? = try? QueryValues.value(text, for: .modified, now: now, at: 0) else { return nil }
        self = date
    }
}
