#if canImport(Glibc)
import Glibc
#endif

/// Sorts the items a view selected, fast: 100,000 items in a few tens of
/// milliseconds. Comparing `Item` values directly costs reference counting on
/// every comparison, so the sort key is first copied out into a flat column
/// (timestamps, or one byte buffer for title keys) and the names into another
/// for the tie-break; the sort then touches only those columns.
package enum ViewSorter {
    package static func sort(_ selected: inout [Int], items: UnsafeBufferPointer<Item>, order: Ordering) {
        guard selected.count > 1 else { return }
        guard order.keys.count == 1 else {
            sortByRanks(&selected, items: items, order: order)
            return
        }
        let key = order.keys[0]
        let names = byteColumn(.name, selected: selected, items: items)
        var positions = Array(0..<selected.count)
        switch key.field {
        case .modified, .created:
            var keys: [Timestamp] = []
            keys.reserveCapacity(selected.count)
            for index in selected { keys.append(key.field == .modified ? items[index].modified : items[index].created) }
            sort(&positions, by: keys, ascending: key.ascending, names: names)
        case .size:
            var keys: [UInt64] = []
            keys.reserveCapacity(selected.count)
            for index in selected { keys.append(items[index].size) }
            sort(&positions, by: keys, ascending: key.ascending, names: names)
        case .title:
            let titles = byteColumn(.title, selected: selected, items: items)
            positions.sort { a, b in
                let result = titles.compare(a, b)
                if result != 0 { return key.ascending == (result < 0) }
                return names.compare(a, b) < 0
            }
        case .name:
            positions.sort { a, b in
                let result = names.compare(a, b)
                return key.ascending == (result < 0)
            }
        default:
            let compare = order.comparator()
            selected.sort { compare(items[$0], items[$1]) < 0 }
            return
        }
        selected = positions.map { selected[$0] }
    }

    /// Several keys: each key becomes a column of ranks (equal values share
    /// one, a descending key counts down); the sort then compares integers
    /// in one flat buffer, and names only where every key ties.
    /// A key on another field (tags, url, payload) compares items instead.
    private static func sortByRanks(_ selected: inout [Int], items: UnsafeBufferPointer<Item>, order: Ordering) {
        let width = order.keys.count
        var table = [Int](repeating: 0, count: selected.count * width)
        for (column, key) in order.keys.enumerated() {
            guard let ranks = ranks(of: key.field, selected: selected, items: items) else {
                let compare = order.comparator()
                selected.sort { compare(items[$0], items[$1]) < 0 }
                return
            }
            for (position, rank) in ranks.enumerated() { table[position * width + column] = key.ascending ? rank : -rank }
        }
        let names = byteColumn(.name, selected: selected, items: items)
        sort(&selected, byRows: table, width: width) { names.compare($0, $1) < 0 }
    }

    /// Sorts `selected` by `table`, one row of `width` integers per selected
    /// position, compared column by column; `tieBreak` orders equal rows.
    static func sort(_ selected: inout [Int], byRows table: [Int], width: Int, tieBreak: (Int, Int) -> Bool) {
        var positions = Array(selected.indices)
        table.withUnsafeBufferPointer { table in
            positions.sort { a, b in
                let rowA = a * width, rowB = b * width
                for column in 0..<width where table[rowA + column] != table[rowB + column] {
                    return table[rowA + column] < table[rowB + column]
                }
                return tieBreak(a, b)
            }
        }
        selected = positions.map { selected[$0] }
    }

    /// The rank of each selected item by `field` ascending, nil for a field
    /// without a flat column. (Loops, not map: a closure reading
    /// `items[$0].field` copied the whole item first.)
    static func ranks(of field: Field, selected: [Int], items: UnsafeBufferPointer<Item>) -> [Int]? {
        switch field {
        case .modified, .created:
            var keys: [Timestamp] = []
            keys.reserveCapacity(selected.count)
            for index in selected { keys.append(field == .modified ? items[index].modified : items[index].created) }
            return ranks(keys)
        case .size:
            var keys: [UInt64] = []
            keys.reserveCapacity(selected.count)
            for index in selected { keys.append(items[index].size) }
            return ranks(keys)
        case .title, .name:
            let column = byteColumn(field, selected: selected, items: items)
            var positions = Array(0..<selected.count)
            positions.sort { column.compare($0, $1) < 0 }
            return denseRanks(positions) { column.compare($0, $1) == 0 }
        default: return nil
        }
    }

    /// The title sort keys or the name bytes of the selected items, end to end.
    private static func byteColumn(_ field: Field, selected: [Int], items: UnsafeBufferPointer<Item>) -> FlatByteColumn {
        var strings: [[UInt8]] = []
        strings.reserveCapacity(selected.count)
        for index in selected { strings.append(field == .title ? items[index].titleSortKey : items[index].name.bytes) }
        return FlatByteColumn(strings)
    }

    private static func ranks<Key: Comparable>(_ keys: [Key]) -> [Int] {
        keys.withUnsafeBufferPointer { keys in
            var positions = Array(0..<keys.count)
            positions.sort { keys[$0] < keys[$1] }
            return denseRanks(positions) { keys[$0] == keys[$1] }
        }
    }

    /// Ranks from positions in sorted order: a step at each change of value.
    private static func denseRanks(_ sorted: [Int], same: (Int, Int) -> Bool) -> [Int] {
        var ranks = [Int](repeating: 0, count: sorted.count)
        var rank = 0
        for (offset, position) in sorted.enumerated() {
            if offset > 0, !same(sorted[offset - 1], position) { rank += 1 }
            ranks[position] = rank
        }
        return ranks
    }

    private static func sort<Key: Comparable>(_ positions: inout [Int], by keys: [Key], ascending: Bool, names: FlatByteColumn) {
        keys.withUnsafeBufferPointer { keys in
            positions.sort { a, b in
                if keys[a] != keys[b] { return (keys[a] < keys[b]) == ascending }
                return names.compare(a, b) < 0
            }
        }
    }
}

/// Byte strings stored end to end in one buffer, compared with memcmp.
struct FlatByteColumn {
    private let bytes: [UInt8]
    private let offsets: [Int]

    init(_ strings: [[UInt8]]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(strings.reduce(0) { $0 + $1.count })
        var offsets = [0]
        offsets.reserveCapacity(strings.count + 1)
        for string in strings {
            bytes.append(contentsOf: string)
            offsets.append(bytes.count)
        }
        self.bytes = bytes
        self.offsets = offsets
    }

    /// memcmp order of strings `a` and `b`: negative, zero or positive.
    @inline(__always)
    package func compare(_ a: Int, _ b: Int) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            offsets.withUnsafeBufferPointer { offsets in
                let aStart = offsets[a], aCount = offsets[a + 1] - aStart
                let bStart = offsets[b], bCount = offsets[b + 1] - bStart
                let common = min(aCount, bCount)
                if common > 0, let base = buffer.baseAddress {
                    let result = memcmp(base + aStart, base + bStart, common)
                    if result != 0 { return result < 0 ? -1 : 1 }
                }
                return aCount == bCount ? 0 : (aCount < bCount ? -1 : 1)
            }
        }
    }
}
