import QueryFSEngine
/// Every record of the live index, by name: an open-addressing table
/// (linear probing) of references, with a 32-bit fingerprint of each name's
/// hash beside, sized to its count rather than to a power of two.
///
/// A Swift Dictionary of names to records took 42 bytes per item at 100,000
/// items (262,144 buckets of a key and a value: 100,000 is just past what
/// 131,072 buckets hold at their 75 % load); this table takes 16, at the
/// same load (`queryfs-bench memory`). Copy on write, as a Dictionary: a copy
/// taken under the index lock can be read outside it.
package struct RecordTable: Sequence {
    package typealias Element = (key: ItemName, value: ItemRecord)

    private final class Storage {
        var records: [ItemRecord?]
        /// The name's hash with its top bit set, 0 for an empty slot.
        var fingerprints: [UInt32]
        var count = 0

        init(slots: Int) {
            records = Array(repeating: nil, count: slots)
            fingerprints = Array(repeating: 0, count: slots)
        }

        init(copying other: Storage) {
            records = other.records
            fingerprints = other.fingerprints
            count = other.count
        }
    }

    private var storage: Storage

    package init(minimumCapacity: Int = 0) {
        storage = Storage(slots: Self.slots(holding: minimumCapacity))
    }

    /// Slots for `count` records at a load of at most 3/4.
    private static func slots(holding count: Int) -> Int { Swift.max(8, count + count / 3 + 1) }

    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.count == 0 }

    package subscript(name: ItemName) -> ItemRecord? {
        get { slot(of: name, hash: Self.hash(name)).flatMap { storage.records[$0] } }
        set {
            if let newValue {
                precondition(newValue.name == name, "a record is kept under its own name")
                insert(newValue)
            } else {
                remove(name)
            }
        }
    }

    /// Every record, in no particular order.
    package var values: LazyMapSequence<LazyFilterSequence<[ItemRecord?]>, ItemRecord> {
        storage.records.lazy.filter { $0 != nil }.map { $0! }
    }

    package var keys: LazyMapSequence<LazyMapSequence<LazyFilterSequence<[ItemRecord?]>, ItemRecord>, ItemName> {
        values.lazy.map(\.name)
    }

    package func makeIterator() -> AnyIterator<Element> {
        var records = values.makeIterator()
        return AnyIterator { records.next().map { (key: $0.name, value: $0) } }
    }

    package mutating func reserveCapacity(_ minimumCapacity: Int) {
        if Self.slots(holding: minimumCapacity) > storage.records.count { rehash(into: Self.slots(holding: minimumCapacity)) }
    }

    /// How many slots are some record's home: about slots × (1 − e^−load)
    /// when names spread over the table (a bad scaling once sent every name
    /// to slot 0). The longest probe is no measure: at a load of 3/4 one
    /// cluster of a hundred slots or more is ordinary, whatever the hash.
    var distinctHomes: Int {
        let slots = storage.records.count
        return Set(values.map { Self.home(Self.hash($0.name), slots: slots) }).count
    }

    // MARK: - Slots

    private static func hash(_ name: ItemName) -> UInt64 { UInt64(bitPattern: Int64(name.hashValue)) }

    private static func fingerprint(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash) | 0x8000_0000 }

    /// Where a name with `hash` is looked for first: the hash's high half scaled to the slots.
    private static func home(_ hash: UInt64, slots: Int) -> Int {
        Int(truncatingIfNeeded: ((hash >> 32) &* UInt64(slots)) >> 32)
    }

    private func slot(of name: ItemName, hash: UInt64) -> Int? {
        let slots = storage.records.count
        let wanted = Self.fingerprint(hash)
        var slot = Self.home(hash, slots: slots)
        while true {
            let fingerprint = storage.fingerprints[slot]
            if fingerprint == 0 { return nil }
            if fingerprint == wanted, storage.records[slot]?.name == name { return slot }
            slot = slot + 1 == slots ? 0 : slot + 1
        }
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(copying: storage) }
    }

    private mutating func insert(_ record: ItemRecord) {
        let hash = Self.hash(record.name)
        makeUnique()
        if let slot = slot(of: record.name, hash: hash) {
            storage.records[slot] = record
            return
        }
        if (storage.count + 1) * 4 > storage.records.count * 3 { rehash(into: storage.records.count * 2) }
        place(record, hash: hash)
        storage.count += 1
    }

    /// Puts `record` in the first empty slot from its home (it is not in the table).
    private func place(_ record: ItemRecord, hash: UInt64) {
        let slots = storage.records.count
        var slot = Self.home(hash, slots: slots)
        while storage.fingerprints[slot] != 0 { slot = slot + 1 == slots ? 0 : slot + 1 }
        storage.records[slot] = record
        storage.fingerprints[slot] = Self.fingerprint(hash)
    }

    private mutating func rehash(into slots: Int) {
        let old = storage
        storage = Storage(slots: slots)
        for case let record? in old.records { place(record, hash: Self.hash(record.name)) }
        storage.count = old.count
    }

    /// Removes by shifting back the records after it that probed past its
    /// slot (no tombstones: lookups never walk over deleted slots).
    private mutating func remove(_ name: ItemName) {
        guard var hole = slot(of: name, hash: Self.hash(name)) else { return }
        makeUnique()
        let slots = storage.records.count
        var next = hole
        while true {
            next = next + 1 == slots ? 0 : next + 1
            guard let record = storage.records[next] else { break }
            let home = Self.home(Self.hash(record.name), slots: slots)
            // The record may fill the hole if the hole lies between its home and where it is (cyclically).
            let fits = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
            if fits {
                storage.records[hole] = record
                storage.fingerprints[hole] = storage.fingerprints[next]
                hole = next
            }
        }
        storage.records[hole] = nil
        storage.fingerprints[hole] = 0
        storage.count -= 1
    }
}
