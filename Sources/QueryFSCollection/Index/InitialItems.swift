import Synchronization
import QueryFSEngine

/// The items a live catalog starts with, as records with the stamp each
/// was read at and a serial unique among them: those taken from an index
/// file first, then those read.
struct InitialItems {
    private(set) var records: [ItemRecord] = []
    /// Items read, until `compactRead` makes records of them.
    private var readItems: [(item: Item, stamp: UInt64)] = []
    /// How many of `records` (the first ones) came from the index.
    var fromIndex = 0
    /// The items are exactly the index snapshot's, in its order: what its
    /// stored view orders are positions into (`StoredViewOrders`).
    private(set) var inSnapshotOrder = false
    /// The serial the next record made here takes: past every serial an
    /// index file's records came with (their positions), so none is given twice.
    private var nextPosition = 0

    init(capacity: Int) {
        records.reserveCapacity(capacity)
    }

    /// Marks the numbered copies whose original is among the items (the
    /// index file's marks may be outdated: an original deleted meanwhile);
    /// returns whether any mark changed. A record whose mark changes is made
    /// anew (records are immutable), keeping its stamp and serial.
    /// Also returns every name shaped as a copy, with the original it would
    /// copy: the watcher's table of them (`NumberedCopies`) starts from it.
    mutating func markNumberedCopies(_ patterns: ConflictPatterns) -> (changed: Bool, shapes: [(copy: ItemName, original: ItemName)]) {
        precondition(readItems.isEmpty, "compactRead made records of the items read")
        let names = records.map(\.name)
        let shapes = patterns.numberedCopyShapes(names)
        let marks = patterns.numberedCopyMarks(shapes: shapes, names: names) { (records[$0].conflict, records[$0].conflictOf) }
        for mark in marks {
            var item = records[mark.index].item
            item.setConflict(mark.kind, of: mark.original)
            records[mark.index] = ItemRecord(item, stamp: records[mark.index].stamp, serial: records[mark.index].serial)
        }
        return (!marks.isEmpty, shapes.map { (names[$0.index], $0.original) })
    }

    /// Adds a record the index file had (its serial is its position there).
    private mutating func take(_ record: ItemRecord) {
        records.append(record)
    }

    /// Adds an item read: a record is made of it by `compactRead`.
    mutating func add(_ item: Item, stamp: UInt64) {
        readItems.append((item, stamp))
    }

    /// Takes from the index file what needs no reading — `trusted`: all of
    /// it, unlooked at (a background comparison removes the gone and reads
    /// the new); else the `listed` items whose stamps still match — and
    /// returns the names left to read.
    mutating func take(from contents: IndexFile.Contents, listed: [ItemName], trusted: Bool, root: BackingDirectory,
                       ignored: (ItemName) -> Bool, sources: ChangeSources) -> [ItemName]
    {
        defer { fromIndex = records.count }
        nextPosition = contents.items.count
        if trusted {
            for record in contents.items where !ignored(record.name) {
                take(record)
                sources.follow(record.name, kind: record.kind, stamp: record.stamp)
            }
            inSnapshotOrder = records.count == contents.items.count
            return []
        }
        var unread: [ItemName] = []
        for (name, record) in zip(listed, IndexReconciler.unchanged(listed, in: contents.byName(), root: root)) {
            guard let record else {
                unread.append(name)
                continue
            }
            take(record)
            sources.follow(name, kind: record.kind, stamp: record.stamp)
        }
        // Nothing changed while unmounted: every listed item is a snapshot
        // item whose stamps still hold, and there are as many (names are
        // unique), so these are all of them. In the snapshot's order, the
        // views it stored are placed rather than selected and sorted again:
        // at 100,000 items that is 1.1 s of a default start, after a stamp
        // walk of 1.5 s.
        if unread.isEmpty, records.count == contents.items.count {
            records = contents.items
            inSnapshotOrder = true
        }
        return unread
    }

    /// Reads `names` on every core, following each item read. The first
    /// scan reads without locks (there is no earlier state to keep); items
    /// a writer holds are read again once it lets go.
    mutating func read(_ names: [ItemName], root: BackingDirectory, coordinated: Scanner, sources: ChangeSources,
                       releaseWaiters: ReleaseWaiters, progress: (@Sendable (_ read: Int, _ total: Int) -> Void)?)
    {
        let plain: Scanner = {
            var scanner = coordinated
            scanner.respectsLocks = false
            return scanner
        }()
        // Progress every 256 items read (from the scan's threads; the callee keeps its own pace).
        let readCount = Atomic<Int>(0)
        let total = names.count
        let reads = coordinated.readAll(names, in: root.fd, progress: progress.map { progress in
            { @Sendable in
                let done = readCount.add(1, ordering: .relaxed).newValue
                if done & 255 == 0 { progress(done, total) }
            }
        })
        progress?(names.count, names.count)
        for (name, read) in zip(names, reads) {
            switch read.scan {
            case .item(let item):
                add(item, stamp: read.settledStamp)
                sources.follow(name, read: read)
            case .gone, .folder: break  // a folder found by the listing is listed and followed already
            case .locked:
                let unlocked = plain.read(named: name, in: root.fd)
                // Read past a writer's lock: maybe half-written, so no stamp vouches for it.
                if case .item(let item) = unlocked.scan { add(item, stamp: 0) }
                sources.follow(name)
                releaseWaiters.wait(for: name)
            }
        }
    }

    /// Makes records of the items read, in fresh memory next to each
    /// other, by a round trip through the index file's encoding: the
    /// records are decoded from it as a start from the index file makes them.
    ///
    /// Why: a scan parses on every core, and each item's values are
    /// allocated among the short-lived values of its parse (the head read,
    /// libyaml's buffers and events, the payload's dictionaries). Records
    /// made from them there would lie among holes the size of an item all
    /// over pages they keep resident. Encoding, freeing and decoding costs
    /// about what a trusted start's decode does (0.1–0.2 s at 100,000 items).
    /// `reread`: what to do should the decode fail (a bug: the bytes were
    /// just written) — the names are read again, nothing is lost.
    mutating func compactRead(reread: ([ItemName]) -> [(Item, UInt64)]) {
        guard !readItems.isEmpty else { return }
        var writer = IndexWriter(capacity: readItems.count * 256)
        for (item, stamp) in readItems { IndexedItem(item: item, stamp: stamp).encode(into: &writer) }
        let names = readItems.map(\.item.name)
        readItems = []
        MemoryTrim.returnFreedMemory()
        let first = nextPosition
        let decoded = writer.bytes.withUnsafeBufferPointer { buffer -> [ItemRecord]? in
            var reader = IndexReader(buffer)
            var out: [ItemRecord] = []
            out.reserveCapacity(names.count)
            for offset in names.indices {
                guard let fields = try? IndexedFields.decode(from: &reader) else { return nil }
                out.append(ItemRecord.make(indexed: fields, serial: ItemRecord.serial(ofPosition: first + offset)))
            }
            return reader.isAtEnd ? out : nil
        }
        if let decoded {
            records += decoded
            nextPosition += decoded.count
        } else {
            for (item, stamp) in reread(names) {
                records.append(ItemRecord(item, stamp: stamp, serial: ItemRecord.serial(ofPosition: nextPosition)))
                nextPosition += 1
            }
        }
    }
}
