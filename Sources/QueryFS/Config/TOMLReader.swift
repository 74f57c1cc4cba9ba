/// Reads the part of TOML that `.queryfs.toml` uses — tables (`[views]`,
/// `[a.b]`), `key = value` with bare or quoted keys, basic and literal
/// strings, booleans, integers and arrays of these (over several lines, with
/// a trailing comma), comments — and says where anything else is, by line and
/// column. (TOMLKit is not among the packages this project can resolve.)
public enum TOMLValue: Equatable, Sendable {
    case string(String)
    case bool(Bool)
    case integer(Int)
    case array([TOMLValue])
}

/// A value with where it was written: line and column of its first character, 1-based.
public struct TOMLEntry: Equatable, Sendable {
    public let value: TOMLValue
    public let line: Int
    public let column: Int
}

public struct TOMLError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public let column: Int
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A document as tables of entries: `tables["views"]["reading/today"]`; the
/// top level is the table "".
public struct TOMLDocument: Equatable, Sendable {
    public private(set) var tables: [String: [String: TOMLEntry]] = ["": [:]]
    /// Where each table header was written (line, column).
    public private(set) var tableLines: [String: Int] = [:]

    public init(parsing text: String) throws(TOMLError) {
        var reader = TOMLReader(text)
        self = try reader.document()
    }

    init() {}

    mutating func set(_ key: String, _ entry: TOMLEntry, in table: String) -> Bool {
        if tables[table]?[key] != nil { return false }
        tables[table, default: [:]][key] = entry
        return true
    }

    mutating func open(_ table: String, line: Int) -> Bool {
        if tableLines[table] != nil { return false }
        tableLines[table] = line
        tables[table, default: [:]] = tables[table] ?? [:]
        return true
    }
}

struct TOMLReader {
    private let characters: [Character]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(_ text: String) { characters = Array(text) }

    private var column: Int { index - lineStart + 1 }
    private var atEnd: Bool { index >= characters.count }
    private var peek: Character? { atEnd ? nil : characters[index] }

    private func error(_ message: String) -> TOMLError { TOMLError(message: message, line: line, column: column) }

    private mutating func advance() {
        if characters[index] == "\n" {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    /// Spaces and tabs only (not newlines).
    private mutating func skipBlanks() {
        while let character = peek, character == " " || character == "\t" { advance() }
    }

    /// Blanks, newlines and comments.
    private mutating func skipBlankLines() {
        while let character = peek {
            if character == " " || character == "\t" || character == "\n" || character == "\r" {
                advance()
            } else if character == "#" {
                while let next = peek, next != "\n" { advance() }
            } else {
                break
            }
        }
    }

    /// After a value or header: nothing but a comment up to the end of the line.
    private mutating func endOfLine() throws(TOMLError) {
        skipBlanks()
        if peek == "#" { while let next = peek, next != "\n" { advance() } }
        if peek == "\r" { advance() }
        guard atEnd || peek == "\n" else { throw error("expected the end of the line, found '\(peek!)'") }
    }

    mutating func document() throws(TOMLError) -> TOMLDocument {
        var document = TOMLDocument()
        var table = ""
        while true {
            skipBlankLines()
            guard let character = peek else { return document }
            if character == "[" {
                let headerLine = line, headerColumn = column
                advance()
                if peek == "[" { throw error("arrays of tables are not supported here") }
                skipBlanks()
                var parts = [try key()]
                skipBlanks()
                while peek == "." {
                    advance()
                    skipBlanks()
                    parts.append(try key())
                    skipBlanks()
                }
                guard peek == "]" else { throw error("expected ']' to close the table name") }
                advance()
                table = parts.joined(separator: ".")
                guard document.open(table, line: headerLine) else {
                    throw TOMLError(message: "table [\(table)] is defined twice", line: headerLine, column: headerColumn)
                }
                try endOfLine()
                continue
            }
            let keyLine = line, keyColumn = column
            let name = try key()
            skipBlanks()
            if peek == "." { throw error("dotted keys are not supported here; quote the key (\"a.b\") or use a [table]") }
            guard peek == "=" else { throw error("expected '=' after the key '\(name)'") }
            advance()
            skipBlanks()
            let entry = try value()
            guard document.set(name, entry, in: table) else {
                throw TOMLError(message: "key '\(name)' is defined twice", line: keyLine, column: keyColumn)
            }
            try endOfLine()
        }
    }

    private mutating func key() throws(TOMLError) -> String {
        guard let character = peek else { throw error("expected a key") }
        if character == "\"" || character == "'" {
            let text = try string()
            return text
        }
        let start = index
        while let next = peek, next.isLetter || next.isNumber || next == "_" || next == "-" { advance() }
        guard index > start else { throw error("expected a key, found '\(character)'") }
        return String(characters[start..<index])
    }

    private mutating func value() throws(TOMLError) -> TOMLEntry {
        let valueLine = line, valueColumn = column
        guard let character = peek else { throw error("expected a value") }
        let value: TOMLValue
        switch character {
        case "\"", "'":
            value = .string(try string())
        case "[":
            advance()
            var elements: [TOMLValue] = []
            while true {
                skipBlankLines()
                if peek == "]" { advance(); break }
                elements.append(try self.value().value)
                skipBlankLines()
                if peek == "," { advance(); continue }
                guard peek == "]" else { throw error(atEnd ? "the array is never closed" : "expected ',' or ']' in the array") }
                advance()
                break
            }
            value = .array(elements)
        case "{":
            throw error("inline tables are not supported here; use a [table]")
        default:
            let start = index
            while let next = peek, !(next == " " || next == "\t" || next == "\n" || next == "\r" || next == "," || next == "]" || next == "#") {
                advance()
            }
            let word = String(characters[start..<index])
            if word == "true" { value = .bool(true) }
            else if word == "false" { value = .bool(false) }
            else if let number = Int(word.replacingOccurrences(of: "_", with: "")) { value = .integer(number) }
            else {
                throw TOMLError(message: word.isEmpty ? "expected a value" : "'\(word)' is not a value this file can hold (strings need quotes)",
                                line: valueLine, column: valueColumn)
            }
        }
        return TOMLEntry(value: value, line: valueLine, column: valueColumn)
    }

    /// A basic ("…", with escapes) or literal ('…') string on one line; multi-line strings are not supported.
    private mutating func string() throws(TOMLError) -> String {
        let quote = peek!
        let startLine = line, startColumn = column
        advance()
        if peek == quote, index + 1 < characters.count, characters[index + 1] == quote {
            throw error("multi-line strings are not supported here")
        }
        var text = ""
        while let character = peek {
            if character == "\n" { break }
            advance()
            if character == quote { return text }
            if quote == "\"", character == "\\" {
                guard let escaped = peek else { break }
                advance()
                switch escaped {
                case "\"": text.append("\"")
                case "\\": text.append("\\")
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                case "b": text.append("\u{08}")
                case "f": text.append("\u{0C}")
                case "u", "U":
                    var hex = ""
                    for _ in 0..<(escaped == "u" ? 4 : 8) {
                        guard let digit = peek, digit.isHexDigit else { break }
                        hex.append(digit)
                        advance()
                    }
                    guard hex.count == (escaped == "u" ? 4 : 8), let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                        throw TOMLError(message: "'\\\(escaped)' takes \(escaped == "u" ? 4 : 8) hex digits of a Unicode scalar",
                                        line: line, column: column - 2 - hex.count)
                    }
                    text.unicodeScalars.append(scalar)
                default: throw TOMLError(message: "unknown escape '\\\(escaped)'", line: line, column: column - 2)
                }
            } else {
                text.append(character)
            }
        }
        throw TOMLError(message: "the string is never closed", line: startLine, column: startColumn)
    }
}

private extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
