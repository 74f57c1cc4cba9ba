import QueryFSEngine
import QueryFSCollection

/// What watchers of one view folder heard, as names with the record each
/// stood for, and the operations that bring them to a listing by names
/// alone. For the event replay once it gave up part of a script (a burst
/// of changes: newer ones were waiting): the scripts after it are made
/// from the listing the folder had, not from what its watchers heard, so
/// replayed as they are they would delete and rename entries no watcher
/// was told of — and the entries it was told of would stay, as ghosts.
struct HeardNames {
    private(set) var records: [[UInt8]: ItemRecord]

    /// The names of every entry of `listing`: what watchers heard once its script was replayed whole.
    init(_ listing: ViewListing) {
        var records: [[UInt8]: ItemRecord] = [:]
        records.reserveCapacity(listing.count)
        for index in 0..<listing.count { records[listing.name(at: index)] = listing.records[index] }
        self.records = records
    }

    /// What they heard once `operations` were made.
    mutating func apply<Operations: Sequence>(_ operations: Operations) where Operations.Element == EventScript.Operation {
        for operation in operations {
            switch operation {
            case .remove(let name, _): records[name] = nil
            case .rename(let from, let to, let record):
                records[from] = nil
                records[to] = record
            case .create(let name, let record), .touch(let name, let record): records[name] = record
            }
        }
    }

    /// The operations from these names to `listing`'s, entries matched by
    /// item (`ItemRecord.serial`): names gone are removed, an item's entry
    /// under a new name is renamed (in an order where no rename lands on a
    /// name still in use), new entries are made, and entries whose item
    /// changed under the same name are touched.
    func operations(to listing: ViewListing) -> [EventScript.Operation] {
        var names: [[UInt8]] = []
        names.reserveCapacity(listing.count)
        var indexBySerial: [UInt32: Int] = [:]
        for index in 0..<listing.count {
            names.append(listing.name(at: index))
            indexBySerial[listing.records[index].serial] = index
        }
        var placed = [Bool](repeating: false, count: listing.count)
        var kept: [[UInt8]: Int] = [:]
        for (index, name) in names.enumerated() where records[name]?.serial == listing.records[index].serial {
            kept[name] = index
            placed[index] = true
        }
        var removals: [EventScript.Operation] = [], touches: [EventScript.Operation] = []
        var renames: [(from: [UInt8], to: [UInt8], record: ItemRecord)] = []
        // Sorted: the same heard names and listing always give the same operations.
        for (name, record) in records.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            if let index = kept[name] {
                if listing.records[index] !== record { touches.append(.touch(name: name, record: listing.records[index])) }
            } else if let index = indexBySerial[record.serial], !placed[index] {
                placed[index] = true
                renames.append((name, names[index], listing.records[index]))
            } else {
                removals.append(.remove(name: name, record: record))
            }
        }
        var creations: [EventScript.Operation] = []
        for index in names.indices where !placed[index] { creations.append(.create(name: names[index], record: listing.records[index])) }
        return removals + EventScript.ordered(renames) + creations + touches
    }
}
