import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// The index file's format: what is written reads back the same, a journal
/// replays over the snapshot, and damaged bytes are refused, never trusted
/// and never a trap.
final class IndexFileTests: XCTestCase {
    private let items: [Item] = [
        Item(name: ItemName([0x61, 0xff, 0x2e, 0x62]), kind: .bundle, title: "Not UTF-8 ∕ name", archived: true,
             tags: ["a", "b/c", ""], url: "https://example.com/?q=1", modified: Timestamp(seconds: -5, nanoseconds: 999_999_999),
             created: Timestamp(seconds: .max), size: .max,
             payloadValues: ["n": .array([.real(.nan), .date(-1e300), .data([0, 1]), .dictionary(["k": .null]), .bool(true),
                                          .integer(.min), .string("")])],
             problems: ["payload.plist: malformed"]),
        Item(name: ItemName("plain.txt"), kind: .file, title: "plain", modified: Timestamp(seconds: 3)),
        Item(name: ItemName("b.hpwebsite"), kind: .bundle, title: "B", tags: ["t"]),
    ]

    private func decode(_ bytes: [UInt8]) throws -> IndexFile.Contents {
        try bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in try IndexFile.decode(buffer) }
    }

    /// What is in the way of an index is said as what it is (a dangling
    /// link was called "not an index file").
    func testWhatAnIndexWillNotReplaceIsSaidAsWhatItIs() throws {
        let folder = TemporaryBacking()
        let path = folder.path + "/index"
        XCTAssertNil(IndexFile.refusalToReplace(path), "absent")
        XCTAssertEqual(symlink(folder.path + "/nowhere", path), 0)
        XCTAssertEqual(IndexFile.refusalToReplace(path), "is a symbolic link")
        XCTAssertEqual(unlink(path), 0)
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        XCTAssertEqual(IndexFile.refusalToReplace(path), "is not a regular file")
        XCTAssertEqual(unlink(path), 0)
        folder.write(path, "notes")
        XCTAssertEqual(IndexFile.refusalToReplace(path), "is not an index file (nor empty)")
        folder.write(path, "")
        XCTAssertNil(IndexFile.refusalToReplace(path), "empty")
    }

    /// A HOME that does not exist is not where the index goes: it would be made (as root, /nonexistent was).
    func testAHomeThatDoesNotExistIsNotMade() {
        let saved: [(String, String?)] = ["HOME", "XDG_CACHE_HOME", "CACHE_DIRECTORY"].map { name in (name, getenv(name).map { String(cString: $0) }) }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        unsetenv("XDG_CACHE_HOME")
        unsetenv("CACHE_DIRECTORY")
        let missing = "/tmp/queryfs-no-such-home-\(getpid())"
        setenv("HOME", missing, 1)
        let location = IndexLocation.standard(for: "/tmp/some-backing")
        XCTAssertFalse(location?.path.hasPrefix(missing) ?? false, "\(String(describing: location?.path))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    }

    func testItemsReadBackAsWritten() throws {
        let contents = try decode(IndexFileProbe.sample(items))
        XCTAssertEqual(contents.items.count, items.count)
        let byName = contents.byName()
        for item in items {
            let read = try XCTUnwrap(byName[item.name])
            XCTAssertEqual(read.stamp, 7)
            // NaN is not equal to itself: compare the encodings.
            var a = IndexWriter(), b = IndexWriter()
            IndexedItem(item: read.item, stamp: read.stamp).encode(into: &a)
            IndexedItem(item: item, stamp: 7).encode(into: &b)
            XCTAssertEqual(a.bytes, b.bytes, "\(item.name)")
            XCTAssertEqual(read.item.title, item.title)
            XCTAssertEqual(read.item.titleSortKey, item.titleSortKey)
        }
        XCTAssertFalse(contents.tornJournal)
    }

    func testTheJournalReplaysOverTheSnapshot() throws {
        var changed = items[2]
        changed.setTitle("Changed")
        let fresh = Item(name: ItemName("new.hpwebsite"), kind: .bundle, title: "New")
        let contents = try decode(IndexFileProbe.sample(items, journal: [changed, fresh], removing: [items[1].name]))
        let byName = contents.byName()
        XCTAssertEqual(Set(byName.keys), [items[0].name, items[2].name, fresh.name])
        XCTAssertEqual(byName[items[2].name]?.item.title, "Changed")
        XCTAssertEqual(byName[fresh.name]?.stamp, 9)
    }

    func testATornJournalKeepsWhatCameBefore() throws {
        let fresh = Item(name: ItemName("new.hpwebsite"), kind: .bundle, title: "New")
        let whole = IndexFileProbe.sample(items, journal: [fresh])
        for cut in 1..<20 {
            let contents = try decode(Array(whole.dropLast(cut)))
            XCTAssertTrue(contents.tornJournal)
            XCTAssertEqual(contents.items.count, items.count, "cut \(cut)")
        }
    }

    /// The views' orders ride with the snapshot and read back as written;
    /// a journal record after them means they no longer hold.
    func testViewOrdersReadBackUntilAJournalFollows() throws {
        var orders = StoredViewOrders()
        orders.fixed[try XCTUnwrap(StoredViewOrders.key(of: .byName))] = [2, 0, 1]
        orders.fixed[try XCTUnwrap(StoredViewOrders.key(of: .archived))] = [0]
        orders.tags = ["t": [2], "a": [0]]
        XCTAssertEqual(try decode(IndexFileProbe.sample(items, viewOrders: orders)).viewOrders, orders)
        XCTAssertEqual(try decode(IndexFileProbe.sample(items)).viewOrders, StoredViewOrders())
        let journaled = try decode(IndexFileProbe.sample(items, removing: [items[1].name], viewOrders: orders))
        XCTAssertEqual(journaled.viewOrders, StoredViewOrders())
        // A view whose members depend on the time is never stored.
        var aging = ViewDefinition.byName
        aging.shortestAge = 86_400
        XCTAssertNil(StoredViewOrders.key(of: aging))
        XCTAssertNotEqual(StoredViewOrders.key(of: .byName), StoredViewOrders.key(of: .byModified))
    }

    /// One stored view is read alone, through the item offsets, and holds
    /// what the whole read places at its positions; with a journal after the
    /// snapshot, or for a view not stored, there is nothing to read alone.
    func testAStoredViewIsReadAloneThroughTheOffsets() throws {
        var orders = StoredViewOrders()
        let byName = try XCTUnwrap(StoredViewOrders.key(of: .byName))
        orders.fixed[byName] = [2, 0, 1]
        orders.tags = ["t": [2], "b/c": [0]]
        let bytes = IndexFileProbe.sample(items, viewOrders: orders)
        func alone(_ key: StoredViewOrders.Key, _ bytes: [UInt8]) throws -> [ItemName]? {
            try bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in try IndexFile.decodeView(key, in: buffer).1 }?.map(\.name)
        }
        XCTAssertEqual(try alone(.fixed(byName), bytes), [items[2].name, items[0].name, items[1].name])
        XCTAssertEqual(try alone(.tag("t"), bytes), [items[2].name])
        XCTAssertEqual(try alone(.tag("b/c"), bytes), [items[0].name])
        XCTAssertNil(try alone(.tag("absent"), bytes))
        XCTAssertNil(try alone(.fixed("absent"), bytes))
        let journaled = IndexFileProbe.sample(items, journal: [items[1]], viewOrders: orders)
        XCTAssertNil(try alone(.tag("t"), journaled), "a journal means the stored orders may no longer hold")
        XCTAssertNotNil(IndexFileProbe.check(bytes))
        // Every field of an item read alone is as written (NaN compares by its encoding).
        let read = try XCTUnwrap(bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in try IndexFile.decodeView(.tag("b/c"), in: buffer).1 })
        var a = IndexWriter(), b = IndexWriter()
        IndexedItem(item: read[0], stamp: 7).encode(into: &a)
        IndexedItem(item: items[0], stamp: 7).encode(into: &b)
        XCTAssertEqual(a.bytes, b.bytes)
    }

    /// Offsets that do not lead to the items are refused, even past the
    /// checksums (a file made to pass them): the whole read checks each one.
    func testOffsetsNotLeadingToTheItemsAreRefused() throws {
        var orders = StoredViewOrders()
        orders.tags = ["t": [2]]
        let bytes = IndexFileProbe.sample(items, viewOrders: orders)
        let layout = try bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
            let layout = try IndexFile.Layout(buffer, checkingSums: true)
            return (bodyStart: layout.bodyEnd - layout.body.count, offsets: layout.offsetsOffset, orders: layout.ordersOffset)
        }
        for position in 0..<items.count {
            for bad: UInt64 in [1, UInt64(layout.orders), .max] {
                var damaged = bytes
                for shift in 0..<8 {
                    damaged[layout.bodyStart + layout.offsets + position * 8 + shift] = UInt8(truncatingIfNeeded: bad >> UInt64(shift * 8))
                }
                XCTAssertThrowsError(try damaged.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
                    try IndexFile.decode(buffer, checkingSums: false)
                }, "item \(position) at \(bad)")
                IndexFileProbe.check(damaged)
            }
        }
    }

    /// An empty collection's index reads back empty.
    func testAnIndexOfNoItemsReadsBackEmpty() throws {
        XCTAssertEqual(try decode(IndexFileProbe.sample([])).items.count, 0)
    }

    /// More items than one decoding run: read back in order across the runs;
    /// an item damaged in any run (or an offset off by one at a run's
    /// start) is refused, and the items the other runs had made are freed.
    func testItemsAcrossDecodingRunsReadBackOrAreRefused() throws {
        let count = IndexFile.Layout.decodingRun * 2 + 10
        let many = (0..<count).map { Item(name: ItemName("item \($0).md"), kind: .file, title: "Title \($0)", tags: ["t\($0 % 7)"]) }
        let bytes = IndexFileProbe.sample(many)
        XCTAssertEqual(try decode(bytes).items.map(\.item.name), many.map(\.name))
        let layout = try bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
            let layout = try IndexFile.Layout(buffer, checkingSums: true)
            return (bodyStart: layout.bodyEnd - layout.body.count, offsets: layout.offsetsOffset,
                    secondRun: try layout.offset(ofItem: IndexFile.Layout.decodingRun), lastRun: try layout.offset(ofItem: count - 5))
        }
        // A name's length byte made huge, in the second run and in the last.
        for offset in [layout.secondRun, layout.lastRun] {
            var damaged = bytes
            damaged[layout.bodyStart + offset] = 0xff
            XCTAssertThrowsError(try damaged.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
                try IndexFile.decode(buffer, checkingSums: false)
            })
        }
        // The second run's first offset moved by one byte.
        var shifted = bytes
        shifted[layout.bodyStart + layout.offsets + IndexFile.Layout.decodingRun * 8] &+= 1
        XCTAssertThrowsError(try shifted.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
            try IndexFile.decode(buffer, checkingSums: false)
        })
    }

    /// Orders that name an item twice or one past the items are refused,
    /// checksums or not: a view must never hold a record twice.
    func testViewOrdersNamingAnItemTwiceOrPastTheItemsAreRefused() {
        for bad: [UInt32] in [[0, 0], [3], [1, 2, 1], [.max]] {
            var orders = StoredViewOrders()
            orders.fixed["v"] = bad
            XCTAssertThrowsError(try decode(IndexFileProbe.sample(items, viewOrders: orders)), "\(bad)")
            orders = StoredViewOrders()
            orders.tags = ["t": bad]
            XCTAssertThrowsError(try decode(IndexFileProbe.sample(items, viewOrders: orders)), "\(bad)")
        }
        // A tag folder no tag could name would become a folder of the mount.
        for folder in ["", "..", "a//b", "/a", "a/../b"] {
            var orders = StoredViewOrders()
            orders.tags = [folder: [0]]
            XCTAssertThrowsError(try decode(IndexFileProbe.sample(items, viewOrders: orders)), folder)
        }
        // The same item in two views is what views are.
        var orders = StoredViewOrders()
        orders.fixed = ["v": [0, 1], "w": [1, 0]]
        orders.tags = ["t": [1]]
        XCTAssertNoThrow(try decode(IndexFileProbe.sample(items, viewOrders: orders)))
    }

    /// An index of another format is outdated, not corrupt.
    func testAnotherFormatIsOutdated() throws {
        var bytes = IndexFileProbe.sample(items)
        // The header's first byte is the format version (a one-byte LEB128 here); its checksum follows the length.
        let headerStart = IndexFile.magic.count + 16
        XCTAssertEqual(UInt64(bytes[headerStart]), IndexFile.formatVersion)
        bytes[headerStart] = 3
        let headerLength = Int(bytes[IndexFile.magic.count])
        let sum = IndexChecksum.of(Array(bytes[headerStart..<headerStart + headerLength]))
        for shift in 0..<8 { bytes[IndexFile.magic.count + 8 + shift] = UInt8(truncatingIfNeeded: sum >> UInt64(shift * 8)) }
        XCTAssertThrowsError(try decode(bytes)) { error in
            XCTAssertEqual((error as? IndexDecodingError)?.isOtherFormat, true, "\(error)")
        }
    }

    /// Every single byte flipped, and every truncation: refused or read,
    /// never a trap; with checksums, a flip in the snapshot is always refused.
    func testDamageIsRefused() {
        let bytes = IndexFileProbe.sample(items)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x41
            XCTAssertThrowsError(try decode(damaged), "byte \(index)")
            IndexFileProbe.check(damaged)
            IndexFileProbe.check(Array(bytes.prefix(index)))
        }
    }

    /// An index is for one directory, one queryfs version and one set of field sources.
    func testIdentityDecidesWhetherAnIndexServes() {
        var sources = FieldSources()
        sources.extraKeyPaths = ["a", "b"]
        let written = IndexFile.Identity(backingPath: "/x", device: 1, inode: 2, sources: sources, payloadLimit: 10, version: "1")
        var wanted = written
        wanted.sources.extraKeyPaths = ["a"]
        XCTAssertNil(wanted.accepts(written), "an index may keep more payload keys than asked for")
        wanted.sources.extraKeyPaths = ["c"]
        XCTAssertEqual(wanted.accepts(written), .outdated("it keeps no c"))
        wanted = written
        wanted.inode = 3
        guard case .foreign = wanted.accepts(written) else { return XCTFail("another inode is another directory") }
        wanted = written
        wanted.version = "2"
        guard case .outdated = wanted.accepts(written) else { return XCTFail("another version") }
        wanted = written
        wanted.sources.title = ["name"]
        guard case .outdated = wanted.accepts(written) else { return XCTFail("other field sources") }
    }

    /// Writes the fuzzer's seeds when asked (QUERYFS_WRITE_INDEX_SEEDS=DIR).
    func testWriteFuzzSeeds() throws {
        guard let folder = ProcessInfo.processInfo.environment["QUERYFS_WRITE_INDEX_SEEDS"] else { return }
        let fresh = Item(name: ItemName("new.hpwebsite"), kind: .bundle, title: "New")
        try Data(IndexFileProbe.sample(items)).write(to: URL(fileURLWithPath: folder + "/snapshot.index"))
        try Data(IndexFileProbe.sample(items, journal: [fresh], removing: [items[1].name]))
            .write(to: URL(fileURLWithPath: folder + "/journal.index"))
        var orders = StoredViewOrders()
        orders.fixed[try XCTUnwrap(StoredViewOrders.key(of: .byName))] = [2, 0, 1]
        orders.tags = ["t": [2]]
        try Data(IndexFileProbe.sample(items, viewOrders: orders)).write(to: URL(fileURLWithPath: folder + "/orders.index"))
    }
}
