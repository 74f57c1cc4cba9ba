import QueryFSEngine
/// A view's members kept in view order, changed in place: finding a
/// position is a binary search, inserting or removing one is a memmove.
package final class SortedView {
    package let definition: ViewDefinition
    package private(set) var records: RecordList

    init(definition: ViewDefinition, records: [ItemRecord]) {
        self.definition = definition
        self.records = RecordList(records)
    }

    init(definition: ViewDefinition, records: RecordList) {
        self.definition = definition
        self.records = records
    }

    /// `view`'s members in its order under `definition`, which orders and
    /// selects alike (only what its entries are differs).
    init(restyling view: SortedView, as definition: ViewDefinition) {
        self.definition = definition
        records = view.records
    }

    package var count: Int { records.count }

    func contains(_ item: Item) -> Bool { definition.filter.matches(item) }

    /// First position whose record does not come before `item`.
    func lowerBound(_ item: Item) -> Int {
        var low = 0, high = records.count
        while low < high {
            let middle = (low + high) / 2
            if definition.order.compare(records[middle], item) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Position of `record` (found by its own sort key, `item` being its
    /// state: rebuilt from the record once, not at every step), or nil.
    func index(of record: ItemRecord, _ item: Item) -> Int? {
        let index = lowerBound(item)
        guard index < records.count, records[index].name == record.name else { return nil }
        return index
    }

    /// Where `record` (in state `item`) sits, or nil if it is not in the view (binary search,
    /// then a scan for the same record should the order ever fail it).
    func existingPosition(of record: ItemRecord, _ item: Item) -> Int? {
        if let index = index(of: record, item) { return index }
        return records.firstIndex { $0 === record }
    }

    /// Where `record`, just inserted, now sits. The binary search finds it
    /// whenever the order is total, as every order is (`FieldValue.order`);
    /// should one ever not be, a scan finds it instead of the daemon trapping.
    func position(of record: ItemRecord, _ item: Item) -> Int {
        if let index = index(of: record, item), records[index] === record { return index }
        return records.firstIndex { $0 === record } ?? 0
    }

    func remove(at index: Int) { records.remove(at: index) }

    /// Inserts `record` (in state `item`) in order and returns where.
    @discardableResult
    func insert(_ record: ItemRecord, _ item: Item) -> Int {
        let index = lowerBound(item)
        records.insert(record, at: index)
        return index
    }
}

extension Ordering {
    /// Negative when `record` comes before `item`: `compare(_:_:)` with one
    /// side read from a record's fields, so a binary search over a view
    /// does not rebuild an `Item` at every step.
    func compare(_ record: ItemRecord, _ item: Item) -> Int {
        for key in keys {
            let result: Int
            switch key.field {
            case .modified: result = record.modified == item.modified ? 0 : (record.modified < item.modified ? -1 : 1)
            case .created: result = record.created == item.created ? 0 : (record.created < item.created ? -1 : 1)
            case .size: result = record.size == item.size ? 0 : (record.size < item.size ? -1 : 1)
            case .archived: result = record.archived == item.archived ? 0 : (record.archived ? 1 : -1)
            case .name: result = compareBytes(record.name.bytes, item.name.bytes)
            case .title: result = compareBytes(record.titleSortKey, item.titleSortKey)
            default: result = Self.compare(record.item, item, on: key.field)
            }
            if result != 0 { return key.ascending ? result : -result }
        }
        return compareBytes(record.name.bytes, item.name.bytes)
    }
}
