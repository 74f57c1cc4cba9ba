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

    func testItemsReadBackAsWritten() throws {
        let contents = try decode(IndexFileProbe.sample(items))
        XCTAssertEqual(contents.items.count, items.count)
        let byName = contents.byName()
        for item in items {
            let read = try XCTUnwrap(byName[item.name])
            XCTAssertEqual(read.stamp, 7)
            // NaN is not equal to itself: compare the encodings.
            var a = IndexWriter(), b = IndexWriter()
            read.encode(into: &a)
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
