/// A small, strict JSON parser (RFC 8259) into `PayloadValue`. Foundation's
/// JSONSerialization blurs booleans and numbers on Linux; this does not.
package struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    package static func parse(_ data: [UInt8]) throws(PayloadParseError) -> PayloadValue {
        try data.withUnsafeBufferPointer { (buffer) throws(PayloadParseError) -> PayloadValue in
            var parser = JSONParser(bytes: buffer)
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { parser.position = 3 }
            let value = try parser.value()
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw parser.fail("unexpected content after the value") }
            return value
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private func fail(_ reason: String) -> PayloadParseError { PayloadParseError(offset: position, reason: reason) }

    private mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private mutating func value() throws(PayloadParseError) -> PayloadValue {
        skipWhitespace()
        guard position < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return try number()
        }
    }

    private mutating func literal(_ word: StaticString) throws(PayloadParseError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              (0..<count).allSatisfy({ bytes[position + $0] == word.utf8Start[$0] })
        else { throw fail("unexpected token") }
        position += count
    }

    private mutating func nest() throws(PayloadParseError) {
        depth += 1
        if depth > 512 { throw fail("nested too deeply") }
    }

    private mutating func object() throws(PayloadParseError) -> PayloadValue {
        try nest()
        defer { depth -= 1 }
        position += 1
        var dictionary: [String: PayloadValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .dictionary(dictionary) }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let key = try string()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            dictionary[key] = try value()
            skipWhitespace()
            guard position < bytes.count else { throw fail("unterminated object") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .dictionary(dictionary) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func array() throws(PayloadParseError) -> PayloadValue {
        try nest()
        defer { depth -= 1 }
        position += 1
        var array: [PayloadValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(array) }
        while true {
            array.append(try value())
            skipWhitespace()
            guard position < bytes.count else { throw fail("unterminated array") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(array) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func string() throws(PayloadParseError) -> String {
        position += 1
        var result: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), bytes.count - position >= 6,
                       bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                        position += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                    }
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    result.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    throw fail("bad escape")
                }
            case 0..<0x20:
                throw fail("control character in string")
            default:
                result.append(byte)
                position += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws(PayloadParseError) -> UInt32 {
        guard bytes.count - position >= 4,
              let value = UInt32(String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<(position + 4)]), as: UTF8.self), radix: 16)
        else { throw fail("bad \\u escape") }
        position += 4
        return value
    }

    private mutating func number() throws(PayloadParseError) -> PayloadValue {
        let start = position
        var isInteger = true
        while position < bytes.count {
            let byte = bytes[position]
            if (48...57).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") {
                position += 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                isInteger = false
                position += 1
            } else {
                break
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard !text.isEmpty else { throw fail("unexpected character") }
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { position = start; throw fail("bad number '\(text)'") }
        return .real(value)
    }
}
