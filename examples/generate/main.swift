// queryfs-sample: writes a deterministic sample reading list in the
// Hipstapaper format — `<UUID>.hpwebsite/payload.plist`, sometimes
// `image.jpg` — for the README's demo and for benchmarks.
//
//   queryfs-sample [--count N] [--seed S] OUTDIR
//
// The same count and seed always give the same names, payloads and mtimes.

#if canImport(Glibc)
import Glibc
#endif

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
}

let subjects = ["Swift", "Linux", "FUSE", "inotify", "Git", "Rust", "SQLite", "Kernel", "Unicode", "Climbing",
                "Coffee", "Typography", "Bread", "Jazz", "Chess", "Sailing", "Photography", "Maps"]
let shapes = ["Notes on %", "% in Practice", "The Epic Search for %", "Why % Matters", "% Part %n",
              "A Field Guide to %", "Understanding % (%n/12)", "% vs. Everything", "Ten Things About %",
              "%: Lessons Learned"]
let hosts = ["example.com", "blog.example.org", "news.example.net", "docs.example.io"]
let tagNames = ["swift", "linux", "to read", "reference", "long read", "rock/metal", "Work", "work", "recipes",
                "kernel", "unicode", "photography"]

func die(_ message: String) -> Never {
    let line = Array("queryfs-sample: \(message)\n".utf8)
    line.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    exit(2)
}

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

func hex(_ value: UInt64, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}

func uuid(_ random: inout SeededGenerator) -> String {
    let a = random.next(), b = random.next()
    return "\(hex(a >> 32, digits: 8))-\(hex((a >> 16) & 0xFFFF, digits: 4))-\(hex(a & 0xFFFF, digits: 4))-"
        + "\(hex(b >> 48, digits: 4))-\(hex(b & 0xFFFF_FFFF_FFFF, digits: 12))"
}

func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { die("cannot create \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
            guard written > 0 else { die("cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}

func setTimes(_ path: String, seconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
    _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
}

func payload(title: String, url: String, archived: Bool, tags: [String]) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    \t<key>isArchived</key>
    \t<\(archived ? "true" : "false")/>
    \t<key>tags</key>
    \t<array>
    \(tags.map { "\t\t<string>\(xmlEscaped($0))</string>\n" }.joined())\t</array>
    \t<key>webLocation</key>
    \t<dict>
    \t\t<key>relative</key>
    \t\t<string>\(xmlEscaped(url))</string>
    \t</dict>
    \t<key>webTitle</key>
    \t<string>\(xmlEscaped(title))</string>
    </dict>
    </plist>

    """
}

// MARK: Arguments

var count = 48
var seed: UInt64 = 1
var output: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--count":
        guard let value = arguments.next().flatMap({ Int($0) }), value >= 0 else { die("--count takes a number") }
        count = value
    case "--seed":
        guard let value = arguments.next().flatMap({ UInt64($0) }) else { die("--seed takes a number") }
        seed = value
    case "-h", "--help":
        print("usage: queryfs-sample [--count N] [--seed S] OUTDIR")
        exit(0)
    default:
        guard output == nil, !argument.hasPrefix("-") else { die("unexpected argument '\(argument)'") }
        output = argument
    }
}
guard let output else { die("usage: queryfs-sample [--count N] [--seed S] OUTDIR") }
if mkdir(output, 0o755) != 0 && errno != EEXIST { die("cannot create \(output): \(String(cString: strerror(errno)))") }

// MARK: Bundles

var random = SeededGenerator(state: seed)
let now = 1_767_225_600  // 2026-01-01: fixed, so output does not depend on the day it runs
for index in 0..<count {
    let subject = random.pick(subjects)
    var title = random.pick(shapes).replacingOccurrences("%n", "\(random.below(30) + 1)")
    title = title.replacingOccurrences("%", subject)
    if random.chance(3) { title += "  " }  // trailing white space, trimmed in entry names
    let url = "https://\(random.pick(hosts))/\(subject.lowercased())/\(index)"
    let archived = random.chance(20)
    var tags: [String] = []
    for _ in 0..<random.below(4) {
        let tag = random.pick(tagNames)
        if !tags.contains(tag) { tags.append(tag) }
    }
    let bundle = "\(output)/\(uuid(&random)).hpwebsite"
    if mkdir(bundle, 0o755) != 0 && errno != EEXIST { die("cannot create \(bundle): \(String(cString: strerror(errno)))") }
    writeFile("\(bundle)/payload.plist", Array(payload(title: title, url: url, archived: archived, tags: tags).utf8))
    let modified = now - random.below(365 * 86_400)
    setTimes("\(bundle)/payload.plist", seconds: modified)
    if random.chance(10) {
        var image: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
        for _ in 0..<(256 + random.below(2048)) { image.append(UInt8(truncatingIfNeeded: random.next())) }
        writeFile("\(bundle)/image.jpg", image)
        setTimes("\(bundle)/image.jpg", seconds: modified - random.below(86_400))
    }
    setTimes(bundle, seconds: modified - random.below(3600))
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
