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
