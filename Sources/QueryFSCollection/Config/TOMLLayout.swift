import QueryFSEngine
/// Where each key of a TOML document is written, in the order written.
///
/// toml++ (`TOMLDocument`) reads and validates the document but keeps neither the
/// order of keys nor their places, and the configuration needs both: views
/// are listed in the order the user wrote them, and an error about what a
/// valid file says (an unknown field, a view whose query does not parse)
/// still names its line and column. This reads only the layout of a
/// document toml++ has already accepted: table headers, keys (bare,
/// quoted, dotted) and where each value starts; values are skipped, not
/// read. No recursion: nesting costs nothing here.
///
/// Lines and columns are 1-based; columns count Unicode scalars, as
/// toml++'s error positions do.
struct TOMLLayout {
    struct Place: Equatable {
        let line: Int
        let column: Int
    }

    struct Key {
        /// The table path and the (dotted) key: `["views", "reading/today"]`.
        let path: [String]
        let place: Place
        let valuePlace: Place
    }

    private(set) var keys: [Key] = []
    /// `[table]` and `[[array]]` headers, by path.
    private(set) var headers: [(path: [String], place: Place)] = []
    /// What toml++ must not see: places where its parser asserts — in
    /// release builds, assumes — something the input need not hold, so the
    /// input would be undefined behaviour there (all found by fuzzing): a
    /// table header that does not start with a key (`[?`), an array element
    /// that starts with `}` (`a = [ }`), a date-time whose time does not start
    /// with a digit (`2024-01-02T-`), and the line separators U+0085,
    /// U+2028 and U+2029, which it takes for white space where it expects a
    /// value. Refused here with their place, before toml++ reads the text.
    private(set) var problem: (place: Place, message: String)?

    private mutating func noteProblem(_ message: String) {
        if problem == nil { problem = (place, message) }
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    /// Whether the last string read found its closing quote on its line.
    private var lastStringClosed = true
    private var line = 1
    private var lineStart = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        read()
    }

    func key(_ path: [String]) -> Key? { keys.first { $0.path == path } }

    func header(_ path: [String]) -> Place? { headers.first { $0.path == path }?.place }

    /// The place of `path`: its key, else its table header, else nil.
    func place(of path: [String]) -> Place? { key(path)?.place ?? header(path) }

    /// Position of `path` in the document (for writing order), Int.max if absent.
    func order(of path: [String]) -> Int { keys.firstIndex { $0.path == path } ?? Int.max }

    /// `order(of:)` of every key at once.
    func orders() -> [[String]: Int] {
        var orders: [[String]: Int] = [:]
        for (position, key) in keys.enumerated() where orders[key.path] == nil { orders[key.path] = position }
        return orders
    }

    // MARK: Reading

    private var atEnd: Bool { index >= scalars.count }
    private var peek: Unicode.Scalar? { atEnd ? nil : scalars[index] }
    private func peek(_ offset: Int) -> Unicode.Scalar? { index + offset < scalars.count ? scalars[index + offset] : nil }
    private var place: Place { Place(line: line, column: index - lineStart + 1) }

    private mutating func advance() {
        if scalars[index] == "\n" {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    private mutating func skipBlanks() {
        while let scalar = peek, scalar == " " || scalar == "\t" { advance() }
    }

    /// Blanks, newlines and comments.
    private mutating func skipTrivia() {
        while let scalar = peek {
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
                advance()
            } else if scalar == "#" {
                skipToEndOfLine()
            } else {
                return
            }
        }
    }

    private mutating func skipToEndOfLine() {
        while let scalar = peek, scalar != "\n" { advance() }
    }

    private mutating func read() {
        for (offset, scalar) in scalars.enumerated() where scalar == "\u{85}" || scalar == "\u{2028}" || scalar == "\u{2029}" {
            // Its place: count lines up to it.
            index = 0
            while index < offset { advance() }
            noteProblem("the line separator U+\(String(scalar.value, radix: 16, uppercase: true)) is not allowed in this file")
            index = 0
            line = 1
            lineStart = 0
            break
        }
        var table: [String] = []
        while true {
            skipTrivia()
            guard let scalar = peek else { return }
            if scalar == "[" {
                let headerPlace = place
                advance()
                if peek == "[" { advance() }
                skipBlanks()
                if let next = peek, !(next == "]" || next == "\"" || next == "'" || Self.isBareKeyScalar(next)) {
                    noteProblem("expected a table name after '[', found '\(next.escaped(asASCII: true))'")
                }
                table = readKeyPath()
                headers.append((table, headerPlace))
                skipToEndOfLine()
                continue
            }
            let keyPlace = place
            let path = readKeyPath()
            guard peek == "=" else {
                skipToEndOfLine()  // not TOML; toml++ refused it already
                continue
            }
            advance()
            skipBlanks()
            keys.append(Key(path: table + path, place: keyPlace, valuePlace: place))
            skipValue()
        }
    }

    /// `a.b."c d"`: stops before `=` or `]`.
    private mutating func readKeyPath() -> [String] {
        var path: [String] = []
        while true {
            skipBlanks()
            path.append(readKey())
            skipBlanks()
            guard peek == "." else { return path }
            advance()
        }
    }

    private mutating func readKey() -> String {
        guard let scalar = peek else { return "" }
        if scalar == "\"" || scalar == "'" { return readString(quote: scalar) }
        var key = String.UnicodeScalarView()
        while let next = peek, Self.isBareKeyScalar(next) {
            key.append(next)
            advance()
        }
        return String(key)
    }

    private static func isBareKeyScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }

    /// A one-line basic ("…", escapes decoded) or literal ('…') string.
    private mutating func readString(quote: Unicode.Scalar) -> String {
        advance()
        var text = String.UnicodeScalarView()
        lastStringClosed = false
        while let scalar = peek, scalar != "\n" {
            advance()
            if scalar == quote {
                lastStringClosed = true
                break
            }
            if quote == "\"", scalar == "\\", let escaped = peek {
                advance()
                switch escaped {
                case "b": text.append("\u{08}")
                case "t": text.append("\t")
                case "n": text.append("\n")
                case "f": text.append("\u{0C}")
                case "r": text.append("\r")
                case "e": text.append("\u{1B}")
                case "u", "U":
                    var value: UInt32 = 0
                    for _ in 0..<(escaped == "u" ? 4 : 8) {
                        guard let digit = peek, let nibble = Self.hexValue(digit) else { break }
                        value = value << 4 | nibble
                        advance()
                    }
                    if let decoded = Unicode.Scalar(value) { text.append(decoded) }
                default: text.append(escaped)
                }
            } else {
                text.append(scalar)
            }
        }
        return String(text)
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 48
        case "a"..."f": scalar.value - 87
        case "A"..."F": scalar.value - 55
        default: nil
        }
    }

    /// Skips a value up to the end of its line: strings of every kind
    /// (multi-line ones may hold newlines, brackets and `#`), arrays over
    /// several lines, inline tables, comments inside arrays.
    private mutating func skipValue() {
        var open: [Unicode.Scalar] = []
        /// Just after `[` or `,` of an array: the next thing must be an element or `]`.
        var expectingElement = false
        while let scalar = peek {
            if expectingElement, !(scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "#") {
                if scalar == "}" { noteProblem("expected a value or ']' in the array, found '}'") }
                expectingElement = false
            }
            switch scalar {
            case "\"", "'":
                if peek(1) == scalar, peek(2) == scalar {
                    skipMultiLineString(quote: scalar)
                } else {
                    _ = readString(quote: scalar)
                    // Said in our words: toml++ names a control character (the line break) instead.
                    if !lastStringClosed { noteProblem("a string not closed on its line (its closing \(scalar) is missing)") }
                }
                continue
            case "[":
                open.append(scalar)
                expectingElement = true
            case "{": open.append(scalar)
            case "]", "}": _ = open.popLast()
            case ",": expectingElement = open.last == "["
            case "#":
                skipToEndOfLine()
                continue
            case "\n":
                if open.isEmpty { return }
            default:
                if isDateWithoutATime() { noteProblem("a date-time whose time does not start with a digit") }
            }
            advance()
        }
    }

    /// A value `YYYY-MM-DDT` (or `t`) whose next scalar is not a digit:
    /// toml++ then asserts (`parse_time`: the fuzzer's `4046-01-02T--0s`),
    /// where it should report a malformed date-time.
    private func isDateWithoutATime() -> Bool {
        func digit(_ offset: Int) -> Bool { peek(offset).map { $0.properties.numericType != nil && $0.isASCII } ?? false }
        guard digit(0), index == 0 || !(scalars[index - 1].properties.isAlphabetic || scalars[index - 1].properties.numericType != nil) else { return false }
        guard digit(1), digit(2), digit(3), peek(4) == "-", digit(5), digit(6), peek(7) == "-", digit(8), digit(9) else { return false }
        return (peek(10) == "T" || peek(10) == "t") && !digit(11)
    }

    private mutating func skipMultiLineString(quote: Unicode.Scalar) {
        advance(); advance(); advance()
        while let scalar = peek {
            if quote == "\"", scalar == "\\" {
                advance()
                if !atEnd { advance() }
                continue
            }
            if scalar == quote, peek(1) == quote, peek(2) == quote {
                advance(); advance(); advance()
                // Up to two more quotes belong to the content before the delimiter.
                var extra = 0
                while peek == quote, extra < 2 {
                    advance()
                    extra += 1
                }
                return
            }
            advance()
        }
    }
}
