import Synchronization
import QueryFSEngine

/// Which entry titles (`<title>.<ext>`, an entry's name after its rank) some
/// item has: a counting Bloom filter over every item, kept by the live index
/// as items change.
///
/// A lookup of a name no view has (a script polling for an entry yet to
/// come, or one just removed) used to walk every entry of the folder for an
/// item with that title a few ranks away (`ViewListing.search`): 100–400 ms
/// of a change's latency at 1,000,000 entries. A title no item has is
/// answered at once here; "maybe" still walks. Never "no" for a title an
/// item has: 8-bit counters, three per title, and a counter that reached
/// 255 stays there. 8 counters per item at the start: 8 MB at 1,000,000
/// items, false "maybe" about 3 % of the time. A list that grows far past
/// its size at the start gets more false "maybe"s (walks, never a wrong
/// answer) until the next mount sizes the filter anew.
///
/// Between a change applied to the index and its listings published, the
/// answer is the one that spares a walk: a title a change brings is counted
/// only once its update went to the subscribers (`commit`; the filesystem
/// swaps in its new listings there), and a title a change takes away is
/// uncounted at once. Counted as the index applied the change, a new item's
/// title was "maybe" while lookups still searched the listings before it,
/// and a script polling for the entry walked a whole million-entry view:
/// 4–8 ms of every third create's latency at 1,000,000 items (the
/// walk is cut short once the listing is swapped; a complete one is
/// 120 ms there, cold). Uncounted only at the commit, a deleted item's
/// title sent polls for its name through a complete walk (delete p50
/// 128 ms). In that window a stale name (another rank) of a title that is
/// just leaving is not found, as it would not be a moment later.
package final class EntryTitlePresence: Sendable {
    private let counters: Mutex<[UInt8]>
    private let mask: UInt64
    /// Titles added since the last `commit`, by hash.
    private let pending = Mutex<[UInt64]>([])

    init(expectedItems: Int) {
        var size = 1 << 16
        while size < expectedItems * 8, size < 1 << 30 { size <<= 1 }
        counters = Mutex([UInt8](repeating: 0, count: size))
        mask = UInt64(size - 1)
    }

    /// Counts `record`'s title at once: the items an index starts with.
    func seed(_ record: ItemRecord) { change(Self.hash(record), by: 1) }

    /// Counts every one of `records`' titles at once, under one lock.
    func seed(_ records: [ItemRecord]) {
        counters.withLock { counters in
            for record in records {
                let (a, b, c) = slots(Self.hash(record))
                for slot in [a, b, c] where counters[slot] < 255 { counters[slot] += 1 }
            }
        }
    }

    /// An item changed from `old` to `new` (nil: it came, or went). A title
    /// it keeps is left alone; one it takes away is uncounted at once; one
    /// it brings is counted at the next `commit`.
    func update(from old: ItemRecord?, to new: ItemRecord?) {
        let before = old.map(Self.hash), after = new.map(Self.hash)
        guard before != after else { return }
        if let before { change(before, by: -1) }
        if let after { pending.withLock { $0.append(after) } }
    }

    /// Counts every title added since the last commit: call once the
    /// listings of the changes that added them are published.
    package func commit() {
        let added = pending.withLock { queued in
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
        for hash in added { change(hash, by: 1) }
    }

    /// False only if no item has the entry title `rest`.
    package func mayHave(_ rest: [UInt8]) -> Bool {
        var hash = Self.fnvOffset
        rest.withUnsafeBufferPointer { Self.fold($0, into: &hash) }
        let (a, b, c) = slots(hash)
        return counters.withLock { $0[a] > 0 && $0[b] > 0 && $0[c] > 0 }
    }

    /// Whether more than one item may have this title (every counter at 2 or
    /// more): no means one item at most, and a stale name of it is no one else's.
    package func mayBeShared(_ rest: [UInt8]) -> Bool {
        var hash = Self.fnvOffset
        rest.withUnsafeBufferPointer { Self.fold($0, into: &hash) }
        let (a, b, c) = slots(hash)
        return counters.withLock { $0[a] > 1 && $0[b] > 1 && $0[c] > 1 }
    }

    private func change(_ hash: UInt64, by step: Int) {
        let (a, b, c) = slots(hash)
        counters.withLock { counters in
            for slot in [a, b, c] where counters[slot] < 255 {
                counters[slot] = step > 0 ? counters[slot] + 1 : counters[slot] &- (counters[slot] > 0 ? 1 : 0)
            }
        }
    }

    /// Three slots from one 64-bit hash (double hashing).
    private func slots(_ hash: UInt64) -> (Int, Int, Int) {
        let second = (hash >> 32) | 1
        return (Int(hash & mask), Int((hash &+ second) & mask), Int((hash &+ 2 &* second) & mask))
    }

    private static func hash(_ record: ItemRecord) -> UInt64 {
        var hash = fnvOffset
        record.forEachEntryRestPiece { fold($0, into: &hash) }
        return hash
    }

    // FNV-1a: the same bytes hash alike however they are split into pieces.
    private static let fnvOffset: UInt64 = 0xcbf2_9ce4_8422_2325
    private static func fold(_ bytes: UnsafeBufferPointer<UInt8>, into hash: inout UInt64) {
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
    }
}
