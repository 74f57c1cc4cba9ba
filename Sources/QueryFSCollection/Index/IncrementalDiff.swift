import QueryFSEngine
/// The diff of one view after a batch, computed from the changed items
/// alone (O(k log k + k²) for k changed items, independent of the view's
/// size): every unchanged entry keeps its relative order, so it stays; a
/// changed entry present before and after stays (an update) when it still
/// sits between the same unchanged neighbours and in order with the other
/// changed entries there, and moves otherwise.
struct IncrementalDiff {
    private(set) var result = ListDiff()
    /// New index of each updated entry, by old index.
    private(set) var updatedTo: [Int: Int] = [:]

    init(leaving: [(record: ItemRecord, index: Int)], arriving: [(record: ItemRecord, index: Int)], oldCount: Int) {
        let oldIndexes = leaving.map(\.index).sorted()
        let newIndexes = arriving.map(\.index).sorted()
        let newIndexSet = Set(newIndexes)
        var oldByName: [ItemName: Int] = [:]
        for (record, index) in leaving { oldByName[record.name] = index }

        /// Old index of the unchanged entry now at `newIndex`.
        func oldIndexOfUnchanged(atNew newIndex: Int) -> Int {
            // It is the r-th unchanged entry; in the old listing, changed entries sat among them.
            var position = newIndex - Self.countBelow(newIndex, in: newIndexes)
            for changedIndex in oldIndexes {
                if changedIndex <= position { position += 1 } else { break }
            }
            return position
        }

        // Changed entries present on both sides, grouped by the gap between
        // unchanged neighbours that they now sit in.
        var gaps: [Int: [(old: Int, new: Int)]] = [:]
        var arrivingNames = Set<ItemName>()
        for (record, newIndex) in arriving {
            arrivingNames.insert(record.name)
            guard let oldIndex = oldByName[record.name] else {
                result.insertions.append(newIndex)
                continue
            }
            var before = newIndex - 1
            while before >= 0 && newIndexSet.contains(before) { before -= 1 }
            var after = newIndex + 1
            while newIndexSet.contains(after) { after += 1 }
            let lowerOld = before >= 0 ? oldIndexOfUnchanged(atNew: before) : -1
            let upperOld = after < Self.newCount(oldCount: oldCount, leaving: leaving.count, arriving: arriving.count)
                ? oldIndexOfUnchanged(atNew: after) : oldCount
            if oldIndex > lowerOld && oldIndex < upperOld {
                gaps[before, default: []].append((oldIndex, newIndex))
            } else {
                result.moves.append(ListDiff.Move(from: oldIndex, to: newIndex))
            }
        }
        for (record, index) in leaving where !arrivingNames.contains(record.name) {
            result.deletions.append(index)
        }
        // Within a gap, the longest run in the same order stays; the rest moves.
        for (_, var members) in gaps {
            members.sort { $0.new < $1.new }
            let staying = Set(longestIncreasingRun(members.map(\.old)))
            for (position, member) in members.enumerated() {
                if staying.contains(position) {
                    result.updates.append(member.old)
                    updatedTo[member.old] = member.new
                } else {
                    result.moves.append(ListDiff.Move(from: member.old, to: member.new))
                }
            }
        }
        result.deletions.sort()
        result.insertions.sort()
        result.updates.sort()
        result.moves.sort { $0.from < $1.from }
    }

    private static func newCount(oldCount: Int, leaving: Int, arriving: Int) -> Int {
        oldCount - leaving + arriving
    }

    /// How many of the sorted `values` are below `limit`.
    private static func countBelow(_ limit: Int, in values: [Int]) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < limit { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
