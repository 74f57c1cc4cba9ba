import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// Which names and payloads are conflict copies, and of what (`conflicts/`).
final class ConflictPatternTests: XCTestCase {
    private let patterns = ConflictPatterns()

    private func syncOriginal(_ name: String) -> String? { patterns.originalOfSyncCopy(ItemName(name))?.description }
    private func numberedOriginal(_ name: String) -> String? { patterns.originalOfNumberedCopy(ItemName(name))?.description }

    func testSyncToolsCopiesAreKnownByTheirNames() {
        XCTAssertEqual(syncOriginal("X.sync-conflict-20240101-120000-ABCDEFG.hpwebsite"), "X.hpwebsite")  // Syncthing
        XCTAssertEqual(syncOriginal("notes.sync-conflict-20240101-120000-ABCDEFG"), "notes")
        XCTAssertEqual(syncOriginal("X (Jo's conflicted copy 2024-05-01).hpwebsite"), "X.hpwebsite")  // Dropbox
        XCTAssertEqual(syncOriginal("X (conflicted copy 2023-01-01 120000).hpwebsite"), "X.hpwebsite")  // Nextcloud
        XCTAssertEqual(syncOriginal("X_conflict-20160101-120000.hpwebsite"), "X.hpwebsite")  // ownCloud
        XCTAssertNil(syncOriginal("X.hpwebsite"))
        XCTAssertNil(syncOriginal("(conflicted copy).x"), "no name left for an original")
        var custom = ConflictPatterns()
        custom.markers = ["~clash~"]
        XCTAssertEqual(custom.originalOfSyncCopy(ItemName("a~clash~3.txt"))?.description, "a.txt")
        XCTAssertNil(custom.originalOfSyncCopy(ItemName("X.sync-conflict-20240101-120000-ABCDEFG.hpwebsite")))
    }

    func testNumberedCopiesAreShapedSo() {
        XCTAssertEqual(numberedOriginal("X 2.hpwebsite"), "X.hpwebsite")
        XCTAssertEqual(numberedOriginal("X (1).hpwebsite"), "X.hpwebsite")
        XCTAssertEqual(numberedOriginal("Chapter 2"), "Chapter")
        XCTAssertNil(numberedOriginal("X2.hpwebsite"))
        XCTAssertNil(numberedOriginal(" 2.hpwebsite"))
        XCTAssertNil(numberedOriginal("X (12345).hpwebsite"), "not a copy's number")
        XCTAssertNil(numberedOriginal("Taxes 2023.pdf"), "a year, not a copy's number")
        XCTAssertEqual(numberedOriginal("X 12.pdf"), "X.pdf")
        XCTAssertNil(numberedOriginal("X (a).hpwebsite"))
        XCTAssertEqual(numberedOriginal("notes/X 2.md"), "notes/X.md", "a nested item's copy")
        XCTAssertNil(numberedOriginal("notes 2/X.md"), "a number on the folder, not the item")
        XCTAssertEqual(numberedOriginal("X (1)"), "X")
        XCTAssertNil(numberedOriginal("X 1).md"), "a closing parenthesis without its opening one")
        XCTAssertNil(numberedOriginal("(1).md"))
        XCTAssertNil(numberedOriginal("2"))
        var off = ConflictPatterns()
        off.numberedCopies = false
        XCTAssertNil(off.originalOfNumberedCopy(ItemName("X 2.hpwebsite")))
    }

    func testNumberedCopiesNeedTheirOriginal() {
        var items = [Item(name: ItemName("X.b"), kind: .bundle), Item(name: ItemName("X 2.b"), kind: .bundle),
                     Item(name: ItemName("Y 2.b"), kind: .bundle)]
        patterns.markNumberedCopies(&items)
        XCTAssertEqual(items.map(\.conflict), [nil, .numberedCopy, nil])
        XCTAssertEqual(items[1].conflictOf, ItemName("X.b"))
        XCTAssertEqual(EntryNaming.entryName(rank: 1, count: 1, item: items[1], naming: .clashingItem), Array("0001 X.b".utf8))
        XCTAssertEqual(EntryNaming.entryName(rank: 1, count: 1, item: items[1]), Array("0001 X 2.b".utf8))
        items.removeFirst()
        patterns.markNumberedCopies(&items)
        XCTAssertEqual(items.map(\.conflict), [nil, nil])
    }

    func testGitMarkersInPayloads() {
        let conflicted = Array("<plist>\n<<<<<<< HEAD\n<string>a</string>\n=======\n<string>b</string>\n>>>>>>> theirs\n</plist>\n".utf8)
        XCTAssertTrue(patterns.hasGitMarkers(conflicted))
        XCTAssertFalse(patterns.hasGitMarkers(Array("<<<<<<< HEAD\nonly one\n".utf8)))
        XCTAssertFalse(patterns.hasGitMarkers(Array(" <<<<<<< x\n=======\n>>>>>>> y\n".utf8)), "markers start lines")
        let scanner = Scanner()
        XCTAssertEqual(scanner.item(named: ItemName("a.hpwebsite"), payload: conflicted, fileName: "payload.plist").conflict, .gitMarkers)
        XCTAssertEqual(Item(name: ItemName("a"), kind: .file, conflict: .gitMarkers).value(of: .conflict), .text("git markers"))
    }
}
