import QueryFSEngine

/// A value written into YAML front matter: plain where YAML reads it back
/// as the same text (a title, a tag), else double-quoted with escapes.
enum YAMLText {
    static func render(_ text: String, inFlow: Bool = false, style: YAMLBlockLayout.Style? = nil) -> String {
        switch style {
        case .singleQuoted? where !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
                                                                     || $0 == "\u{2028}" || $0 == "\u{2029}" }):
            return "'" + text.replacingOccurrences("'", "''") + "'"
        case .doubleQuoted?:
            return doubleQuoted(text)
        default:
            return isPlain(text, inFlow: inFlow) ? text : doubleQuoted(text)
        }
    }

    static func render(_ value: PayloadValue) throws(FrontMatterError) -> String {
        switch value {
        case .string(let text): render(text)
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .real(let number) where number.isNaN: ".nan"
        case .real(let number) where number.isInfinite: number < 0 ? "-.inf" : ".inf"
        case .real(let number): String(number)  // `5.0`, `1e+20`: floats to YAML's core schema
        default: throw FrontMatterError(message: "\(value.typeName) values cannot be written into front matter")
        }
    }

    /// Whether YAML reads `text` unquoted as this very string: no indicator
    /// first, no `: ` or ` #` inside, no blank at either end, nothing that
    /// reads as another type (`true`, `null`, `12`, `1e3`).
    private static func isPlain(_ text: String, inFlow: Bool) -> Bool {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else { return false }
        if "-?:,[]{}#&*!|>'\"%@`".unicodeScalars.contains(first) || first == " " || last == " " || last == ":" { return false }
        // Controls, C1 controls (U+0085 is a line break to YAML), the line separators, and what YAML does not print:
        // raw, the read-back check refused the edit (found from outside: a title with U+2028).
        if text.unicodeScalars.contains(where: {
            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{FEFF}" || $0 == "\u{2028}" || $0 == "\u{2029}"
                || $0.value == 0xFFFE || $0.value == 0xFFFF
        }) { return false }
        if text.contains(": ") || text.contains(" #") { return false }
        if inFlow, text.unicodeScalars.contains(where: { ",[]{}".unicodeScalars.contains($0) }) { return false }
        let lowered = text.lowercased()
        if ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".nan", ".inf", "-.inf", "+.inf"].contains(lowered) { return false }
        if Double(text) != nil || Int(text) != nil || text.hasPrefix("0x") || text.hasPrefix("0o") { return false }
        // A date or time reads as one.
        if let digit = text.first, digit.isNumber, text.contains("-") || text.contains(":") { return false }
        return true
    }

    /// JSON's string literal is a YAML double-quoted scalar.
    private static func doubleQuoted(_ text: String) -> String { JSON.string(text) }
}

/// A value written into TOML front matter: a basic string with escapes, a boolean or a number.
enum TOMLText {
    /// JSON's string literal is a TOML basic string (the same escapes, `\uXXXX` included).
    static func render(_ text: String) -> String { JSON.string(text) }

    static func render(_ value: PayloadValue) throws(FrontMatterError) -> String {
        switch value {
        case .string(let text): render(text)
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .real(let number) where number.isNaN: "nan"
        case .real(let number) where number.isInfinite: number < 0 ? "-inf" : "inf"
        case .real(let number): String(number)
        default: throw FrontMatterError(message: "\(value.typeName) values cannot be written into front matter")
        }
    }
}

extension String {
    /// Every `target` replaced (Foundation-free).
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
