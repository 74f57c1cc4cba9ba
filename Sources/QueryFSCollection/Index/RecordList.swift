import QueryFSEngine
/// A view's records in order, as chunks shared copy-on-write.
///
/// The live index hands every changed view to the filesystem as a snapshot
/// (the listing the kernel reads while the next change is applied). With one
/// flat array, the first insert after a snapshot copied all of it: at
/// 100,000 items that is 100,000 retains and, when the old snapshot goes,
/// as many releases — tens of milliseconds per change. Here a snapshot
/// shares the chunks; a change copies the chunk table and the one chunk it
/// touches (at most `chunkCapacity` records). A change costs about the chunk
/// size plus the number of chunks: 512 keeps both small up to ~250,000 records.
package struct RecordList: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    static let chunkCapacity = 512

    private final class Chunk: @unchecked Sendable {
        var records: [ItemRecord]
        init(_ records: [ItemRecord]) { self.records = records }
    }

    private var chunks: [Chunk] = []
    /// Index of each chunk's first record: `starts[i]` = records before chunk i.
    private var starts: [Int] = []
    package private(set) var count = 0

    package init() {}

    package init(_ records: some Collection<ItemRecord>) {
        var pending = Array(records)[...]
        while !pending.isEmpty {
            let piece = pending.prefix(Self.chunkCapacity / 2)
            starts.append(count)
            chunks.append(Chunk(Array(piece)))
            count += piece.count
            pending = pending.dropFirst(piece.count)
        }
    }

    /// The records at `positions` of `records`, in that order, placed
    /// straight into the chunks: a view placed at a start retains each
    /// member once, not once for an array of them and again for the chunks
    /// (600,000 members' worth of retains at 100,000 items, each a cache
    /// miss on a record elsewhere in memory). Every position must be in range.
    init<Position: BinaryInteger>(positions: [Position], of records: [ItemRecord]) {
        var start = 0
        while start < positions.count {
            let end = Swift.min(start + Self.chunkCapacity / 2, positions.count)
            starts.append(count)
            chunks.append(Chunk(positions[start..<end].map { records[Int($0)] }))
            count += end - start
            start = end
        }
    }

    package init(arrayLiteral records: ItemRecord...) { self.init(records) }

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }

    package subscript(index: Int) -> ItemRecord {
        precondition(index >= 0 && index < count, "RecordList index out of range")
        let chunk = chunkIndex(containing: index)
        return chunks[chunk].records[index - starts[chunk]]
    }

    /// Calls `body` with each record and its index in order, until it returns
    /// false: a walk of the chunks, without the per-index chunk search of the subscript.
    package func forEachRecord(_ body: (Int, ItemRecord) -> Bool) {
        var index = 0
        for chunk in chunks {
            for record in chunk.records {
                guard body(index, record) else { return }
                index += 1
            }
        }
    }

    /// The records at `range` (clamped to the list), in order: one search
    /// for the first chunk, then a walk, where a subscript per index searches
    /// every time (a sweep of a million-entry view reads two lists this way).
    package func records(in range: Range<Int>) -> [ItemRecord] {
        let range = range.clamped(to: 0..<count)
        guard !range.isEmpty else { return [] }
        var out: [ItemRecord] = []
        out.reserveCapacity(range.count)
        var chunk = chunkIndex(containing: range.lowerBound)
        var offset = range.lowerBound - starts[chunk]
        while out.count < range.count, chunk < chunks.count {
            let records = chunks[chunk].records
            let take = Swift.min(records.count - offset, range.count - out.count)
            out.append(contentsOf: records[offset..<offset + take])
            chunk += 1
            offset = 0
        }
        return out
    }

    package mutating func insert(_ record: ItemRecord, at index: Int) {
        precondition(index >= 0 && index <= count, "RecordList index out of range")
        if chunks.isEmpty {
            chunks = [Chunk([record])]
            starts = [0]
            count = 1
            return
        }
        // At the very end, append to the last chunk.
        let chunk = index == count ? chunks.count - 1 : chunkIndex(containing: index)
        makeUnique(chunk)
        chunks[chunk].records.insert(record, at: index - starts[chunk])
        count += 1
        for later in (chunk + 1)..<chunks.count { starts[later] += 1 }
        if chunks[chunk].records.count > Self.chunkCapacity { split(chunk) }
    }

    package mutating func remove(at index: Int) {
        precondition(index >= 0 && index < count, "RecordList index out of range")
        let chunk = chunkIndex(containing: index)
        makeUnique(chunk)
        chunks[chunk].records.remove(at: index - starts[chunk])
        count -= 1
        for later in (chunk + 1)..<chunks.count { starts[later] -= 1 }
        if chunks[chunk].records.isEmpty {
            chunks.remove(at: chunk)
            starts.remove(at: chunk)
        }
    }

    /// The chunk holding `index` (which must be < count): a binary search over `starts`.
    private func chunkIndex(containing index: Int) -> Int {
        var low = 0, high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }

    private mutating func makeUnique(_ chunk: Int) {
        if !isKnownUniquelyReferenced(&chunks[chunk]) {
            chunks[chunk] = Chunk(chunks[chunk].records)
        }
    }

    private mutating func split(_ chunk: Int) {
        let records = chunks[chunk].records
        let half = records.count / 2
        chunks[chunk] = Chunk(Array(records[..<half]))
        chunks.insert(Chunk(Array(records[half...])), at: chunk + 1)
        starts.insert(starts[chunk] + half, at: chunk + 1)
    }
}
