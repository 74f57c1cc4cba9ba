/// A value inside a payload (property list or JSON), independent of the
/// format it was read from. Not `indirect`: arrays and dictionaries already
/// live on the heap, and boxing every scalar would cost an allocation each.
package enum PayloadValue: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 1970.
    case date(Double)
    case data([UInt8])
    case array([PayloadValue])
    case dictionary([String: PayloadValue])
    case null

    /// The value at a key path (`webLocation.relative`): each component is a
    /// dictionary key, or an array index.
    package func value(atKeyPath path: some Collection<Substring>) -> PayloadValue? {
        var current = self
        for component in path {
            switch current {
            case .dictionary(let dictionary):
                guard let next = dictionary[String(component)] else { return nil }
                current = next
            case .array(let array):
                guard let index = Int(component), array.indices.contains(index) else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }

    package func value(atKeyPath path: String) -> PayloadValue? {
        value(atKeyPath: KeyPath(path))
    }

    /// A key path split once, for lookups on the scan's hot path.
    package struct KeyPath: Hashable, Sendable {
        package let string: String
        let components: [Substring]
        package init(_ string: String) {
            self.string = string
            components = string.split(separator: ".", omittingEmptySubsequences: false)
        }
    }

    package func value(atKeyPath path: KeyPath) -> PayloadValue? {
        if path.components.count == 1, case .dictionary(let dictionary) = self {
            return dictionary[path.string]
        }
        return value(atKeyPath: path.components)
    }

    /// A short name of the value's type, for problem reports.
    package var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        case .null: "null"
        }
    }
}

/// A payload that could not be parsed, with where and why.
package struct PayloadParseError: Error, CustomStringConvertible, Sendable, Equatable {
    package let offset: Int
    package let reason: String
    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }
    package var description: String { "\(reason) at byte \(offset)" }
}
