import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// A record keeps an item's fields packed (issue 17's memory): what it
/// rebuilds must be the item it was made from, for any fields.
final class ItemRecordTests: XCTestCase {
    private static let samples: [Item] = {
        let longTag = String(repeating: "t", count: 300)  // a length past one LEB128 byte
        return [
            Item(name: ItemName("A.hpwebsite"), kind: .bundle, title: "Plain", tags: ["x"], url: "https://e.com/1",
                 modified: Timestamp(seconds: 5, nanoseconds: 7), created: Timestamp(seconds: -3, nanoseconds: 999_999_999), size: 12),
            Item(name: ItemName("no-title.txt"), kind: .file),
            Item(name: ItemName("e.x"), kind: .file, title: "", tags: ["", longTag, "a\u{0}b", "é/∕"], url: ""),
            Item(name: ItemName([0x66, 0xFF, 0x2E, 0xFE]), kind: .file, title: "bad\u{1}/title  ", archived: true),
            Item(name: ItemName("p.json"), kind: .file, title: "P", payloadValues: ["a.b": .array([.integer(1), .string("s")])],
                 problems: ["payload: broken", "second"]),
            Item(name: ItemName("A.sync-conflict-20240101-010101-ABC.hpwebsite"), kind: .bundle, title: "Copy",
                 conflict: .syncCopy, conflictOf: ItemName("A.hpwebsite")),
            Item(name: ItemName("git.hpwebsite"), kind: .bundle, title: "G", conflict: .gitMarkers),
            Item(name: ItemName("t.x"), kind: .file, title: String(repeating: "長", count: 200)),
        ]
    }()

    func testARecordRebuildsItsItem() {
        for item in Self.samples {
            let record = ItemRecord(item, stamp: 42, serial: 7)
            XCTAssertEqual(record.item, item, "\(item.name)")
            XCTAssertEqual(record.tags, item.tags)
            XCTAssertEqual(record.url, item.url)
            XCTAssertEqual(record.titleSortKey, item.titleSortKey)
            XCTAssertEqual(record.modified, item.modified)
            XCTAssertEqual(record.stamp, 42)
            XCTAssertEqual(record.serial, 7)
            XCTAssertEqual(record.displayTitle, EntryNaming.displayTitle(of: item))
            XCTAssertEqual(record.displayExtension, EntryNaming.displayExtension(of: item))
            for naming in [ViewDefinition.EntryTitle.title, .clashingItem] {
                XCTAssertTrue(record.entryTitle(naming) == EntryNaming.entryTitle(of: item, naming: naming), "\(item.name) \(naming)")
            }
        }
    }

    /// A record made straight from the index file's bytes (a start's way,
    /// no `Item` between) is the record made from the item written there.
    func testARecordDecodedFromTheIndexIsTheRecordOfItsItem() throws {
        for item in Self.samples {
            var writer = IndexWriter()
            IndexedItem(item: item, stamp: 42).encode(into: &writer)
            let decoded = try decodeRecord(writer.bytes, serial: 7)
            assertSameRecord(decoded, ItemRecord(item, stamp: 42, serial: 7), "\(item.name)")
        }
    }

    /// Bytes that are not UTF-8 (never written so: a file made by hand) are
    /// repaired as a `String` of them is, in the title, a tag or the URL.
    func testTextsThatAreNotUTF8AreRepairedAsBefore() throws {
        let item = Item(name: ItemName("r.txt"), kind: .file, title: "tXtle", tags: ["taXg", "ok"], url: "https://e.com/X")
        var writer = IndexWriter()
        IndexedItem(item: item, stamp: 3).encode(into: &writer)
        let bytes = writer.bytes.map { $0 == UInt8(ascii: "X") ? 0xFF : $0 }
        let record = try decodeRecord(bytes, serial: 1)
        XCTAssertEqual(record.title, "t\u{FFFD}tle")
        XCTAssertEqual(record.tags, ["ta\u{FFFD}g", "ok"])
        XCTAssertEqual(record.url, "https://e.com/\u{FFFD}")
        let fields = try bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
            var reader = IndexReader(buffer)
            return try IndexedFields.decode(from: &reader).item
        }
        assertSameRecord(record, ItemRecord(fields, stamp: 3, serial: 1), "repaired")
    }

    private func decodeRecord(_ bytes: [UInt8], serial: UInt32) throws -> ItemRecord {
        try bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
            var reader = IndexReader(buffer)
            let record = ItemRecord.make(indexed: try IndexedFields.decode(from: &reader), serial: serial)
            guard reader.isAtEnd else { throw IndexDecodingError("bytes left") }
            return record
        }
    }

    private func assertSameRecord(_ record: ItemRecord, _ expected: ItemRecord, _ what: String) {
        XCTAssertEqual(record.item, expected.item, what)
        XCTAssertEqual(record.name, expected.name, what)
        XCTAssertEqual(record.tags, expected.tags, what)
        XCTAssertEqual(record.url, expected.url, what)
        XCTAssertEqual(record.stamp, expected.stamp, what)
        XCTAssertEqual(record.serial, expected.serial, what)
        XCTAssertEqual(record.displayTitle, expected.displayTitle, what)
        XCTAssertEqual(record.problems, expected.problems, what)
        XCTAssertEqual(record.conflictOf, expected.conflictOf, what)
        for naming in [ViewDefinition.EntryTitle.title, .clashingItem] {
            XCTAssertTrue(record.entryTitle(naming) == expected.entryTitle(naming), "\(what) \(naming)")
        }
        XCTAssertTrue(record.hasSameEntryTitle(as: expected, naming: .title), what)
    }

    /// A record is one of the daemon's largest costs per item: its object
    /// must fit malloc's 112-byte chunks (104 usable), not the next size up.
    func testARecordFitsItsMallocChunk() throws {
        let symbol = try XCTUnwrap(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"))
        let usableSize = unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
        for item in Self.samples {
            let record = ItemRecord(item, stamp: 1, serial: 1)
            XCTAssertLessThanOrEqual(usableSize(Unmanaged.passUnretained(record).toOpaque()), 104, "\(item.name)")
        }
    }

    /// The byte comparisons stale-name lookups and sweeps use agree with the names as built.
    func testEntryNamesCompareAsBuilt() {
        let records = Self.samples.map { ItemRecord($0) }
        for (index, record) in records.enumerated() {
            for width in [4, 7] {
                let name = record.entryName(index: 0, count: width == 4 ? 10 : 1_000_000)
                let rest = Array(name.dropFirst(width + 1))
                if let equal = record.entryRestEquals(rest, width: width) { XCTAssertTrue(equal, "\(record.name)") }
                for other in records where other !== record {
                    if let equal = other.entryRestEquals(rest, width: width) {
                        XCTAssertEqual(equal, other.entryName(index: 0, count: width == 4 ? 10 : 1_000_000) == name)
                    }
                    XCTAssertEqual(record.hasSameEntryTitle(as: other, naming: .title),
                                   record.entryTitle(.title) == other.entryTitle(.title), "\(index)")
                }
            }
        }
    }

    /// Never "no" for a title an item has once its change is committed, through adds and removes.
    func testTitlePresenceHasNoFalseNo() {
        let presence = EntryTitlePresence(expectedItems: 10)
        let records = (0..<20_000).map { ItemRecord(Item(name: ItemName("n\($0).x"), kind: .file, title: "T \($0 % 5_000)")) }
        for record in records.prefix(5_000) { presence.seed(record) }
        for record in records.dropFirst(5_000) { presence.update(from: nil, to: record) }
        // A change's titles count once committed (when its listings are
        // out): before, titles only it brings are mostly "no".
        let queued = (0..<1_000).map { ItemRecord(Item(name: ItemName("q\($0).x"), kind: .file, title: "Queued \($0)")) }
        for record in queued { presence.update(from: nil, to: record) }
        func has(_ record: ItemRecord) -> Bool { presence.mayHave(Array(record.entryName(index: 0, count: 1).dropFirst(5))) }
        XCTAssertLessThan(queued.filter(has).count, 100)
        presence.commit()
        XCTAssertTrue(queued.allSatisfy(has))
        // A title taken away is uncounted at once, one kept is left alone.
        for record in records.prefix(10_000) { presence.update(from: record, to: nil) }
        for record in records.suffix(10_000) { presence.update(from: record, to: record) }
        for record in records.suffix(10_000) {
            XCTAssertTrue(presence.mayHave(Array(record.entryName(index: 0, count: 1).dropFirst(5))))
        }
        for record in queued { presence.update(from: record, to: nil) }
        XCTAssertLessThan(queued.filter(has).count, 100, "a title taken away is uncounted without a commit")
        // Titles nobody has: mostly "no" (the filter is sized for 10 items, so not always).
        let absent = (0..<1_000).filter { !presence.mayHave(Array("Absent \($0).x".utf8)) }.count
        XCTAssertGreaterThan(absent, 0)
    }
}
