/// A field of an item that filters and orders refer to (SPEC §1).
public enum Field: Hashable, Sendable, CustomStringConvertible {
    case name, ext, title, archived, tags, url, modified, created, size
    /// `payload.KEY.PATH`: any payload value, by key path.
    case payload(String)

    public static let builtIn: [Field] = [.name, .ext, .title, .archived, .tags, .url, .modified, .created, .size]

    /// Parses `title`, `payload.webLocation.relative`, …
    public init?(named text: String) {
        if text.hasPrefix("payload."), text.count > "payload.".count {
            self = .payload(String(text.dropFirst("payload.".count)))
            return
        }
        guard let field = Field.builtIn.first(where: { $0.description == text }) else { return nil }
        self = field
    }

    public var description: String {
        switch self {
        case .name: "name"
        case .ext: "ext"
        case .title: "title"
        case .archived: "archived"
        case .tags: "tags"
        case .url: "url"
        case .modified: "modified"
        case .created: "created"
        case .size: "size"
        case .payload(let path): "payload.\(path)"
        }
    }
}

/// A field's value for one item, in a form filters can compare.
public enum FieldValue: Equatable, Sendable {
    case text(String)
    case bool(Bool)
    case number(Double)
    case date(Timestamp)
    case list([FieldValue])
    case missing

    init(_ payload: PayloadValue) {
        switch payload {
        case .string(let text): self = .text(text)
        case .integer(let value): self = .number(Double(value))
        case .real(let value): self = .number(value)
        case .bool(let value): self = .bool(value)
        case .date(let seconds):
            let whole = seconds.rounded(.down)
            self = .date(Timestamp(seconds: Int64(whole), nanoseconds: UInt32((seconds - whole) * 1e9)))
        case .array(let values): self = .list(values.map(FieldValue.init))
        case .data, .dictionary, .null: self = .missing
        }
    }

    /// Orders two values of the same kind; values of different kinds, and
    /// missing values, are not ordered (nil).
    public static func compare(_ a: FieldValue, _ b: FieldValue) -> Int? {
        switch (a, b) {
        case let (.text(x), .text(y)): return x == y ? 0 : (x < y ? -1 : 1)
        case let (.bool(x), .bool(y)): return x == y ? 0 : (!x ? -1 : 1)
        case let (.number(x), .number(y)): return x == y ? 0 : (x < y ? -1 : 1)
        case let (.date(x), .date(y)): return x == y ? 0 : (x < y ? -1 : 1)
        default: return nil
        }
    }
}

extension Item {
    public func value(of field: Field) -> FieldValue {
        switch field {
        case .name: .text(name.description)
        case .ext: .text(name.ext)
        case .title: .text(title)
        case .archived: .bool(archived)
        case .tags: .list(tags.map(FieldValue.text))
        case .url: url.map(FieldValue.text) ?? .missing
        case .modified: .date(modified)
        case .created: .date(created)
        case .size: .number(Double(size))
        case .payload(let path): payloadValues[path].map(FieldValue.init) ?? .missing
        }
    }
}
