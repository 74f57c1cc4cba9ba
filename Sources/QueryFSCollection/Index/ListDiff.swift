import QueryFSEngine
/// How one listing became another, as a table view applies batch updates
/// (SPEC §4): `deletions` are indexes in the old listing, `insertions`
/// indexes in the new one, `moves` go from an old index to a new one, and
/// `updates` are old indexes of entries whose item changed but kept its place.
package struct ListDiff: Equatable, Sendable {
    package struct Move: Equatable, Sendable {
        package var from: Int
        package var to: Int
        package init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    package var deletions: [Int] = []
    package var insertions: [Int] = []
    package var moves: [Move] = []
    package var updates: [Int] = []

    package init(deletions: [Int] = [], insertions: [Int] = [], moves: [Move] = [], updates: [Int] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.moves = moves
        self.updates = updates
    }

    package var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty }

    /// The diff between two listings of unique identities. Entries present in
    /// both stay in place when they belong to a longest run that kept its
    /// relative order (fewest moves); the others move. `changed` tells which
    /// common entries changed content (they become updates if they stay).
    package static func between<ID: Hashable>(old: [ID], new: [ID], changed: (ID) -> Bool = { _ in false }) -> ListDiff {
        var oldIndex: [ID: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, id) in old.enumerated() { oldIndex[id] = index }
        var newIDs = Set<ID>()
        newIDs.reserveCapacity(new.count)

        var diff = ListDiff()
        var common: [(old: Int, new: Int)] = []
        for (index, id) in new.enumerated() {
            newIDs.insert(id)
            if let from = oldIndex[id] { common.append((from, index)) } else { diff.insertions.append(index) }
        }
        for (index, id) in old.enumerated() where !newIDs.contains(id) { diff.deletions.append(index) }

        let staying = Set(longestIncreasingRun(common.map(\.old)).map { common[$0].old })
        for pair in common {
            if staying.contains(pair.old) {
                if changed(old[pair.old]) { diff.updates.append(pair.old) }
            } else {
                diff.moves.append(Move(from: pair.old, to: pair.new))
            }
        }
        diff.updates.sort()
        diff.moves.sort { $0.from < $1.from }
        return diff
    }

    /// Applies the diff to `old`: what stays keeps its relative order and
    /// fills the slots that no insertion or move lands in. `inserted(i)` gives
    /// the element inserted at new index `i`. Returns nil if the diff does not
    /// fit the listing (the property tests use this).
    package func apply<Element>(to old: [Element], newCount: Int, inserted: (Int) -> Element) -> [Element]? {
        var slots = [Element?](repeating: nil, count: newCount)
        var leaving = Set(deletions)
        for move in moves {
            guard old.indices.contains(move.from), slots.indices.contains(move.to), slots[move.to] == nil else { return nil }
            slots[move.to] = old[move.from]
            leaving.insert(move.from)
        }
        for index in insertions {
            guard slots.indices.contains(index), slots[index] == nil else { return nil }
            slots[index] = inserted(index)
        }
        var staying = old.indices.lazy.filter { !leaving.contains($0) }.makeIterator()
        for index in slots.indices where slots[index] == nil {
            guard let from = staying.next() else { return nil }
            slots[index] = old[from]
        }
        guard staying.next() == nil else { return nil }
        return slots.map { $0! }
    }
}

/// Indexes into `values` of one longest strictly increasing subsequence
/// (patience sorting, O(n log n)).
func longestIncreasingRun(_ values: [Int]) -> [Int] {
    guard !values.isEmpty else { return [] }
    var tails: [Int] = []           // index into values of the smallest tail of each length
    var previous = [Int](repeating: -1, count: values.count)
    for (index, value) in values.enumerated() {
        var low = 0, high = tails.count
        while low < high {
            let middle = (low + high) / 2
            if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
        }
        if low > 0 { previous[index] = tails[low - 1] }
        if low == tails.count { tails.append(index) } else { tails[low] = index }
    }
    var run: [Int] = []
    var cursor = tails.last!
    while cursor >= 0 {
        run.append(cursor)
        cursor = previous[cursor]
    }
    return run.reversed()
}
