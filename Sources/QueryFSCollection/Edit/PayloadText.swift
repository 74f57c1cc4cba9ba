import QueryFSEngine
/// Values written as payload text: XML plist elements and JSON literals,
/// as Apple's and common JSON writers write them.
enum PayloadText {
    /// An XML plist element; containers over several lines, their children
    /// indented one tab further than `indent` (the line they start on).
    static func xml(_ value: PayloadValue, indent: [UInt8]) -> [UInt8] {
        func element(_ name: String, _ text: [UInt8]) -> [UInt8] {
            Array("<\(name)>".utf8) + text + Array("</\(name)>".utf8)
        }
        switch value {
        case .string(let text): return element("string", xmlEscaped(text))
        case .integer(let number): return element("integer", Array(String(number).utf8))
        case .real(let number): return element("real", Array(realText(number).utf8))
        case .bool(let flag): return Array((flag ? "<true/>" : "<false/>").utf8)
        case .date(let seconds): return element("date", Array(ISO8601.format(seconds).utf8))
        case .data(let bytes): return element("data", Array(Base64.encode(bytes).utf8))
        case .null: return element("string", [])
        case .array(let elements):
            guard !elements.isEmpty else { return Array("<array/>".utf8) }
            let inner = indent + [0x09]
            var text = Array("<array>".utf8)
            for element in elements { text += [0x0A] + inner + xml(element, indent: inner) }
            return text + [0x0A] + indent + Array("</array>".utf8)
        case .dictionary(let members):
            guard !members.isEmpty else { return Array("<dict/>".utf8) }
            let inner = indent + [0x09]
            var text = Array("<dict>".utf8)
            for key in members.keys.sorted() {
                text += [0x0A] + inner + element("key", xmlEscaped(key)) + [0x0A] + inner + xml(members[key]!, indent: inner)
            }
            return text + [0x0A] + indent + Array("</dict>".utf8)
        }
    }

    /// Text with `&`, `<` and `>` escaped, and control characters (which
    /// XML cannot hold as they are) as character references.
    static func xmlEscaped(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": bytes += Array("&amp;".utf8)
            case "<": bytes += Array("&lt;".utf8)
            case ">": bytes += Array("&gt;".utf8)
            case "\t", "\n", "\r": bytes.append(UInt8(scalar.value))
            case _ where scalar.value < 0x20: bytes += Array("&#\(scalar.value);".utf8)
            default: bytes += Array(String(scalar).utf8)
            }
        }
        return bytes
    }

    private static func realText(_ number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number < 0 ? "-infinity" : "+infinity" }
        return "\(number)"
    }

    /// A JSON literal, on one line; nil for what JSON cannot hold (NaN, infinities).
    static func json(_ value: PayloadValue) -> [UInt8]? {
        switch value {
        case .string(let text): return Array(JSON.string(text).utf8)
        case .integer(let number): return Array(String(number).utf8)
        case .real(let number): return number.isFinite ? Array("\(number)".utf8) : nil
        case .bool(let flag): return Array((flag ? "true" : "false").utf8)
        case .null: return Array("null".utf8)
        case .date(let seconds): return Array(JSON.string(ISO8601.format(seconds)).utf8)
        case .data(let bytes): return Array(JSON.string(Base64.encode(bytes)).utf8)
        case .array(let elements):
            var parts: [[UInt8]] = []
            for element in elements {
                guard let part = json(element) else { return nil }
                parts.append(part)
            }
            return [UInt8(ascii: "[")] + Array(parts.joined(separator: Array(", ".utf8))) + [UInt8(ascii: "]")]
        case .dictionary(let members):
            var parts: [[UInt8]] = []
            for key in members.keys.sorted() {
                guard let part = json(members[key]!) else { return nil }
                parts.append(Array(JSON.string(key).utf8) + Array(": ".utf8) + part)
            }
            return [UInt8(ascii: "{")] + Array(parts.joined(separator: Array(", ".utf8))) + [UInt8(ascii: "}")]
        }
    }
}
