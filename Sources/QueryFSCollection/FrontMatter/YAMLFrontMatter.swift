import CYaml
import QueryFSEngine

/// A YAML front-matter block as a payload value, built in one pass over
/// libyaml's events (libyaml, as Yams ships it, does all the parsing).
///
/// Why not `Yams.compose`: measured on 100,000 notes, composing Yams'
/// `Node` tree and resolving each plain scalar's type with Foundation's
/// regular expressions took 64 % of a scan (6.6 s warm, 11.6× `rg` over
/// the same tree); the events alone cost a tenth of that. Yams also
/// composes recursively (a deep block would exhaust the stack) and copies
/// an aliased node at every use, so a walk bounding both had to come first
/// anyway. Here nesting is an explicit stack, bounded at
/// `FrontMatter.Limits.depth`, and every value counts — an alias as many
/// as it stands for — against `FrontMatter.Limits.values`, so a "billion
/// laughs" block is refused before it is built.
///
/// Plain scalars resolve as YAML 1.1 does (Yams' default resolver, and what
/// Obsidian, Jekyll and Hugo write): `~`/`null`/empty, `true`/`yes`/`on`
/// and their opposites, integers (decimal, `0x`, `0o`, `0b`), floats
/// (`1.5`, `1e3`, `.inf`, `.nan`), timestamps (`2024-03-05`,
/// `2024-03-05T10:00:00Z`) as dates; everything else, and every quoted or
/// block scalar, is text.
enum YAMLFrontMatter {
    /// `firstLine`: the note's line the block starts on, so that a mistake
    /// is reported at its line in the note, not in the block.
    static func read(_ text: String, firstLine: Int = 1) throws(FrontMatterError) -> PayloadValue {
        try readReporting(text, firstLine: firstLine).value
    }

    /// The same, and the keys of the top-level map given more than once
    /// (libyaml allows them; the last is read, as Yams reads it, and the
    /// note is told of it: an edit finds the first, and is refused).
    static func readReporting(_ text: String, firstLine: Int = 1) throws(FrontMatterError) -> (value: PayloadValue, duplicateKeys: [String]) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw FrontMatterError(message: "cannot start the YAML parser") }
        defer { yaml_parser_delete(&parser) }
        var builder = Builder()
        func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(FrontMatterError) {
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            while !builder.finished {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let problem = parser.problem.map { String(cString: $0) } ?? "unreadable"
                    throw FrontMatterError(message: "not YAML: \(problem) at line \(parser.problem_mark.line + firstLine)")
                }
                defer { yaml_event_delete(&event) }
                try builder.take(event)
            }
        }
        // The text's own bytes (a note's block is a native string): no copy for every note.
        let read: Result<Void, FrontMatterError>? = text.utf8.withContiguousStorageIfAvailable { buffer in
            Result { () throws(FrontMatterError) in try parse(buffer) }
        }
        if let read {
            try read.get()
        } else {
            try Array(text.utf8).withUnsafeBufferPointer { (buffer) throws(FrontMatterError) in try parse(buffer) }
        }
        return (builder.document ?? .null, builder.duplicateKeys)
    }

    /// The value being built: the collections open now, the anchors seen.
    private struct Builder {
        private enum Open {
            case list([PayloadValue], anchor: String?, size: Int)
            /// `key`: the key read, waiting for its value; `skipping`: the
            /// key was a list or map, which no field can name (its value is dropped).
            case map([String: PayloadValue], key: String?, skipping: Bool, anchor: String?, size: Int)
        }

        private var open: [Open] = []
        /// Each anchor's value and how many values it counts for.
        private var anchors: [String: (value: PayloadValue, size: Int)] = [:]
        private var values = 0
        private(set) var document: PayloadValue?
        /// Keys of the top-level map given again, in the order met.
        private(set) var duplicateKeys: [String] = []
        private(set) var finished = false

        mutating func take(_ event: yaml_event_t) throws(FrontMatterError) {
            switch event.type {
            case YAML_STREAM_END_EVENT, YAML_DOCUMENT_END_EVENT:
                // The first document is the front matter: a second one (`---` inside) ends it.
                finished = true
            case YAML_SEQUENCE_START_EVENT:
                try count(1)
                // Room for a usual front matter's list and map at once: growing
                // them one element at a time was 4 and 2 mallocs a note.
                var elements: [PayloadValue] = []
                elements.reserveCapacity(4)
                open.append(.list(elements, anchor: Self.text(event.data.sequence_start.anchor), size: values))
                try checkDepth()
            case YAML_MAPPING_START_EVENT:
                try count(1)
                open.append(.map(Dictionary(minimumCapacity: 8), key: nil, skipping: false, anchor: Self.text(event.data.mapping_start.anchor), size: values))
                try checkDepth()
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let last = open.popLast() else { return }
                let (value, anchor, start): (PayloadValue, String?, Int) = switch last {
                case .list(let elements, let anchor, let start): (.array(elements), anchor, start)
                case .map(let dictionary, _, _, let anchor, let start): (.dictionary(dictionary), anchor, start)
                }
                if let anchor { anchors[anchor] = (value, values - start + 1) }
                place(value, isKey: false)
            case YAML_SCALAR_EVENT:
                try count(1)
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: Int(scalar.length)), as: UTF8.self)
                let value = Self.resolve(text, style: scalar.style, tag: Self.text(scalar.tag), plainImplicit: scalar.plain_implicit != 0)
                if let anchor = Self.text(scalar.anchor) { anchors[anchor] = (value, 1) }
                place(value, keyText: text)
            case YAML_ALIAS_EVENT:
                guard let name = Self.text(event.data.alias.anchor), let (value, size) = anchors[name] else {
                    throw FrontMatterError(message: "an alias of no anchor")
                }
                try count(size)
                place(value, keyText: nil)
            default:
                break
            }
        }

        private mutating func count(_ added: Int) throws(FrontMatterError) {
            values += added
            guard values <= FrontMatter.Limits.values else {
                throw FrontMatterError(message: "more than \(FrontMatter.Limits.values) values (aliases counted as what they stand for)")
            }
        }

        private func checkDepth() throws(FrontMatterError) {
            guard open.count <= FrontMatter.Limits.depth else { throw FrontMatterError(message: "nested deeper than \(FrontMatter.Limits.depth) levels") }
        }

        /// Puts a finished value where it belongs: the document, a list, or a map (as a key, or as the value of one).
        private mutating func place(_ value: PayloadValue, keyText: String?) {
            place(value, isKey: true, keyText: keyText)
        }

        private mutating func place(_ value: PayloadValue, isKey: Bool, keyText: String? = nil) {
            guard let last = open.popLast() else {
                if document == nil { document = value }
                return
            }
            switch last {
            case .list(var elements, let anchor, let size):
                elements.append(value)
                open.append(.list(elements, anchor: anchor, size: size))
            case .map(var dictionary, let key, let skipping, let anchor, let size):
                if skipping {
                    open.append(.map(dictionary, key: nil, skipping: false, anchor: anchor, size: size))
                } else if let key {
                    if open.isEmpty, dictionary[key] != nil, !duplicateKeys.contains(key) { duplicateKeys.append(key) }
                    dictionary[key] = value
                    open.append(.map(dictionary, key: nil, skipping: false, anchor: anchor, size: size))
                } else if isKey, let keyText {
                    // A scalar key is its text, whatever it would resolve to (`2024:` is the key "2024").
                    open.append(.map(dictionary, key: keyText, skipping: false, anchor: anchor, size: size))
                } else {
                    open.append(.map(dictionary, key: nil, skipping: true, anchor: anchor, size: size))
                }
            }
        }

        private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            pointer.map { String(cString: $0) }
        }

        /// A scalar's value: text when quoted, a block, or tagged `!!str`;
        /// a plain one by the YAML 1.1 types (see the type's comment).
        static func resolve(_ text: String, style: yaml_scalar_style_t, tag: String?, plainImplicit: Bool) -> PayloadValue {
            switch tag {
            case "tag:yaml.org,2002:str": return .string(text)
            case "tag:yaml.org,2002:null": return .null
            case nil where !(style == YAML_PLAIN_SCALAR_STYLE && plainImplicit): return .string(text)
            default: break
            }
            return YAMLScalar.resolve(text)
        }
    }
}

/// YAML 1.1's implicit types of plain scalars, by hand from their
/// grammar (no regular expressions: see `YAMLFrontMatter`).
enum YAMLScalar {
    static func resolve(_ text: String) -> PayloadValue {
        // Most plain scalars are words (titles, tags): longer than any
        // literal below and not starting as a number does. Said at once,
        // not after comparing the text with 36 literals (2 % of a scan).
        if text.utf8.count > 5, let first = text.utf8.first, !(48...57).contains(first),
           first != UInt8(ascii: "-"), first != UInt8(ascii: "+"), first != UInt8(ascii: ".")
        {
            return .string(text)
        }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return .bool(true)
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .real(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .real(-.infinity)
        case ".nan", ".NaN", ".NAN": return .real(.nan)
        default: break
        }
        let bytes = Array(text.utf8)
        guard let first = bytes.first, (48...57).contains(first) || first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
        else { return .string(text) }
        if let integer = integer(bytes) { return .integer(integer) }
        if let real = real(bytes) { return .real(real) }
        if bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), let seconds = ISO8601.parse(text) { return .date(seconds) }
        return .string(text)
    }

    /// `[-+]?` then `0b…`, `0x…`, `0o…` (or a leading `0`: octal), or decimal; `_` separates digits.
    private static func integer(_ bytes: [UInt8]) -> Int64? {
        var digits = bytes[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        var radix: Int64 = 10
        if digits.count > 2, digits.first == UInt8(ascii: "0") {
            switch digits[digits.startIndex + 1] {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: break
            }
            if radix != 10 { digits = digits.dropFirst(2) }
        }
        if radix == 10, digits.count > 1, digits.first == UInt8(ascii: "0") { radix = 8 }  // YAML 1.1: `017` is octal
        guard !digits.isEmpty, digits.first != UInt8(ascii: "_") else { return nil }
        var value: Int64 = 0
        for byte in digits where byte != UInt8(ascii: "_") {
            let digit: Int64
            switch byte {
            case 48...57: digit = Int64(byte - 48)
            case 97...102: digit = Int64(byte - 87)
            case 65...70: digit = Int64(byte - 55)
            default: return nil
            }
            guard digit < radix else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: radix)
            let (sum, overflowAdding) = shifted.addingReportingOverflow(digit)
            guard !overflow, !overflowAdding else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    /// `[-+]?` digits with a `.` and/or an exponent (`1.5`, `.5`, `1e3`, `1.5E-3`); `_` separates digits.
    private static func real(_ bytes: [UInt8]) -> Double? {
        // No point and no exponent: no real (every date comes here first; no copy for it).
        guard bytes.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else { return nil }
        let cleaned = bytes.filter { $0 != UInt8(ascii: "_") }
        guard cleaned.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
              cleaned.allSatisfy({ (48...57).contains($0) || [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "-"), UInt8(ascii: "+")].contains($0) }),
              cleaned.contains(where: { (48...57).contains($0) })
        else { return nil }
        return Double(String(decoding: cleaned, as: UTF8.self))
    }
}
