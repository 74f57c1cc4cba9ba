import XCTest
import QueryFSTestSupport
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// SPEC §2 built-in views (filters and orders, ties by name bytes, empty
/// views) and §3 entries (ranks, targets).
final class ViewTests: XCTestCase {
    private let items = [
        makeItem("c.hpwebsite", title: "Gamma", archived: false, modified: 300, created: 10),
        makeItem("a.hpwebsite", title: "alpha", archived: true, modified: 100, created: 30),
        makeItem("b.hpwebsite", title: "Beta 10", archived: false, modified: 200, created: 20),
        makeItem("d.txt", title: nil, archived: false, modified: 400, created: 5, kind: .file),
        makeItem("e.hpwebsite", title: "Beta 9", archived: true, modified: 50, created: 40),
    ]

    func testBuiltInViewsExistWithTheirPaths() {
        XCTAssertEqual(ViewDefinition.builtIn.map(\.pathString), ["by-name", "by-modified", "by-created", "unarchived", "archived", "conflicts"])
        let viewSet = ViewSet()
        for path in ["by-name", "by-modified", "by-created", "unarchived", "archived", "by-name/", "/archived"] {
            XCTAssertNotNil(viewSet.view(at: path, over: items), path)
        }
        for path in ["", "tag", "by-title", "By-Name", "bundles", "tag/nothing", "by-name/extra"] {
            XCTAssertNil(viewSet.view(at: path, over: items), path)
        }
    }

    func testByNameIsTitleInNaturalOrder() {
        XCTAssertEqual(entryNames(.byName, items),
                       ["0001 alpha.hpwebsite", "0002 Beta 9.hpwebsite", "0003 Beta 10.hpwebsite", "0004 d.txt", "0005 Gamma.hpwebsite"])
    }

    func testByModifiedIsNewestFirst() {
        XCTAssertEqual(itemNames(.byModified, items), ["d.txt", "c.hpwebsite", "b.hpwebsite", "a.hpwebsite", "e.hpwebsite"])
    }

    func testByCreatedIsNewestFirst() {
        XCTAssertEqual(itemNames(.byCreated, items), ["e.hpwebsite", "a.hpwebsite", "b.hpwebsite", "c.hpwebsite", "d.txt"])
    }

    func testUnarchivedAndArchivedFilterAndOrderByModified() {
        XCTAssertEqual(itemNames(.unarchived, items), ["d.txt", "c.hpwebsite", "b.hpwebsite"])
        XCTAssertEqual(itemNames(.archived, items), ["a.hpwebsite", "e.hpwebsite"])
        XCTAssertEqual(entryNames(.archived, items), ["0001 alpha.hpwebsite", "0002 Beta 9.hpwebsite"])
    }

    func testNanosecondsCountInTimeOrders() {
        let items = [
            Item(name: ItemName("a"), kind: .file, modified: Timestamp(seconds: 5, nanoseconds: 1)),
            Item(name: ItemName("b"), kind: .file, modified: Timestamp(seconds: 5, nanoseconds: 2)),
            Item(name: ItemName("c"), kind: .file, modified: Timestamp(seconds: 4, nanoseconds: 999_999_999)),
        ]
        XCTAssertEqual(itemNames(.byModified, items), ["b", "a", "c"])
    }

    // MARK: Ties

    func testTiesInEveryOrderAreBrokenByNameBytesAscending() {
        // Names whose byte order differs from case-insensitive and natural order.
        let names = ["b", "B", "a10", "a9", "_", "é", "Z"]
        let expected = ["B", "Z", "_", "a10", "a9", "b", "é"]
        let tied = names.map { makeItem($0, title: "Same", archived: true, tags: ["t"], modified: 7, created: 7) }
        for view in ViewDefinition.builtIn + [ViewDefinition.tag(folder: "t")] where !["unarchived", "conflicts"].contains(view.pathString) {
            XCTAssertEqual(itemNames(view, tied), expected, view.pathString)
            XCTAssertEqual(itemNames(view, tied.reversed()), expected, view.pathString)
        }
        // Descending orders still break ties ascending.
        let mixed = [makeItem("y", modified: 9), makeItem("x", modified: 9), makeItem("z", modified: 10), makeItem("w", modified: 8)]
        XCTAssertEqual(itemNames(.byModified, mixed), ["z", "x", "y", "w"])
    }

    func testTiesWithNamesThatAreNotUTF8() {
        let items = [[0xFF], [0xC3, 0xA9], [0x61], [0xFE, 0x01]].map {
            Item(name: ItemName($0 as [UInt8]), kind: .file, title: "t", modified: Timestamp(seconds: 1))
        }
        XCTAssertEqual(ViewDefinition.byModified.select(items).map { items[$0].name.bytes }, [[0x61], [0xC3, 0xA9], [0xFE, 0x01], [0xFF]])
        XCTAssertEqual(ViewDefinition.byName.select(items).map { items[$0].name.bytes }, [[0x61], [0xC3, 0xA9], [0xFE, 0x01], [0xFF]])
    }

    func testMultiKeyOrdersAlsoBreakTiesByName() {
        let order = Ordering([.init(.archived, ascending: true), .init(.size, ascending: false)])
        let view = ViewDefinition(path: ["custom"], filter: .all, order: order)
        let items = [
            Item(name: ItemName("d"), kind: .file, archived: true, size: 1),
            Item(name: ItemName("c"), kind: .file, archived: false, size: 5),
            Item(name: ItemName("b"), kind: .file, archived: false, size: 5),
            Item(name: ItemName("a"), kind: .file, archived: false, size: 1),
        ]
        XCTAssertEqual(itemNames(view, items), ["b", "c", "a", "d"])
    }

    /// The flat-column sort of several keys (ranks per key) orders exactly
    /// as comparing items does, over random items full of ties.
    func testEveryOrderSortsAsTheItemComparatorDoes() {
        var generator = seededGenerator()
        let titles = ["Beta 9", "beta 10", "Alpha", "alpha", "Gamma 2", "gamma 02", ""]
        let items = (0..<400).map { number in
            Item(name: ItemName("n\(Int.random(in: 0..<1000, using: &generator))-\(number)"), kind: .bundle,
                 title: titles.randomElement(using: &generator), archived: Bool.random(using: &generator),
                 modified: Timestamp(seconds: Int64.random(in: 0..<5, using: &generator)),
                 created: Timestamp(seconds: Int64.random(in: 0..<3, using: &generator)),
                 size: UInt64.random(in: 0..<4, using: &generator))
        }
        let fields: [Field] = [.modified, .created, .size, .title, .name, .archived]
        let columns = SortColumns(items: items)
        for _ in 0..<60 {
            let keys = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                Ordering.Key(fields.randomElement(using: &generator)!, ascending: Bool.random(using: &generator))
            }
            let order = Ordering(keys)
            let compare = order.comparator()
            let expected = items.indices.sorted { compare(items[$0], items[$1]) < 0 }
            let view = ViewDefinition(path: ["v"], filter: .all, order: order)
            XCTAssertEqual(view.select(items), expected, "\(keys)")
            XCTAssertEqual(view.select(items, columns: columns), expected, "shared columns: \(keys)")
        }
    }

    // MARK: Empty views

    func testEmptyViewsStillExist() throws {
        let catalog = Catalog(items: [])
        for path in ["by-name", "by-modified", "by-created", "unarchived", "archived", "conflicts"] {
            let view = try XCTUnwrap(catalog.view(at: path), path)
            XCTAssertEqual(catalog.entries(of: view), [], path)
        }
        XCTAssertEqual(catalog.views.map(\.pathString), ["by-name", "by-modified", "by-created", "unarchived", "archived", "conflicts"])
        // Nothing archived: the archived view is there, empty.
        let unarchivedOnly = Catalog(items: [makeItem("a", title: "A")])
        XCTAssertEqual(unarchivedOnly.view(at: "archived").map { unarchivedOnly.entries(of: $0).count }, 0)
        XCTAssertEqual(unarchivedOnly.view(at: "unarchived").map { unarchivedOnly.entries(of: $0).count }, 1)
    }

    // MARK: Entries

    func testRanksAreOneBasedPositionsInTheView() {
        let entries = ViewDefinition.byModified.entries(of: items)
        XCTAssertEqual(entries.map { String($0.nameString.prefix(4)) }, ["0001", "0002", "0003", "0004", "0005"])
        XCTAssertEqual(entries.map(\.itemIndex), [3, 0, 2, 1, 4])
        XCTAssertEqual(entries.map(\.modified.seconds), [400, 300, 200, 100, 50])
        // Filtered views number their own entries from 1.
        XCTAssertEqual(ViewDefinition.archived.entries(of: items).map { String($0.nameString.prefix(4)) }, ["0001", "0002"])
    }

    func testTargetsFromTopLevelViews() {
        for view in ViewDefinition.builtIn {
            for entry in view.entries(of: items) {
                XCTAssertEqual(entry.targetString, "../bundles/" + items[entry.itemIndex].name.description, view.pathString)
            }
        }
    }

    func testTargetsFromTagViews() {
        let tagged = [makeItem("x.hpwebsite", title: "X", tags: ["t"])]
        XCTAssertEqual(ViewDefinition.tag(folder: "t").entries(of: tagged).map(\.targetString), ["../../bundles/x.hpwebsite"])
    }

    func testAbsoluteTargets() {
        let name = ItemName("x y.hpwebsite")
        XCTAssertEqual(LinkStyle.absolute(mountPoint: "/mnt/q").target(for: name, depth: 1), Array("/mnt/q/bundles/x y.hpwebsite".utf8))
        XCTAssertEqual(LinkStyle.absolute(mountPoint: "/mnt/q/").target(for: name, depth: 1), Array("/mnt/q/bundles/x y.hpwebsite".utf8))
        XCTAssertEqual(LinkStyle.absolute(mountPoint: "/mnt/q").target(for: name, depth: 2), Array("/mnt/q/bundles/x y.hpwebsite".utf8))
        let tagged = [makeItem("x.hpwebsite", title: "X", tags: ["t"])]
        XCTAssertEqual(ViewDefinition.tag(folder: "t").entries(of: tagged, linkStyle: .absolute(mountPoint: "/m")).map(\.targetString),
                       ["/m/bundles/x.hpwebsite"])
        XCTAssertEqual(ViewDefinition.byName.entries(of: tagged, linkStyle: .absolute(mountPoint: "/m")).map(\.targetString),
                       ["/m/bundles/x.hpwebsite"])
    }

    func testTargetsKeepTheExactNameBytes() {
        let bytes: [UInt8] = [0x66, 0xFF, 0x2E, 0x0A, 0x2E, 0x62]  // "f\xFF.\n.b": not UTF-8, a newline, two dots
        let name = ItemName(bytes)
        XCTAssertEqual(LinkStyle.relative.target(for: name, depth: 1), Array("../bundles/".utf8) + bytes)
        XCTAssertEqual(LinkStyle.relative.target(for: name, depth: 2), Array("../../bundles/".utf8) + bytes)
        XCTAssertEqual(LinkStyle.absolute(mountPoint: "/mnt").target(for: name, depth: 2), Array("/mnt/bundles/".utf8) + bytes)
        // The entry name is sanitized; the target is not.
        let item = Item(name: name, kind: .file, modified: Timestamp(seconds: 1))
        let entry = ViewDefinition.byName.entries(of: [item])[0]
        XCTAssertEqual(entry.nameString, "0001 f\u{FFFD}..b")   // "\n" → space, then trimmed
        XCTAssertEqual(entry.target, Array("../bundles/".utf8) + bytes)
    }

    func testEntryMtimeIsTheItemsModified() {
        let entries = ViewDefinition.byName.entries(of: items)
        for entry in entries { XCTAssertEqual(entry.modified, items[entry.itemIndex].modified) }
    }

    // MARK: Fields and filters as values

    func testFieldValues() {
        let item = Item(name: ItemName("n.pdf"), kind: .file, title: "T", archived: true, tags: ["a", "b"], url: "u",
                        modified: Timestamp(seconds: 2), created: Timestamp(seconds: 1), size: 9)
        XCTAssertEqual(item.value(of: .name), .text("n.pdf"))
        XCTAssertEqual(item.value(of: .ext), .text("pdf"))
        XCTAssertEqual(item.value(of: .title), .text("T"))
        XCTAssertEqual(item.value(of: .archived), .bool(true))
        XCTAssertEqual(item.value(of: .tags), .list([.text("a"), .text("b")]))
        XCTAssertEqual(item.value(of: .url), .text("u"))
        XCTAssertEqual(item.value(of: .modified), .date(Timestamp(seconds: 2)))
        XCTAssertEqual(item.value(of: .created), .date(Timestamp(seconds: 1)))
        XCTAssertEqual(item.value(of: .size), .number(9))
        XCTAssertEqual(item.value(of: .payload("nothing")), .missing)
        for field in Field.builtIn { XCTAssertEqual(Field(named: field.description), field) }
        XCTAssertNil(Field(named: "payload."))
        XCTAssertNil(Field(named: "nonsense"))
    }

    func testAViewIsJustAFilterAndAnOrder() {
        // A configured view plugs in beside the built-ins without engine changes.
        let big = ViewDefinition(path: ["big"], filter: .compare(.size, .greater, .number(10)),
                                 order: Ordering([.init(.size, ascending: false)]))
        let items = [
            Item(name: ItemName("s"), kind: .file, size: 5), Item(name: ItemName("m"), kind: .file, size: 50),
            Item(name: ItemName("l"), kind: .file, size: 500),
        ]
        let catalog = Catalog(items: items, viewSet: ViewSet(fixed: ViewDefinition.builtIn + [big]))
        let view = catalog.view(at: "big")
        XCTAssertEqual(view, big)
        XCTAssertEqual(view.map { catalog.entries(of: $0).map(\.nameString) }, ["0001 l", "0002 m"])
    }
}
