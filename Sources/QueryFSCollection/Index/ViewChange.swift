import QueryFSEngine
/// What one batch of item changes did to one view: the diff (SPEC §4) and
/// the entry names it refers to.
package struct ViewChange: Sendable {
    package enum Kind: Sendable, Equatable {
        case changed
        /// A `tag/<tag>/` view that exists from now on (its first items are insertions).
        case appeared
        /// A `tag/<tag>/` view that no longer exists (its last items are deletions).
        case vanished
    }

    package let path: [String]
    package let kind: Kind
    package let diff: ListDiff
    package let oldCount: Int
    package let newCount: Int
    /// Entry names in the old listing, at the old indexes the diff names
    /// (deletions, move sources, updates).
    package let oldNames: [Int: [UInt8]]
    /// Entry names in the new listing, at the new indexes the diff names
    /// (insertions, move targets, and updated entries' new places).
    package let newNames: [Int: [UInt8]]
    /// New index of each updated entry, by its old index.
    package let updatedTo: [Int: Int]

    package var pathString: String { path.joined(separator: "/") }

    /// Whether every entry name changed: the rank width changed with the count.
    package var renamesAll: Bool {
        EntryNaming.rankWidth(count: oldCount) != EntryNaming.rankWidth(count: newCount)
    }

    /// The range of indexes whose ranks may have shifted: between the first
    /// and the last place an entry left or came (an entry updated in place
    /// shifts nothing), or every index when the rank width changed.
    package var shiftedRange: Range<Int> {
        if renamesAll { return 0..<max(oldCount, newCount) }
        let points = diff.deletions + diff.insertions + diff.moves.flatMap { [$0.from, $0.to] }
        guard let low = points.min(), let high = points.max() else { return 0..<0 }
        // Past the last place every entry shifts by the change of count.
        if oldCount != newCount { return low..<max(oldCount, newCount) }
        return low..<(high + 1)
    }
}

extension ViewChange {
    /// The change from `old` to `new`, two listings of the view at `path`
    /// evaluated apart (a reload remade the view with another query): by
    /// item, so an item in both is a move or an update, not a new entry.
    package static func between(path: [String], old: RecordList, new: RecordList, naming: ViewDefinition.EntryTitle) -> ViewChange {
        var oldRecords: [ItemRecord] = [], newRecords: [ItemRecord] = []
        oldRecords.reserveCapacity(old.count)
        newRecords.reserveCapacity(new.count)
        old.forEachRecord { _, record in oldRecords.append(record); return true }
        new.forEachRecord { _, record in newRecords.append(record); return true }
        var newByName: [ItemName: (index: Int, record: ItemRecord)] = [:]
        for (index, record) in newRecords.enumerated() { newByName[record.name] = (index, record) }
        var oldByName: [ItemName: ItemRecord] = [:]
        for record in oldRecords { oldByName[record.name] = record }
        let diff = ListDiff.between(old: oldRecords.map(\.name), new: newRecords.map(\.name)) { name in
            guard let oldRecord = oldByName[name], let newRecord = newByName[name]?.record else { return false }
            return oldRecord !== newRecord
        }
        var oldNames: [Int: [UInt8]] = [:], newNames: [Int: [UInt8]] = [:], updatedTo: [Int: Int] = [:]
        for index in diff.deletions + diff.moves.map(\.from) + diff.updates {
            oldNames[index] = oldRecords[index].entryName(index: index, count: oldRecords.count, naming: naming)
        }
        for index in diff.insertions + diff.moves.map(\.to) {
            newNames[index] = newRecords[index].entryName(index: index, count: newRecords.count, naming: naming)
        }
        for index in diff.updates {
            guard let placed = newByName[oldRecords[index].name] else { continue }
            updatedTo[index] = placed.index
            newNames[placed.index] = placed.record.entryName(index: placed.index, count: newRecords.count, naming: naming)
        }
        return ViewChange(path: path, kind: .changed, diff: diff, oldCount: oldRecords.count, newCount: newRecords.count,
                          oldNames: oldNames, newNames: newNames, updatedTo: updatedTo)
    }
}
