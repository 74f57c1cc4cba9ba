/// Names and payload text made safe for one line of a terminal or of a
/// tab-separated output: a backslash, tab, newline, carriage return and
/// every other control character (C0, DEL) written as an escape, so no
/// name or value can forge a line or a field, or send a terminal sequence
/// (found from outside: an item name's ESC reached the terminal from
/// `status`, a tag's tab in `history` looked like a field separator).
package enum TerminalText {
    /// `text` escaped; with `quoting`, a `"` too (for a value printed in
    /// quotes); without `backslashes`, a backslash stays one (a message, read
    /// by people: a path's backslash doubled would only mislead).
    package static func escaped(_ text: String, quoting: Bool = false, backslashes: Bool = true) -> String {
        let special = { (byte: UInt8) in
            (needsEscape(byte) && (backslashes || byte != UInt8(ascii: "\\"))) || (quoting && byte == UInt8(ascii: "\""))
        }
        guard text.utf8.contains(where: special) || text.unicodeScalars.contains(where: isWideControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x80, special(UInt8(scalar.value)), let escape = escape(UInt8(scalar.value), quoting: quoting) {
                result += escape
            } else if isWideControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `bytes` (a name, any bytes) with the same escapes; other bytes, valid UTF-8 or not, as they are.
    package static func escaped(_ bytes: [UInt8]) -> [UInt8] {
        // 0xC2 and 0xE2 lead the UTF-8 of C1 controls and of U+2028/U+2029.
        guard bytes.contains(where: { needsEscape($0) || $0 == 0xC2 || $0 == 0xE2 }) else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let wide: UInt32? = if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                UInt32(bytes[index + 1])
            } else if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                0x2000 + UInt32(bytes[index + 2]) - 0x80
            } else { nil }
            if let wide {
                result += Array("\\u{\(String(wide, radix: 16))}".utf8)
                index += wide > 0xFF ? 3 : 2
                continue
            }
            if let escape = escape(byte, quoting: false) { result += Array(escape.utf8) } else { result.append(byte) }
            index += 1
        }
        return result
    }

    /// C1 controls (U+0080–U+009F: U+009B starts a terminal sequence as ESC [ does,
    /// U+0085 is a line break) and the line and paragraph separators (U+2028, U+2029).
    package static func isWideControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x80...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") }

    private static func escape(_ byte: UInt8, quoting: Bool) -> String? {
        switch byte {
        case UInt8(ascii: "\\"): return "\\\\"
        case UInt8(ascii: "\t"): return "\\t"
        case UInt8(ascii: "\n"): return "\\n"
        case UInt8(ascii: "\r"): return "\\r"
        case UInt8(ascii: "\""): return quoting ? "\\\"" : nil
        case 0..<0x20, 0x7F:
            let hex = String(byte, radix: 16)
            return "\\x" + (hex.count == 1 ? "0" : "") + hex
        default: return nil
        }
    }
}
