#if canImport(Glibc)
import Glibc
#endif

/// Sorts the items a view selected, fast: 100,000 items in a few tens of
/// milliseconds. Comparing `Item` values directly costs reference counting on
/// every comparison, so the sort key is first copied out into a flat column
/// (timestamps, or one byte buffer for title keys) and the names into another
/// for the tie-break; the sort then touches only those columns.
enum ViewSorter {
    static func sort(_ selected: inout [Int], items: UnsafeBufferPointer<Item>, order: Ordering) {
        guard selected.count > 1 else { return }
        guard order.keys.count == 1 else {
            let compare = order.comparator()
            selected.sort { compare(items[$0], items[$1]) < 0 }
            return
        }
        let key = order.keys[0]
        let names = FlatByteColumn(selected.map { items[$0].name.bytes })
        var positions = Array(0..<selected.count)
        switch key.field {
        case .modified:
            sort(&positions, by: selected.map { items[$0].modified }, ascending: key.ascending, names: names)
        case .created:
            sort(&positions, by: selected.map { items[$0].created }, ascending: key.ascending, names: names)
        case .size:
            sort(&positions, by: selected.map { items[$0].size }, ascending: key.ascending, names: names)
        case .title:
            let titles = FlatByteColumn(selected.map { items[$0].titleSortKey })
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
    func compare(_ a: Int, _ b: Int) -> Int {
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
