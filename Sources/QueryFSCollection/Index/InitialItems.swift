import Synchronization
import QueryFSEngine

/// The items a live catalog starts with, and the stamp each was read at:
/// those taken from an index file first, then those read.
struct InitialItems {
    private(set) var items: [Item] = []
    private(set) var stamps: [UInt64] = []
    /// How many of `items` (the first ones) came from the index.
    var fromIndex = 0
    /// The items are exactly the index snapshot's, in its order: what its
    /// stored view orders are positions into (`StoredViewOrders`).
    private(set) var inSnapshotOrder = false

    init(capacity: Int) {
        items.reserveCapacity(capacity)
        stamps.reserveCapacity(capacity)
    }

    /// Marks the numbered copies whose original is among the items (the
    /// index file's marks may be outdated: an original deleted meanwhile);
    /// returns whether any mark changed.
    /// Also returns every name shaped as a copy, with the original it would
    /// copy: the watcher's table of them (`NumberedCopies`) starts from it.
    mutating func markNumberedCopies(_ patterns: ConflictPatterns) -> (changed: Bool, shapes: [(copy: ItemName, original: ItemName)]) {
        let shapes = patterns.numberedCopyShapes(items)
        let changed = patterns.markNumberedCopies(&items, shapes: shapes)
        return (changed, shapes.map { (items[$0.index].name, $0.original) })
    }

    mutating func add(_ item: Item, stamp: UInt64) {
        items.append(item)
        stamps.append(stamp)
    }

    /// Takes from the index file what needs no reading — `trusted`: all of
    /// it, unlooked at (a background comparison removes the gone and reads
    /// the new); else the `listed` items whose stamps still match — and
    /// returns the names left to read.
    mutating func take(from contents: IndexFile.Contents, listed: [ItemName], trusted: Bool, root: BackingDirectory,
                       ignored: (ItemName) -> Bool, sources: ChangeSources) -> [ItemName]
    {
        defer { fromIndex = items.count }
        if trusted {
            for entry in contents.items where !ignored(entry.item.name) {
                add(entry.item, stamp: entry.stamp)
                sources.follow(entry.item.name, kind: entry.item.kind, stamp: entry.stamp)
            }
            inSnapshotOrder = items.count == contents.items.count
            return []
        }
        var unread: [ItemName] = []
        for (name, entry) in zip(listed, IndexReconciler.unchanged(listed, in: contents.byName(), root: root)) {
            guard let entry else {
                unread.append(name)
                continue
            }
            add(entry.item, stamp: entry.stamp)
            sources.follow(name, kind: entry.item.kind, stamp: entry.stamp)
        }
        // Nothing changed while unmounted: every listed item is a snapshot
        // item whose stamps still hold, and there are as many (names are
        // unique), so these are all of them. In the snapshot's order, the
        // views it stored are placed rather than selected and sorted again:
        // at 100,000 items that is 1.1 s of a default start, after a stamp
        // walk of 1.5 s.
        if unread.isEmpty, items.count == contents.items.count {
            items = contents.items.map(\.item)
            stamps = contents.items.map(\.stamp)
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

    /// Moves the items read (`fromIndex...`) to fresh memory, next to each
    /// other, by a round trip through the index file's encoding.
    ///
    /// Why: a scan parses on every core, and each item's values are
    /// allocated among the short-lived values of its parse (the head read,
    /// libyaml's buffers and events, the payload's dictionaries). The items
    /// then live on as the views' records are made from them and die after,
    /// leaving holes the size of an item all over pages that records keep
    /// resident. Encoding, freeing and decoding them costs about what a
    /// trusted start's decode does (0.1–0.2 s at 100,000 items) and packs
    /// them as a start from the index file does.
    /// `reread`: what to do should the decode fail (a bug: the bytes were
    /// just written) — the names are read again, nothing is lost.
    mutating func compactRead(reread: ([ItemName]) -> [(Item, UInt64)]) {
        guard items.count > fromIndex else { return }
        var writer = IndexWriter(capacity: (items.count - fromIndex) * 256)
        for index in fromIndex..<items.count { IndexedItem(item: items[index], stamp: stamps[index]).encode(into: &writer) }
        let names = items[fromIndex...].map(\.name)
        let count = items.count - fromIndex
        items.removeSubrange(fromIndex...)
        stamps.removeSubrange(fromIndex...)
        MemoryTrim.returnFreedMemory()
        let decoded = writer.bytes.withUnsafeBufferPointer { buffer -> [IndexedItem]? in
            var reader = IndexReader(buffer)
            var out: [IndexedItem] = []
            out.reserveCapacity(count)
            for _ in 0..<count {
                guard let item = try? IndexedItem.decode(from: &reader) else { return nil }
                out.append(item)
            }
            return reader.isAtEnd ? out : nil
        }
        if let decoded {
            for entry in decoded { add(entry.item, stamp: entry.stamp) }
        } else {
            for (item, stamp) in reread(names) { add(item, stamp: stamp) }
        }
    }
}
