/// A field of an item that filters and orders refer to (SPEC §1).
package enum Field: Hashable, Sendable, CustomStringConvertible {
    case name, ext, title, archived, tags, url, modified, created, size
    /// "sync copy", "numbered copy" or "git markers" for a conflict copy (`ConflictKind`), else missing.
    case conflict
    /// `payload.KEY.PATH`: any payload value, by key path.
    case payload(String)

    package static let builtIn: [Field] = [.name, .ext, .title, .archived, .tags, .url, .modified, .created, .size, .conflict]

    /// Parses `title`, `payload.webLocation.relative`, …
    package init?(named text: String) {
        if text.hasPrefix("payload."), text.count > "payload.".count {
            self = .payload(String(text.dropFirst("payload.".count)))
            return
        }
        guard let field = Field.builtIn.first(where: { $0.description == text }) else { return nil }
        self = field
    }

    package var description: String {
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
        case .conflict: "conflict"
        case .payload(let path): "payload.\(path)"
        }
    }
}

/// A field's value for one item, in a form filters can compare.
package enum FieldValue: Equatable, Sendable {
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
            // A payload may hold any Double (±inf, 1e300, NaN): dates past
            // either end of time sort at that end, and a NaN date is no date.
            self = Timestamp(clampingSecondsSince1970: seconds).map(FieldValue.date) ?? .missing
        case .array(let values): self = .list(values.map(FieldValue.init))
        case .data, .dictionary, .null: self = .missing
        }
    }

    /// Compares two values, for filters: of the same kind, or a boolean
    /// with a number (false as 0, true as 1: `payload.done=1` holds for a
    /// payload's `true`, `payload.rating>0` for its `1`). Other values of
    /// different kinds, missing values and NaN are not comparable (nil):
    /// `payload.x > 5` does not hold for a NaN, `payload.x != 5` does.
    package static func compare(_ a: FieldValue, _ b: FieldValue) -> Int? {
        switch (a, b) {
        case let (.bool(flag), .number): return compare(.number(flag ? 1 : 0), b)
        case let (.number, .bool(flag)): return compare(a, .number(flag ? 1 : 0))
        default: return compareSameKind(a, b)
        }
    }

    /// `compare` for values of one kind; nil for any two of different kinds.
    private static func compareSameKind(_ a: FieldValue, _ b: FieldValue) -> Int? {
        switch (a, b) {
        case let (.text(x), .text(y)): return x == y ? 0 : (x < y ? -1 : 1)
        case let (.bool(x), .bool(y)): return x == y ? 0 : (!x ? -1 : 1)
        case let (.number(x), .number(y)):
            if x.isNaN || y.isNaN { return nil }
            return x == y ? 0 : (x < y ? -1 : 1)
        case let (.date(x), .date(y)): return x == y ? 0 : (x < y ? -1 : 1)
        default: return nil
        }
    }

    /// A total order over every value, for sorting: a view's binary search
    /// needs one (with NaN compared the IEEE way, an item sorted on a NaN
    /// could not be found again). Numbers ascend with NaN after +infinity;
    /// values of different kinds order by kind (booleans, numbers, dates,
    /// text, lists); missing values come last.
    package static func order(_ a: FieldValue, _ b: FieldValue) -> Int {
        switch (a, b) {
        case let (.number(x), .number(y)) where x.isNaN || y.isNaN:
            return x.isNaN == y.isNaN ? 0 : (x.isNaN ? 1 : -1)
        default:
            // Kinds apart even for a boolean and a number: a sort keeps each kind together.
            return compareSameKind(a, b) ?? kindRank(a) - kindRank(b)
        }
    }

    private static func kindRank(_ value: FieldValue) -> Int {
        switch value {
        case .bool: 0
        case .number: 1
        case .date: 2
        case .text: 3
        case .list: 4
        case .missing: 5
        }
    }
}

extension Item {
    package func value(of field: Field) -> FieldValue {
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
        case .conflict: conflict.map { .text($0.text) } ?? .missing
        case .payload(let path): payloadValues[path].map(FieldValue.init) ?? .missing
        }
    }
}
