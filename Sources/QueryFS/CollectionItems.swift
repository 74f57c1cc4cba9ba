import QueryFSCollection

/// The items of a view at one moment, in the view's order: an immutable
/// snapshot, cheap to keep (it shares its storage with the live index).
public struct CollectionItems: RandomAccessCollection, Sendable {
    let records: RecordList

    init(_ records: RecordList) { self.records = records }

    public var startIndex: Int { 0 }
    public var endIndex: Int { records.count }
    public subscript(index: Int) -> CollectionItem { CollectionItem(record: records[index]) }

    /// The index of the item named `name` in the backing directory, or nil.
    /// A walk of the list: O(count), about a millisecond at 100,000 items.
    public func index(named name: String) -> Int? {
        let wanted = Array(name.utf8)
        var found: Int?
        records.forEachRecord { index, record in
            if record.name.bytes == wanted { found = index }
            return found == nil
        }
        return found
    }

    /// The index of `item`'s state in this snapshot, or of its newer state
    /// when the item changed since (found by name), or nil if it left the view.
    public func index(of item: CollectionItem) -> Int? { index(named: item.name) }
}
