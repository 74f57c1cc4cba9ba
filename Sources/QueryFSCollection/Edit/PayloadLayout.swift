import QueryFSEngine
/// Where each value of a text payload (XML plist or JSON) is written, as
/// byte ranges, so that an edit replaces, inserts or removes exactly the
/// text of the values it changes and leaves every other byte as it was:
/// reading lists are synced with git, and an edit's diff should be as small
/// as the edit. Values themselves are decoded by the payload parsers.
struct PayloadLayout {
    indirect enum Node {
        case dictionary(range: Range<Int>, members: [Member], isEmptyForm: Bool)
        case array(range: Range<Int>, elements: [Node], isEmptyForm: Bool)
        case scalar(range: Range<Int>)

        var range: Range<Int> {
            switch self {
            case .dictionary(let range, _, _), .array(let range, _, _), .scalar(let range): range
            }
        }
    }

    struct Member {
        let key: String
        /// From the start of the key to the end of the value (XML: `<key>…</key>…<value/>`; JSON: `"key": value`).
        let range: Range<Int>
        let value: Node
    }

    let bytes: [UInt8]
    let root: Node

    /// The node at a key path (dictionary keys only).
    func node(at path: [String]) -> Node? {
        var node = root
        for key in path {
            guard case .dictionary(_, let members, _) = node, let member = members.last(where: { $0.key == key }) else { return nil }
            node = member.value
        }
        return node
    }

    func member(at path: [String]) -> Member? {
        guard let key = path.last, case .dictionary(_, let members, _)? = node(at: Array(path.dropLast())) else { return nil }
        return members.last { $0.key == key }
    }

    /// The white space that starts the line `offset` is on (what a new line beside it is indented with).
    func indentation(ofLineAt offset: Int) -> [UInt8] {
        var start = offset
        while start > 0, bytes[start - 1] != 0x0A { start -= 1 }
        var end = start
        while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
        return Array(bytes[start..<end])
    }

    /// Whether the text between `from` and `to` holds a line break (a
    /// container written over several lines gets new members on lines of their own).
    func hasLineBreak(from: Int, to: Int) -> Bool {
        bytes[from..<to].contains(0x0A)
    }

    /// Where the white space before `offset` starts (a removed member takes
    /// its line break and indentation with it).
    func startOfSpace(before offset: Int) -> Int {
        var start = offset
        while start > 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start - 1]) { start -= 1 }
        return start
    }
}

/// Reads the layout of an XML property list: elements and their ranges;
/// text inside leaf elements is skipped (the parser decodes it). Comments,
/// CDATA, processing instructions and the DOCTYPE are passed over.
struct XMLPlistLayoutReader {
    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0

    static func read(_ bytes: [UInt8]) -> PayloadLayout? {
        var reader = XMLPlistLayoutReader(bytes: bytes)
        guard let root = reader.document() else { return nil }
        return PayloadLayout(bytes: bytes, root: root)
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private struct Tag {
        let name: [UInt8]
        let start: Int
        let end: Int
        let isClosing: Bool
        let isEmpty: Bool
    }

    private mutating func document() -> PayloadLayout.Node? {
        guard var tag = nextTag() else { return nil }
        if tag.name == Array("plist".utf8) {
            guard !tag.isEmpty, let inner = nextTag() else { return nil }
            tag = inner
        }
        return node(opening: tag)
    }

    private mutating func node(opening tag: Tag) -> PayloadLayout.Node? {
        guard !tag.isClosing else { return nil }
        switch String(decoding: tag.name, as: UTF8.self) {
        case "dict":
            if tag.isEmpty { return .dictionary(range: tag.start..<tag.end, members: [], isEmptyForm: true) }
            depth += 1
            defer { depth -= 1 }
            guard depth <= XMLPropertyListParser.maximumDepth else { return nil }
            var members: [PayloadLayout.Member] = []
            while let keyTag = nextTag() {
                if keyTag.isClosing { return .dictionary(range: tag.start..<keyTag.end, members: members, isEmptyForm: false) }
                guard keyTag.name == Array("key".utf8) else { return nil }
                let keyText: String
                if keyTag.isEmpty {
                    keyText = ""
                } else {
                    guard let close = skipText(to: "key") else { return nil }
                    guard case .string(let key)? = try? XMLPropertyListParser.parse(Array(bytes[keyTag.start..<close]).replacingKeyTags())
                    else { return nil }
                    keyText = key
                }
                guard let valueTag = nextTag(), let value = node(opening: valueTag) else { return nil }
                members.append(PayloadLayout.Member(key: keyText, range: keyTag.start..<value.range.upperBound, value: value))
            }
            return nil
        case "array":
            if tag.isEmpty { return .array(range: tag.start..<tag.end, elements: [], isEmptyForm: true) }
            depth += 1
            defer { depth -= 1 }
            guard depth <= XMLPropertyListParser.maximumDepth else { return nil }
            var elements: [PayloadLayout.Node] = []
            while let elementTag = nextTag() {
                if elementTag.isClosing { return .array(range: tag.start..<elementTag.end, elements: elements, isEmptyForm: false) }
                guard let element = node(opening: elementTag) else { return nil }
                elements.append(element)
            }
            return nil
        default:
            if tag.isEmpty { return .scalar(range: tag.start..<tag.end) }
            guard let end = skipText(to: String(decoding: tag.name, as: UTF8.self)) else { return nil }
            return .scalar(range: tag.start..<end)
        }
    }

    /// Skips text up to and including `</name>`; returns the end of it.
    private mutating func skipText(to name: String) -> Int? {
        while position < bytes.count {
            if hasPrefix("<![CDATA[") {
                guard let end = find("]]>") else { return nil }
                position = end + 3
            } else if hasPrefix("<!--") {
                guard let end = find("-->") else { return nil }
                position = end + 3
            } else if bytes[position] == UInt8(ascii: "<") {
                guard let tag = nextTag(), tag.isClosing, tag.name == Array(name.utf8) else { return nil }
                return tag.end
            } else {
                position += 1
            }
        }
        return nil
    }

    /// The next tag, past white space, comments, processing instructions and the DOCTYPE.
    private mutating func nextTag() -> Tag? {
        while position < bytes.count {
            let byte = bytes[position]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                position += 1
            } else if hasPrefix("<!--") {
                guard let end = find("-->") else { return nil }
                position = end + 3
            } else if hasPrefix("<?") {
                guard let end = find("?>") else { return nil }
                position = end + 2
            } else if hasPrefix("<!DOCTYPE") {
                guard let end = find(">") else { return nil }
                position = end + 1
            } else if byte == UInt8(ascii: "<") {
                let start = position
                position += 1
                let isClosing = position < bytes.count && bytes[position] == UInt8(ascii: "/")
                if isClosing { position += 1 }
                let nameStart = position
                while position < bytes.count, ![UInt8(ascii: ">"), UInt8(ascii: "/"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) {
                    position += 1
                }
                let name = Array(bytes[nameStart..<position])
                var quote: UInt8 = 0
                while position < bytes.count {
                    let current = bytes[position]
                    if quote != 0 {
                        if current == quote { quote = 0 }
                    } else if current == UInt8(ascii: "\"") || current == UInt8(ascii: "'") {
                        quote = current
                    } else if current == UInt8(ascii: ">") {
                        let isEmpty = bytes[position - 1] == UInt8(ascii: "/")
                        position += 1
                        return Tag(name: name, start: start, end: position, isClosing: isClosing, isEmpty: isEmpty && !isClosing)
                    }
                    position += 1
                }
                return nil
            } else {
                return nil
            }
        }
        return nil
    }

    private func hasPrefix(_ literal: String) -> Bool {
        let utf8 = Array(literal.utf8)
        return bytes.count - position >= utf8.count && Array(bytes[position..<(position + utf8.count)]) == utf8
    }

    private func find(_ literal: String) -> Int? {
        let utf8 = Array(literal.utf8)
        var index = position
        while index + utf8.count <= bytes.count {
            if bytes[index] == utf8[0], Array(bytes[index..<(index + utf8.count)]) == utf8 { return index }
            index += 1
        }
        return nil
    }
}

private extension Array where Element == UInt8 {
    /// `<key>text</key>` as `<string>text</string>`, so the value parser decodes a key's text.
    func replacingKeyTags() -> [UInt8] {
        Array("<string>".utf8) + self.dropFirst(5).dropLast(6) + Array("</string>".utf8)
    }
}

/// Reads the layout of a JSON document: objects, arrays and the ranges of
/// their members and elements.
struct JSONLayoutReader {
    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0

    static func read(_ bytes: [UInt8]) -> PayloadLayout? {
        var reader = JSONLayoutReader(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
        guard let root = reader.value() else { return nil }
        return PayloadLayout(bytes: bytes, root: root)
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private mutating func value() -> PayloadLayout.Node? {
        skipSpace()
        guard position < bytes.count else { return nil }
        let start = position
        switch bytes[position] {
        case UInt8(ascii: "{"):
            depth += 1
            defer { depth -= 1 }
            guard depth <= 512 else { return nil }
            position += 1
            var members: [PayloadLayout.Member] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .dictionary(range: start..<position, members: [], isEmptyForm: true)
            }
            while true {
                skipSpace()
                let keyStart = position
                guard let keyEnd = skipString(), case .string(let key)? = try? JSONParser.parse(Array(bytes[keyStart..<keyEnd])) else { return nil }
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                position += 1
                guard let member = value() else { return nil }
                members.append(PayloadLayout.Member(key: key, range: keyStart..<member.range.upperBound, value: member))
                skipSpace()
                guard position < bytes.count else { return nil }
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                guard bytes[position] == UInt8(ascii: "}") else { return nil }
                position += 1
                return .dictionary(range: start..<position, members: members, isEmptyForm: false)
            }
        case UInt8(ascii: "["):
            depth += 1
            defer { depth -= 1 }
            guard depth <= 512 else { return nil }
            position += 1
            var elements: [PayloadLayout.Node] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(range: start..<position, elements: [], isEmptyForm: true)
            }
            while true {
                guard let element = value() else { return nil }
                elements.append(element)
                skipSpace()
                guard position < bytes.count else { return nil }
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                guard bytes[position] == UInt8(ascii: "]") else { return nil }
                position += 1
                return .array(range: start..<position, elements: elements, isEmptyForm: false)
            }
        case UInt8(ascii: "\""):
            guard let end = skipString() else { return nil }
            return .scalar(range: start..<end)
        default:
            while position < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains(bytes[position]) {
                position += 1
            }
            return position > start ? .scalar(range: start..<position) : nil
        }
    }

    /// Skips a string literal at `position`; returns its end.
    private mutating func skipString() -> Int? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        position += 1
        while position < bytes.count {
            if bytes[position] == UInt8(ascii: "\\") {
                position += 2
            } else if bytes[position] == UInt8(ascii: "\"") {
                position += 1
                return position
            } else {
                position += 1
            }
        }
        return nil
    }
}
