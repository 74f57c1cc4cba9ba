/// A view's members kept in view order, changed in place: finding a
/// position is a binary search, inserting or removing one is a memmove.
public final class SortedView {
    public let definition: ViewDefinition
    public private(set) var records: RecordList
    private let compare: @Sendable (borrowing Item, borrowing Item) -> Int

    init(definition: ViewDefinition, records: [ItemRecord]) {
        self.definition = definition
        self.records = RecordList(records)
        compare = definition.order.comparator()
    }

    public var count: Int { records.count }

    func contains(_ item: Item) -> Bool { definition.filter.matches(item) }

    /// First position whose record does not come before `item`.
    func lowerBound(_ item: Item) -> Int {
        var low = 0, high = records.count
        while low < high {
            let middle = (low + high) / 2
            if compare(records[middle].item, item) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Position of `record` (found by its own sort key), or nil.
    func index(of record: ItemRecord) -> Int? {
        let index = lowerBound(record.item)
        guard index < records.count, records[index].name == record.name else { return nil }
        return index
    }

    /// Where `record` sits, or nil if it is not in the view (binary search,
    /// then a scan for the same record should the order ever fail it).
    func existingPosition(of record: ItemRecord) -> Int? {
        if let index = index(of: record) { return index }
        return records.firstIndex { $0 === record }
    }

    /// Where `record`, just inserted, now sits. The binary search finds it
    /// whenever the order is total, as every order is (`FieldValue.order`);
    /// should one ever not be, a scan finds it instead of the daemon trapping.
    func position(of record: ItemRecord) -> Int {
        if let index = index(of: record), records[index] === record { return index }
        return records.firstIndex { $0 === record } ?? 0
    }

    func remove(at index: Int) { records.remove(at: index) }

    /// Inserts `record` in order and returns where.
    @discardableResult
    func insert(_ record: ItemRecord) -> Int {
        let index = lowerBound(record.item)
        records.insert(record, at: index)
        return index
    }
}
