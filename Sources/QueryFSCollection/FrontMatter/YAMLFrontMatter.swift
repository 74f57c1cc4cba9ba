import CYaml
import QueryFSEngine
import Yams

/// A YAML front-matter block as a payload value.
///
/// libyaml's event stream is walked once first, to bound what Yams would
/// build: Yams composes recursively (a deeply nested block would exhaust
/// the thread's stack) and copies an aliased node at every use (a "billion
/// laughs" block would expand without end). The walk counts nesting and the
/// values each anchor stands for, so both are refused, in one pass, before
/// anything is built.
enum YAMLFrontMatter {
    static func read(_ text: String) throws(FrontMatterError) -> PayloadValue {
        try bound(text)
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw FrontMatterError(message: "not YAML: \(error)")
        }
        guard let node else { return .null }
        return value(of: node)
    }

    /// Throws when the block nests deeper than `FrontMatter.Limits.depth` or
    /// would hold more than `FrontMatter.Limits.values` values once every
    /// alias is counted for what it stands for; or when libyaml cannot read it.
    private static func bound(_ text: String) throws(FrontMatterError) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw FrontMatterError(message: "cannot start the YAML parser") }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        // (anchor or nil, values counted when it opened): one per open collection.
        var open: [(anchor: [UInt8]?, start: Int)] = []
        var sizes: [[UInt8]: Int] = [:]
        var values = 0
        try bytes.withUnsafeBufferPointer { (buffer) throws(FrontMatterError) in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let problem = parser.problem.map { String(cString: $0) } ?? "unreadable"
                    throw FrontMatterError(message: "not YAML: \(problem) at line \(parser.problem_mark.line + 1)")
                }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    let anchor = event.type == YAML_SEQUENCE_START_EVENT ? event.data.sequence_start.anchor : event.data.mapping_start.anchor
                    values += 1
                    open.append((anchor.map { Array(String(cString: $0).utf8) }, values))
                    guard open.count <= FrontMatter.Limits.depth else {
                        throw FrontMatterError(message: "nested deeper than \(FrontMatter.Limits.depth) levels")
                    }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    if let (anchor, start) = open.popLast(), let anchor { sizes[anchor] = values - start + 1 }
                case YAML_SCALAR_EVENT:
                    values += 1
                    if let anchor = event.data.scalar.anchor { sizes[Array(String(cString: anchor).utf8)] = 1 }
                case YAML_ALIAS_EVENT:
                    let anchor = Array(String(cString: event.data.alias.anchor).utf8)
                    values += sizes[anchor] ?? 1
                default:
                    break
                }
                guard values <= FrontMatter.Limits.values else {
                    throw FrontMatterError(message: "more than \(FrontMatter.Limits.values) values (aliases counted as what they stand for)")
                }
            }
        }
    }

    /// The node as a payload value: scalars by the type YAML's core schema
    /// resolves them to (timestamps as dates), maps with their keys as text.
    private static func value(of node: Node) -> PayloadValue {
        switch node {
        case .scalar(let scalar):
            let text = scalar.string
            // The tag the core schema resolved (Yams keeps `Tag.name` internal: its description is the name).
            switch node.tag.description {
            case Tag.Name.null.rawValue: return .null
            case Tag.Name.bool.rawValue: return node.bool.map(PayloadValue.bool) ?? .string(text)
            case Tag.Name.int.rawValue: return node.int.map { .integer(Int64($0)) } ?? .string(text)
            case Tag.Name.float.rawValue: return node.float.map(PayloadValue.real) ?? .string(text)
            case Tag.Name.timestamp.rawValue: return ISO8601.parse(text).map(PayloadValue.date) ?? .string(text)
            default: return .string(text)
            }
        case .sequence(let sequence):
            return .array(sequence.map(value(of:)))
        case .mapping(let mapping):
            var dictionary: [String: PayloadValue] = [:]
            for (key, element) in mapping {
                guard case .scalar(let scalar) = key else { continue }  // a list or map as a key: no field can name it
                dictionary[scalar.string] = value(of: element)
            }
            return .dictionary(dictionary)
        }
    }
}
