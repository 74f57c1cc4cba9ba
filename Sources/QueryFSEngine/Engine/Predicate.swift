#if canImport(Glibc)
import Glibc
#endif

/// The filter half of a view: which items it shows.
package indirect enum Predicate: Equatable, Sendable {
    case all
    case not(Predicate)
    case and([Predicate])
    case or([Predicate])
    /// `field OP value`; a missing or differently typed field never matches
    /// (except `!=`, which matches).
    case compare(Field, ComparisonOperator, FieldValue)
    /// Tags (or any list) holding an element equal to the value; for text, a
    /// case-insensitive substring.
    case contains(Field, FieldValue)
    /// A shell glob (`*`, `?`, `[…]`, as fnmatch(3)) matching a text value,
    /// or any element of a list (tags).
    case glob(Field, String)
    /// The item carries a tag whose sanitized folder name is this (SPEC §2
    /// `tag/<tag>/`: tags that sanitize alike share a folder).
    case hasTagFolder(String)

    package func matches(_ item: Item) -> Bool {
        switch self {
        case .all:
            return true
        case .not(let inner):
            return !inner.matches(item)
        // Loops, not allSatisfy/contains: a closure would copy the item
        // (a dozen retains) for every test of every view.
        case .and(let all):
            for predicate in all where !predicate.matches(item) { return false }
            return true
        case .or(let any):
            for predicate in any where predicate.matches(item) { return true }
            return false
        case let .compare(field, op, value):
            return op.holds(FieldValue.compare(item.value(of: field), value))
        case .contains(.tags, .text(let tag)):
            // The common case, without building a list of values per test.
            return item.tags.contains(tag)
        case let .contains(field, value):
            switch item.value(of: field) {
            case .list(let elements): return elements.contains(value)
            case .text(let text):
                guard case .text(let needle) = value else { return false }
                return text.lowercased().contains(needle.lowercased())
            default: return false
            }
        case .glob(.tags, let pattern):
            return item.tags.contains { fnmatch(pattern, $0, 0) == 0 }
        case let .glob(field, pattern):
            switch item.value(of: field) {
            case .text(let text): return fnmatch(pattern, text, 0) == 0
            case .list(let elements):
                return elements.contains { if case .text(let text) = $0 { fnmatch(pattern, text, 0) == 0 } else { false } }
            default: return false
            }
        case .hasTagFolder(let folder):
            return item.tags.contains { EntryNaming.tagFolderNames($0).contains(folder) }
        }
    }

    /// The `payload.KEY.PATH` fields this predicate reads, so a scan extracts them.
    package var payloadKeyPaths: Set<String> {
        switch self {
        case .all, .hasTagFolder: return []
        case .not(let inner): return inner.payloadKeyPaths
        case .and(let list), .or(let list): return list.reduce(into: []) { $0.formUnion($1.payloadKeyPaths) }
        case .compare(let field, _, _), .contains(let field, _), .glob(let field, _):
            if case .payload(let path) = field { return [path] }
            return []
        }
    }
}

package enum ComparisonOperator: String, Sendable, CaseIterable {
    case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

    /// Whether the comparison holds given `compare(field, value)` (nil: not comparable).
    func holds(_ comparison: Int?) -> Bool {
        guard let comparison else { return self == .notEqual }
        switch self {
        case .equal: return comparison == 0
        case .notEqual: return comparison != 0
        case .less: return comparison < 0
        case .lessOrEqual: return comparison <= 0
        case .greater: return comparison > 0
        case .greaterOrEqual: return comparison >= 0
        }
    }
}
