// What every shape shares: the seeded generator, writing files and their
// times, escaping for the formats the shapes write, and calendar dates.
// Glibc only, no Foundation: the sample must build and run anywhere the
// package does, and give the same bytes everywhere.

#if canImport(Glibc)
import Glibc
#endif

/// The instant every shape counts back from (2026-01-01T00:00:00Z): fixed, so
/// output does not depend on the day it runs.
let referenceNow = 1_767_225_600

/// SplitMix64: small, fast, and the same on every machine.
struct SeededGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ options: [T]) -> T { options[below(options.count)] }

    /// Up to `most` distinct picks (fewer when a pick repeats): tag lists of
    /// varied length without duplicates.
    mutating func distinct<T: Equatable>(_ options: [T], upTo most: Int) -> [T] {
        var chosen: [T] = []
        for _ in 0..<most {
            let option = pick(options)
            if !chosen.contains(option) { chosen.append(option) }
        }
        return chosen
    }

    /// `count` bytes of noise: file contents that only need a size.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}

// MARK: Failing

func die(_ message: String) -> Never {
    let line = Array("queryfs-sample: \(message)\n".utf8)
    line.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    exit(2)
}

func errorText() -> String { String(cString: strerror(errno)) }

// MARK: Files

func makeDirectory(_ path: String) {
    if mkdir(path, 0o755) != 0 && errno != EEXIST { die("cannot create \(path): \(errorText())") }
}

func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { die("cannot create \(path): \(errorText())") }
    defer { close(fd) }
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
            guard written > 0 else { die("cannot write \(path): \(errorText())") }
            offset += written
        }
    }
}

func setTimes(_ path: String, seconds: Int, nanoseconds: Int = 0) {
    var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
    _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
}

/// Writes files at paths relative to a root, making the folders on the way,
/// and gives each file the time it is written with. Writing into a folder
/// changes the folder's time, so `finish()` sets every folder's time last: to
/// the newest time inside it, as a copy that keeps times would leave it. Every
/// time in the tree then follows from the seed alone.
struct TreeWriter {
    let root: String
    private var folderTimes: [String: Int] = [:]  // relative folder path → newest time inside

    init(root: String) {
        self.root = root
        makeDirectory(root)
    }

    mutating func write(_ relative: String, _ bytes: [UInt8], time: Int) {
        makeParents(of: relative, time: time)
        let path = "\(root)/\(relative)"
        writeFile(path, bytes)
        setTimes(path, seconds: time)
    }

    mutating func write(_ relative: String, text: String, time: Int) {
        write(relative, Array(text.utf8), time: time)
    }

    /// Makes a folder that may stay empty (a notes folder nothing fell into).
    mutating func makeFolder(_ relative: String, time: Int) {
        makeParents(of: relative + "/", time: time)
    }

    /// The folders are made on first use; each remembers the newest time below it.
    private mutating func makeParents(of relative: String, time: Int) {
        var folder = ""
        for component in relative.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            folder = folder.isEmpty ? String(component) : "\(folder)/\(component)"
            if let newest = folderTimes[folder] {
                folderTimes[folder] = max(newest, time)
            } else {
                makeDirectory("\(root)/\(folder)")
                folderTimes[folder] = time
            }
        }
    }

    /// Called once every file is written; in a fixed order, as everything here.
    func finish() {
        for (folder, time) in folderTimes.sorted(by: { $0.key < $1.key }) { setTimes("\(root)/\(folder)", seconds: time) }
    }
}

// MARK: Escaping

/// Text content of XML elements (the plist payloads): `&`, `<` and `>`.
func xmlEscaped(_ text: String) -> String {
    var out = ""
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        default: out.append(character)
        }
    }
    return out
}

/// Attribute values and text alike (XMP, HTML): quotes too, so one function
/// serves both places.
func markupEscaped(_ text: String) -> String {
    xmlEscaped(text).replacingOccurrences("\"", "&quot;").replacingOccurrences("'", "&apos;")
}

/// The inside of a JSON, TOML or YAML double-quoted string: the three share
/// `\"`, `\\` and `\uXXXX` for control characters.
func quotedEscaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u" + hex(UInt64(scalar.value), digits: 4)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

func quoted(_ text: String) -> String { "\"\(quotedEscaped(text))\"" }

func hex(_ value: UInt64, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}

func padded(_ value: Int, _ digits: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}

func uuid(_ random: inout SeededGenerator) -> String {
    let a = random.next(), b = random.next()
    return "\(hex(a >> 32, digits: 8))-\(hex((a >> 16) & 0xFFFF, digits: 4))-\(hex(a & 0xFFFF, digits: 4))-"
        + "\(hex(b >> 48, digits: 4))-\(hex(b & 0xFFFF_FFFF_FFFF, digits: 12))"
}

// MARK: JSON

/// A JSON value whose objects keep their keys in order, so the files read
/// like the tools' own (and stay byte-for-byte the same for a seed).
indirect enum JSON {
    case string(String)
    case int(Int)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    /// `indent` nil: one line, as yt-dlp writes; else pretty, as ArchiveBox does.
    func rendered(indent: Int? = nil, depth: Int = 0) -> String {
        switch self {
        case .string(let text): return quoted(text)
        case .int(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let items):
            return Self.joined(items.map { $0.rendered(indent: indent, depth: depth + 1) }, "[", "]", indent, depth)
        case .object(let members):
            let separator = indent == nil ? ":" : ": "
            let parts = members.map { quoted($0.0) + separator + $0.1.rendered(indent: indent, depth: depth + 1) }
            return Self.joined(parts, "{", "}", indent, depth)
        }
    }

    private static func joined(_ parts: [String], _ open: String, _ close: String, _ indent: Int?, _ depth: Int) -> String {
        guard let indent, !parts.isEmpty else { return open + parts.joined(separator: indent == nil ? "," : ", ") + close }
        let inner = String(repeating: " ", count: indent * (depth + 1))
        let outer = String(repeating: " ", count: indent * depth)
        return open + "\n" + parts.map { inner + $0 }.joined(separator: ",\n") + "\n" + outer + close
    }
}

// MARK: Dates

/// A UTC calendar time from seconds since 1970 (Howard Hinnant's
/// civil-from-days), so dates need neither Foundation nor the time zone.
struct CivilTime {
    let year, month, day, hour, minute, second: Int

    init(_ epoch: Int) {
        let days = epoch >= 0 ? epoch / 86_400 : (epoch - 86_399) / 86_400
        let secondOfDay = epoch - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    /// 2024-03-05
    var date: String { "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))" }
    /// 20240305 (yt-dlp's upload_date)
    var compactDate: String { "\(padded(year, 4))\(padded(month, 2))\(padded(day, 2))" }
    /// 10:15
    var hourMinute: String { "\(padded(hour, 2)):\(padded(minute, 2))" }
    /// 2024-03-05T10:15:00 (no zone)
    var dateTime: String { "\(date)T\(hourMinute):\(padded(second, 2))" }
}

extension String {
    /// Foundation-free replacement of every occurrence of `target`.
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
