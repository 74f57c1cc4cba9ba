#if canImport(Glibc)
import Glibc
#endif

/// A parser for XML property lists (Apple's plist DTD), written for speed:
/// scanning 100,000 bundles must cost little more than reading them, and
/// Foundation's parser would dominate. It reads bytes, understands the plist
/// elements, entities, comments and CDATA, and rejects anything else.
package struct XMLPropertyListParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0
    package static let maximumDepth = 512

    package static func parse(_ data: [UInt8]) throws(PayloadParseError) -> PayloadValue {
        try data.withUnsafeBufferPointer { (buffer) throws(PayloadParseError) -> PayloadValue in
            var parser = XMLPropertyListParser(bytes: buffer)
            return try parser.parseDocument()
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    // MARK: Document

    private mutating func parseDocument() throws(PayloadParseError) -> PayloadValue {
        skipUTF8ByteOrderMark()
        skipMisc()
        var tag = try readTag()
        var insidePlist = false
        if tag.kind == .plist {
            guard !tag.isClosing else { throw error("unexpected </plist>") }
            if tag.isEmpty { throw error("empty <plist/>") }
            insidePlist = true
            skipMisc()
            tag = try readTag()
        }
        let value = try parseValue(opening: tag)
        skipMisc()
        if insidePlist {
            let closing = try readTag()
            guard closing.isClosing, closing.kind == .plist else { throw error("expected </plist>") }
            skipMisc()
        }
        guard position == bytes.count else { throw error("unexpected content after the property list") }
        return value
    }

    // MARK: Values

    private mutating func parseValue(opening tag: Tag) throws(PayloadParseError) -> PayloadValue {
        guard !tag.isClosing else { throw error("unexpected </\(tag.name)>") }
        switch tag.kind {
        case .dict: return try parseDictionary(empty: tag.isEmpty)
        case .array: return try parseArray(empty: tag.isEmpty)
        case .string: return .string(tag.isEmpty ? "" : try readText(closing: .string))
        case .true: try expectEmpty(tag); return .bool(true)
        case .false: try expectEmpty(tag); return .bool(false)
        case .integer:
            let text = tag.isEmpty ? "" : try readText(closing: .integer)
            return try parseInteger(text)
        case .real:
            let text = (tag.isEmpty ? "" : try readText(closing: .real)).trimmingASCIIWhitespace
            guard let value = Double(text) ?? Self.specialReal(text) else { throw error("bad <real> '\(text)'") }
            return .real(value)
        case .date:
            let text = (tag.isEmpty ? "" : try readText(closing: .date)).trimmingASCIIWhitespace
            guard let seconds = ISO8601.parse(text) else { throw error("bad <date> '\(text)'") }
            return .date(seconds)
        case .data:
            let text = tag.isEmpty ? "" : try readText(closing: .data)
            guard let decoded = Base64.decode(text) else { throw error("bad base64 in <data>") }
            return .data(decoded)
        case .plist, .key, .other:
            throw error("unexpected element <\(tag.name)>")
        }
    }

    private mutating func parseDictionary(empty: Bool) throws(PayloadParseError) -> PayloadValue {
        if empty { return .dictionary([:]) }
        try enter()
        defer { depth -= 1 }
        var dictionary: [String: PayloadValue] = [:]
        while true {
            skipMisc()
            let tag = try readTag()
            if tag.isClosing {
                guard tag.kind == .dict else { throw error("expected </dict>, found </\(tag.name)>") }
                return .dictionary(dictionary)
            }
            guard tag.kind == .key else { throw error("expected <key> in <dict>, found <\(tag.name)>") }
            let key = tag.isEmpty ? "" : try readText(closing: .key)
            skipMisc()
            let valueTag = try readTag()
            dictionary[key] = try parseValue(opening: valueTag)
        }
    }

    private mutating func parseArray(empty: Bool) throws(PayloadParseError) -> PayloadValue {
        if empty { return .array([]) }
        try enter()
        defer { depth -= 1 }
        var array: [PayloadValue] = []
        while true {
            skipMisc()
            let tag = try readTag()
            if tag.isClosing {
                guard tag.kind == .array else { throw error("expected </array>, found </\(tag.name)>") }
                return .array(array)
            }
            array.append(try parseValue(opening: tag))
        }
    }

    private mutating func enter() throws(PayloadParseError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("nested too deeply") }
    }

    private func parseInteger(_ raw: String) throws(PayloadParseError) -> PayloadValue {
        let text = raw.trimmingASCIIWhitespace
        if let value = Int64(text) { return .integer(value) }
        if text.hasPrefix("0x") || text.hasPrefix("0X"), let value = Int64(text.dropFirst(2), radix: 16) {
            return .integer(value)
        }
        if let value = UInt64(text) { return .integer(Int64(bitPattern: value)) }
        throw error("bad <integer> '\(text)'")
    }

    private static func specialReal(_ text: String) -> Double? {
        switch text.lowercased() {
        case "nan": .nan
        case "inf", "+inf", "infinity", "+infinity": .infinity
        case "-inf", "-infinity": -.infinity
        default: nil
        }
    }

    private func expectEmpty(_ tag: Tag) throws(PayloadParseError) {
        if !tag.isEmpty { throw error("<\(tag.name)> must be empty") }
    }

    // MARK: Tags and text

    /// An element tag; its name stays a byte range until someone needs a String.
    private struct Tag {
        var kind: Kind
        var nameBytes: UnsafeBufferPointer<UInt8>
        var isClosing: Bool
        var isEmpty: Bool

        enum Kind { case plist, dict, array, key, string, integer, real, date, data, `true`, `false`, other }

        var name: String { String(decoding: nameBytes, as: UTF8.self) }

        static func kind(of name: UnsafeBufferPointer<UInt8>) -> Kind {
            func equals(_ literal: StaticString) -> Bool {
                literal.utf8CodeUnitCount == name.count
                    && memcmp(literal.utf8Start, name.baseAddress!, name.count) == 0
            }
            switch name.count {
            case 3: return equals("key") ? .key : .other
            case 4: return equals("dict") ? .dict : equals("real") ? .real : equals("date") ? .date
                : equals("data") ? .data : equals("true") ? .true : .other
            case 5: return equals("plist") ? .plist : equals("array") ? .array : equals("false") ? .false : .other
            case 6: return equals("string") ? .string : .other
            case 7: return equals("integer") ? .integer : .other
            default: return .other
            }
        }
    }

    /// Reads `<name attr…>`, `</name>` or `<name/>` at the current position.
    private mutating func readTag() throws(PayloadParseError) -> Tag {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "<") else {
            throw error(position < bytes.count ? "expected an element" : "unexpected end of input")
        }
        position += 1
        var isClosing = false
        if position < bytes.count, bytes[position] == UInt8(ascii: "/") {
            isClosing = true
            position += 1
        }
        let nameStart = position
        while position < bytes.count, !Self.endsName(bytes[position]) { position += 1 }
        guard position > nameStart else { throw error("empty element name") }
        let nameBytes = UnsafeBufferPointer(rebasing: bytes[nameStart..<position])
        let kind = Tag.kind(of: nameBytes)
        // Attributes are accepted and ignored (e.g. <plist version="1.0">).
        var quote: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                let isEmpty = bytes[position - 1] == UInt8(ascii: "/")
                position += 1
                return Tag(kind: kind, nameBytes: nameBytes, isClosing: isClosing, isEmpty: isEmpty && !isClosing)
            }
            position += 1
        }
        throw error("unterminated element <\(String(decoding: nameBytes, as: UTF8.self))")
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == 0x20 || byte == 0x09
            || byte == 0x0A || byte == 0x0D
    }

    /// Reads character data up to `</closing>`, decoding entities and CDATA.
    /// Plain text (the common case) becomes a String straight from the input.
    private mutating func readText(closing: Tag.Kind) throws(PayloadParseError) -> String {
        var decoded: [UInt8]?  // only once an entity, CDATA or comment appears
        var plainStart = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") {
                let plain = UnsafeBufferPointer(rebasing: bytes[plainStart..<position])
                if hasPrefix("<![CDATA[") || hasPrefix("<!--") {
                    // Appended in place: a copy per piece made many entities quadratic.
                    if decoded == nil { decoded = [] }
                    decoded!.append(contentsOf: plain)
                    if hasPrefix("<!--") {
                        try skipComment()
                    } else {
                        position += 9
                        guard let end = find("]]>") else { throw error("unterminated CDATA") }
                        decoded! += UnsafeBufferPointer(rebasing: bytes[position..<end])
                        position = end + 3
                    }
                    plainStart = position
                    continue
                }
                let tag = try readTag()
                guard tag.isClosing, tag.kind == closing else {
                    throw error("expected </\(closing)>, found <\(tag.isClosing ? "/" : "")\(tag.name)>")
                }
                guard var decoded else { return String(decoding: plain, as: UTF8.self) }
                decoded += plain
                return String(decoding: decoded, as: UTF8.self)
            }
            if byte == UInt8(ascii: "&") {
                if decoded == nil { decoded = [] }
                decoded!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plainStart..<position]))
                try readEntity(into: &decoded!)
                plainStart = position
                continue
            }
            position += 1
        }
        throw error("unterminated <\(closing)>")
    }

    private mutating func readEntity(into result: inout [UInt8]) throws(PayloadParseError) {
        let start = position
        // An entity name is short: look no further (a search to the end of
        // the input for every '&' would make a long text quadratic).
        var semicolon = start + 1
        while semicolon < min(bytes.count, start + 13), bytes[semicolon] != UInt8(ascii: ";") { semicolon += 1 }
        guard semicolon < bytes.count, bytes[semicolon] == UInt8(ascii: ";") else { throw error("bad entity") }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<semicolon]), as: UTF8.self)
        position = semicolon + 1
        switch name {
        case "amp": result.append(UInt8(ascii: "&"))
        case "lt": result.append(UInt8(ascii: "<"))
        case "gt": result.append(UInt8(ascii: ">"))
        case "quot": result.append(UInt8(ascii: "\""))
        case "apos": result.append(UInt8(ascii: "'"))
        default:
            var code: UInt32?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                code = UInt32(name.dropFirst(2), radix: 16)
            } else if name.hasPrefix("#") {
                code = UInt32(name.dropFirst())
            }
            guard let code, let scalar = Unicode.Scalar(code) else {
                position = start
                throw error("unknown entity &\(name);")
            }
            result.append(contentsOf: Array(String(Character(scalar)).utf8))
        }
    }

    // MARK: Skipping

    private mutating func skipUTF8ByteOrderMark() {
        if hasPrefix("\u{FEFF}") { position += 3 }
    }

    /// Skips white space, comments, processing instructions and DOCTYPE.
    private mutating func skipMisc() {
        while position < bytes.count {
            let byte = bytes[position]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                position += 1
            } else if hasPrefix("<!--") {
                do { try skipComment() } catch { return }
            } else if hasPrefix("<?") {
                guard let end = find("?>") else { return }
                position = end + 2
            } else if hasPrefix("<!DOCTYPE") {
                guard let end = find(">") else { return }
                position = end + 1
            } else {
                return
            }
        }
    }

    private mutating func skipComment() throws(PayloadParseError) {
        guard let end = find("-->") else { throw error("unterminated comment") }
        position = end + 3
    }

    private func hasPrefix(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let pointer = literal.utf8Start
        for index in 0..<count where bytes[position + index] != pointer[index] { return false }
        return true
    }

    /// Position of the next occurrence of `literal` at or after `position`.
    private func find(_ literal: StaticString) -> Int? {
        let count = literal.utf8CodeUnitCount
        let pointer = literal.utf8Start
        var index = position
        while index + count <= bytes.count {
            if bytes[index] == pointer[0] {
                var matches = true
                for offset in 1..<max(count, 1) where bytes[index + offset] != pointer[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }

    private func error(_ reason: String) -> PayloadParseError {
        PayloadParseError(offset: position, reason: reason)
    }
}

extension String {
    var trimmingASCIIWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}
