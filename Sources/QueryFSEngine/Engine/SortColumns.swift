/// The rank of every item by each field a view can sort on quickly, over one
/// array of items, each column computed on first use and then shared by
/// every view evaluated over that array: 1,000 views at mount, or `query/`
/// folders made in a row, each sort integers instead of building their own
/// columns of titles and names. Safe to use from several threads.
package final class SortColumns: @unchecked Sendable {
    private let items: [Item]
    private let lock = PlainLock()
    private var columns: [Field: [Int]] = [:]

    package init(items: [Item]) {
        self.items = items
    }

    /// Ranks by `field` ascending (equal values share one; names are unique,
    /// so their ranks are a total order), or nil for a field without one.
    func ranks(of field: Field) -> [Int]? {
        guard Self.fields.contains(field) else { return nil }
        return lock.withLock {
            if let column = columns[field] { return column }
            let column = items.withUnsafeBufferPointer { items in
                ViewSorter.ranks(of: field, selected: Array(items.indices), items: items)
            }
            columns[field] = column
            return column
        }
    }

    static let fields: Set<Field> = [.modified, .created, .size, .title, .name]

    /// Sorts `selected` (indexes into the items) in `order`; false if a key
    /// has no column (the caller sorts another way).
    func sort(_ selected: inout [Int], order: Ordering) -> Bool {
        guard order.keys.allSatisfy({ Self.fields.contains($0.field) }), let names = ranks(of: .name) else { return false }
        // One flat row per selected item: its signed key ranks, then its name rank.
        let width = order.keys.count + 1
        var table = [Int](repeating: 0, count: selected.count * width)
        for (column, key) in order.keys.enumerated() {
            let ranks = ranks(of: key.field)!
            for (position, index) in selected.enumerated() {
                table[position * width + column] = key.ascending ? ranks[index] : -ranks[index]
            }
        }
        for (position, index) in selected.enumerated() { table[position * width + width - 1] = names[index] }
        ViewSorter.sort(&selected, byRows: table, width: width) { _, _ in false }  // names are unique: no ties
        return true
    }
}
