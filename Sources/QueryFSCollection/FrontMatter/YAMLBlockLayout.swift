import CYaml

/// Where each top-level key of a YAML front-matter block lies, as libyaml's
/// own events mark it: the key, its value, and for a list each element —
/// so that an edit replaces exactly the text of one value and leaves every
/// other byte (comments, quoting, key order, the other values' styles) as
/// it was. Positions are byte offsets into the block's UTF-8.
///
/// Only what an edit needs is kept: scalars and lists of scalars at the top
/// level. Anything else is `.other`, which an edit refuses to touch.
struct YAMLBlockLayout {
    enum Style { case plain, singleQuoted, doubleQuoted, literal, folded, flow, block }

    struct Scalar {
        var range: Range<Int>
        var style: Style
        var text: String
    }

    enum Value {
        case scalar(Scalar)
        /// `[a, b]` (flow) or `- a` lines (block); `range` runs from `[`
        /// or the first `-` to the end of the last element (flow: past `]`).
        case list(style: Style, range: Range<Int>, elements: [Scalar])
        case other(Range<Int>)
    }

    struct Entry {
        var key: String
        var keyRange: Range<Int>
        var value: Value
    }

    /// The top-level entries, in the order written; empty for an empty block.
    private(set) var entries: [Entry] = []

    func entry(_ key: String) -> Entry? { entries.first { $0.key == key } }

    /// Reads the layout of `text` (a block `YAMLFrontMatter.read` accepted:
    /// bounded in depth and size already). Throws when libyaml cannot read it
    /// or its top level is not a map.
    init(_ text: String) throws(FrontMatterError) {
        let bytes = Array(text.utf8)
        // libyaml marks count characters (code points); edits need bytes.
        var byteOffset: [Int] = []
        byteOffset.reserveCapacity(bytes.count + 1)
        var offset = 0
        for scalar in text.unicodeScalars {
            byteOffset.append(offset)
            offset += UTF8.width(scalar)
        }
        byteOffset.append(offset)
        func place(_ mark: yaml_mark_t) -> Int { byteOffset[min(Int(mark.index), byteOffset.count - 1)] }

        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw FrontMatterError(message: "cannot start the YAML parser") }
        defer { yaml_parser_delete(&parser) }
        var found: [Entry] = []
        try bytes.withUnsafeBufferPointer { (buffer) throws(FrontMatterError) in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            /// Collections open now (the top-level map is depth 1).
            var depth = 0
            var pendingKey: (String, Range<Int>)?
            /// A list being read at depth 2: its style, start and elements.
            var list: (style: Style, start: Int, elements: [Scalar], nested: Bool)?
            var otherStart: Int?
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    throw FrontMatterError(message: "not YAML: \(parser.problem.map { String(cString: $0) } ?? "unreadable")")
                }
                defer { yaml_event_delete(&event) }
                let start = place(event.start_mark), end = place(event.end_mark)
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return
                case YAML_MAPPING_START_EVENT, YAML_SEQUENCE_START_EVENT:
                    depth += 1
                    if depth == 1 {
                        guard event.type == YAML_MAPPING_START_EVENT else { throw FrontMatterError(message: "not a map of keys") }
                    } else if depth == 2 {
                        guard pendingKey != nil else { throw FrontMatterError(message: "a key that is not text") }
                        if event.type == YAML_SEQUENCE_START_EVENT {
                            let flow = event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                            list = (flow ? .flow : .block, start, [], false)
                        } else {
                            otherStart = start
                        }
                    } else if depth > 2 {
                        list?.nested = true
                    }
                case YAML_MAPPING_END_EVENT, YAML_SEQUENCE_END_EVENT:
                    if depth == 2, let (key, keyRange) = pendingKey {
                        if let current = list {
                            // Flow: the list ends past `]`; block: at its last element.
                            let listEnd = current.style == .flow ? end : (current.elements.last?.range.upperBound ?? start)
                            found.append(Entry(key: key, keyRange: keyRange, value: current.nested
                                ? .other(current.start..<listEnd)
                                : .list(style: current.style, range: current.start..<listEnd, elements: current.elements)))
                        } else {
                            found.append(Entry(key: key, keyRange: keyRange, value: .other((otherStart ?? start)..<end)))
                        }
                        pendingKey = nil
                        list = nil
                        otherStart = nil
                    }
                    depth -= 1
                case YAML_SCALAR_EVENT:
                    let data = event.data.scalar
                    let text = String(decoding: UnsafeBufferPointer(start: data.value, count: Int(data.length)), as: UTF8.self)
                    let scalar = Scalar(range: start..<end, style: Self.style(data.style), text: text)
                    if depth == 1 {
                        if let (key, keyRange) = pendingKey {
                            found.append(Entry(key: key, keyRange: keyRange, value: .scalar(scalar)))
                            pendingKey = nil
                        } else {
                            pendingKey = (text, start..<end)
                        }
                    } else if depth == 2, list != nil {
                        list?.elements.append(scalar)
                    }
                case YAML_ALIAS_EVENT:
                    // An alias stands for another value: nothing an edit can rewrite in place.
                    if depth == 1, let (key, keyRange) = pendingKey {
                        found.append(Entry(key: key, keyRange: keyRange, value: .other(start..<end)))
                        pendingKey = nil
                    } else if depth == 2 {
                        list?.nested = true
                    }
                default:
                    break
                }
            }
        }
        entries = found
    }

    private static func style(_ style: yaml_scalar_style_t) -> Style {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: .plain
        }
    }
}
