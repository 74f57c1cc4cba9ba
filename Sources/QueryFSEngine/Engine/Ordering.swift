/// The order half of a view: sort keys applied in turn, ties broken by name
/// bytewise ascending (SPEC §2).
package struct Ordering: Equatable, Sendable {
    package struct Key: Equatable, Sendable {
        package var field: Field
        package var ascending: Bool
        package init(_ field: Field, ascending: Bool) {
            self.field = field
            self.ascending = ascending
        }
    }

    package var keys: [Key]
    package init(_ keys: [Key]) { self.keys = keys }

    package static let titleNatural = Ordering([Key(.title, ascending: true)])
    package static let newestModifiedFirst = Ordering([Key(.modified, ascending: false)])
    package static let newestCreatedFirst = Ordering([Key(.created, ascending: false)])

    /// Whether `a` comes before `b`.
    package func precedes(_ a: Item, _ b: Item) -> Bool {
        compare(a, b) < 0
    }

    /// Negative when `a` comes first; zero only for the same name.
    package func compare(_ a: Item, _ b: Item) -> Int {
        comparator()(a, b)
    }

    /// A comparison function compiled once per sort: the keys are resolved
    /// up front so that each of the n·log n comparisons touches only the
    /// fields it needs (no copies of the key list or of field names).
    package func comparator() -> @Sendable (borrowing Item, borrowing Item) -> Int {
        @Sendable func byName(_ a: borrowing Item, _ b: borrowing Item) -> Int {
            compareBytes(a.name.bytes, b.name.bytes)
        }
        if keys.count == 1 {
            let ascending = keys[0].ascending
            switch keys[0].field {
            case .modified:
                return { a, b in
                    if a.modified != b.modified { return (a.modified < b.modified) == ascending ? -1 : 1 }
                    return byName(a, b)
                }
            case .created:
                return { a, b in
                    if a.created != b.created { return (a.created < b.created) == ascending ? -1 : 1 }
                    return byName(a, b)
                }
            case .title:
                return { a, b in
                    let result = compareBytes(a.titleSortKey, b.titleSortKey)
                    if result != 0 { return ascending ? result : -result }
                    return byName(a, b)
                }
            default:
                break
            }
        }
        let keys = self.keys
        return { a, b in
            for key in keys {
                let result = Self.compare(a, b, on: key.field)
                if result != 0 { return key.ascending ? result : -result }
            }
            return byName(a, b)
        }
    }

    /// Compares one field ascending. A missing value sorts after any present
    /// one in ascending order (before in descending).
    @inline(__always)
    package static func compare(_ a: borrowing Item, _ b: borrowing Item, on field: Field) -> Int {
        switch field {
        case .title: return compareBytes(a.titleSortKey, b.titleSortKey)
        case .modified: return a.modified == b.modified ? 0 : (a.modified < b.modified ? -1 : 1)
        case .created: return a.created == b.created ? 0 : (a.created < b.created ? -1 : 1)
        case .size: return a.size == b.size ? 0 : (a.size < b.size ? -1 : 1)
        case .name: return compareBytes(a.name.bytes, b.name.bytes)
        case .archived: return a.archived == b.archived ? 0 : (a.archived ? 1 : -1)
        default:
            return FieldValue.order(a.value(of: field), b.value(of: field))
        }
    }

    package var payloadKeyPaths: Set<String> {
        Set(keys.compactMap { if case .payload(let path) = $0.field { path } else { nil } })
    }
}
