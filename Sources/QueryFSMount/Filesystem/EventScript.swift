import QueryFSEngine
import QueryFSCollection
/// The filesystem operations that turn one view folder's old listing into
/// its new one, as a file manager watching the folder should see them:
/// removals (`unlink`), entries whose name changed — a new rank or a new
/// title — (`rename`), insertions (`symlink`) and entries whose item changed
/// in place (`utimensat`). Replayed through the mount by `EventReplayer`,
/// each raises its inotify event; applied in order to the old listing they
/// give the new one.
struct EventScript {
    enum Operation: Equatable {
        case remove(name: [UInt8], record: ItemRecord)
        case rename(from: [UInt8], to: [UInt8], record: ItemRecord)
        case create(name: [UInt8], record: ItemRecord)
        case touch(name: [UInt8], record: ItemRecord)

        static func == (lhs: Operation, rhs: Operation) -> Bool {
            switch (lhs, rhs) {
            case let (.remove(a, _), .remove(b, _)), let (.create(a, _), .create(b, _)), let (.touch(a, _), .touch(b, _)): a == b
            case let (.rename(a, b, _), .rename(c, d, _)): a == c && b == d
            default: false
            }
        }
    }

    /// What a watcher should hear first: removals, new entries, and the
    /// entries of items that changed (moved, retitled, touched) — whatever
    /// needs no other entry to move out of its way.
    var urgent: [Operation] = []
    /// The rest, in an order the kernel accepts: renames of entries whose
    /// rank shifted (and of changed items whose new name an old entry still
    /// holds), then the creations that waited for them.
    var shifts: [Operation] = []
    var operations: [Operation] { urgent + shifts }

    /// The names the operations leave in the folder (created, renamed to, touched).
    var namesGiven: [[UInt8]] {
        operations.compactMap { operation in
            switch operation {
            case .create(let name, _), .rename(_, let name, _), .touch(let name, _): name
            case .remove: nil
            }
        }
    }
    /// True when the change renamed more entries than the bound: only the
    /// entries that came, left, moved or changed have operations; the
    /// others keep their old rank in a watcher's copy (their stale names
    /// still resolve, see `ViewListing.index(ofEntryMeaning:)`) and the
    /// folder's own attribute change tells KIO to list it again.
    var overBound = false

    /// A name no entry can have (entry names start with a rank), for the
    /// rare cycle of renames (two entries of the same title trading ranks).
    static func parkingName(_ serial: Int) -> [UInt8] { Array(".queryfs-event-\(serial)".utf8) }

    private init() {}

    /// One name taken away: a name typed through the mount for the entry of
    /// `record` that is not the entry's own (`ViewEditOperations.announceTypedNameGone`).
    static func removing(_ name: [UInt8], record: ItemRecord) -> EventScript {
        var script = EventScript()
        script.urgent = [.remove(name: name, record: record)]
        return script
    }

    /// One name made known again: an entry the kernel reported moved away
    /// that its folder still lists (`ViewEditOperations.announceEntryStayed`).
    static func creating(_ name: [UInt8], record: ItemRecord) -> EventScript {
        var script = EventScript()
        script.urgent = [.create(name: name, record: record)]
        return script
    }

    /// The script from `old` to `new` for `change`, with at most about
    /// `bound` operations.
    init(old: ViewListing, new: ViewListing, change: ViewChange, bound: Int) {
        let diff = change.diff
        let range = change.shiftedRange
        let leaving = Set(diff.deletions).union(diff.moves.map(\.from))
        let arriving = Set(diff.insertions).union(diff.moves.map(\.to))
        overBound = range.count + diff.updates.count > bound
        var removals: [Operation] = [], creations: [Operation] = [], touches: [Operation] = []
        var changedRenames: [Operation] = []
        var renames: [(from: [UInt8], to: [UInt8], record: ItemRecord)] = []
        let removed = Set(diff.deletions)
        // The only old entry that can hold a new name is the one of the same
        // rank (same width, same title), if it is still there.
        func isTaken(_ name: [UInt8], newIndex: Int) -> Bool {
            newIndex < old.count && !removed.contains(newIndex) && old.name(at: newIndex) == name
        }
        // A changed item's own rename goes first when its new name is free.
        func renameChanged(from was: [UInt8], to now: [UInt8], newIndex: Int) {
            if isTaken(now, newIndex: newIndex) { renames.append((was, now, new.records[newIndex])) }
            else { changedRenames.append(.rename(from: was, to: now, record: new.records[newIndex])) }
        }
        for index in diff.deletions where index < old.count { removals.append(.remove(name: old.name(at: index), record: old.records[index])) }
        for move in diff.moves where move.from < old.count && move.to < new.count {
            let (was, now) = (old.name(at: move.from), new.name(at: move.to))
            if was == now { touches.append(.touch(name: now, record: new.records[move.to])) } else { renameChanged(from: was, to: now, newIndex: move.to) }
        }
        var creationsAfterRenames: [Operation] = []
        for index in diff.insertions where index < new.count {
            let name = new.name(at: index)
            if isTaken(name, newIndex: index) { creationsAfterRenames.append(.create(name: name, record: new.records[index])) }
            else { creations.append(.create(name: name, record: new.records[index])) }
        }
        var updated = Set(diff.updates)
        // Entries that stayed keep their order: pair them old to new across
        // the shifted range (before it nothing moved).
        if !overBound {
            var (oldIndex, newIndex) = (range.lowerBound, range.lowerBound)
            while oldIndex < old.count, newIndex < new.count, oldIndex < range.upperBound || newIndex < range.upperBound {
                if leaving.contains(oldIndex) { oldIndex += 1; continue }
                if arriving.contains(newIndex) { newIndex += 1; continue }
                let (was, now) = (old.name(at: oldIndex), new.name(at: newIndex))
                if updated.remove(oldIndex) != nil {
                    if was != now { renameChanged(from: was, to: now, newIndex: newIndex) } else { touches.append(.touch(name: now, record: new.records[newIndex])) }
                } else if was != now {
                    renames.append((was, now, new.records[newIndex]))
                }
                oldIndex += 1
                newIndex += 1
            }
        }
        // Updates outside the shifted range (or all of them, over the bound) keep their rank.
        for index in updated.sorted() where index < old.count {
            let newIndex = change.updatedTo[index] ?? index
            guard newIndex < new.count else { continue }
            let (was, now) = (old.name(at: index), new.name(at: newIndex))
            if was != now { renameChanged(from: was, to: now, newIndex: newIndex) } else { touches.append(.touch(name: now, record: new.records[newIndex])) }
        }
        urgent = removals + creations + changedRenames + touches
        shifts = Self.ordered(renames) + creationsAfterRenames
    }

    /// This script without its rank-shift renames (a replay fallen behind):
    /// the folder's own attribute change stands for them.
    func withoutShifts() -> EventScript {
        var script = self
        script.shifts = shifts.filter { if case .create = $0 { true } else { false } }
        script.overBound = true
        return script
    }

    /// Renames in an order where no target is still another rename's source
    /// (renaming onto a name in use would replace that entry): a rename goes
    /// once the entry holding its target has moved on; a cycle is broken by
    /// parking one entry under a hidden name.
    ///
    /// Each rename waits for at most one other (the one whose source is its
    /// target), so the waits form chains and cycles: each chain is followed
    /// to its end and emitted from there, in one pass. (Passes until nothing
    /// waited cost n²/2 set lookups for one shift, where every entry waits
    /// for the next: 2–4 ms for 100 renames of a million-entry view, a
    /// change's latency doubled.)
    static func ordered(_ renames: [(from: [UInt8], to: [UInt8], record: ItemRecord)]) -> [Operation] {
        var bySource: [[UInt8]: Int] = [:]
        for (index, rename) in renames.enumerated() { bySource[rename.from] = index }
        var done = [Bool](repeating: false, count: renames.count)
        var onPath = [Bool](repeating: false, count: renames.count)
        var result: [Operation] = []
        result.reserveCapacity(renames.count)
        var parked = 0
        func emit(_ index: Int, from: [UInt8]? = nil) {
            let rename = renames[index]
            result.append(.rename(from: from ?? rename.from, to: rename.to, record: rename.record))
            done[index] = true
        }
        for start in renames.indices where !done[start] {
            // The chain of waits from `start`, to a free target or back onto itself.
            var path = [start]
            onPath[start] = true
            var cycleStart: Int?
            while let next = bySource[renames[path.last!].to], next != path.last!, !done[next] {
                if onPath[next] { cycleStart = path.firstIndex(of: next); break }
                path.append(next)
                onPath[next] = true
            }
            for index in path { onPath[index] = false }
            guard let cycleStart else {
                for index in path.reversed() { emit(index) }
                continue
            }
            // The cycle's first entry steps aside; the rest follow it round, then it lands.
            let parking = parkingName(parked)
            parked += 1
            let first = path[cycleStart]
            result.append(.rename(from: renames[first].from, to: parking, record: renames[first].record))
            for index in path[(cycleStart + 1)...].reversed() { emit(index) }
            emit(first, from: parking)
            for index in path[..<cycleStart].reversed() { emit(index) }
        }
        return result
    }

    /// What applying `operations` to `names` gives (for tests: it must be the new listing).
    static func apply(_ operations: [Operation], to names: [[UInt8]]) -> Set<[UInt8]> {
        var present = Set(names)
        for operation in operations {
            switch operation {
            case .remove(let name, _): present.remove(name)
            case .rename(let from, let to, _): present.remove(from); present.insert(to)
            case .create(let name, _): present.insert(name)
            case .touch: break
            }
        }
        return present
    }
}
