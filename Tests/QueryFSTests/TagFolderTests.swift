import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// SPEC §2 `tag/<tag>/`: one folder per tag in use, named as a sanitized
/// title; case-sensitive; empty, `.` and `..` have none; tags that sanitize
/// alike share one; newest first; present only while some item has the tag.
/// A nested tag `a/b` is the folder `tag/a/b/`, and its items are in `tag/a/` too (issue 31).
final class TagFolderTests: FixtureTestCase {
    func testFolderNamesAreSanitizedTags() {
        XCTAssertEqual(EntryNaming.tagFolderName("swift"), "swift")
        XCTAssertEqual(EntryNaming.tagFolderName("Tag Number 4"), "Tag Number 4")
        XCTAssertEqual(EntryNaming.tagFolderName("rock/metal"), "rock/metal", "a nested tag: tag/rock/metal/")
        XCTAssertEqual(EntryNaming.tagFolderName("/rock//metal/"), "rock/metal", "empty parts dropped")
        XCTAssertEqual(EntryNaming.tagFolderNames("a/b/c"), ["a/b/c", "a/b", "a"], "an item of a/b/c is in every folder above it")
        XCTAssertEqual(EntryNaming.tagFolderName("  padded\t"), "padded")
        XCTAssertEqual(EntryNaming.tagFolderName("line\nbreak"), "line break")
        XCTAssertEqual(EntryNaming.tagFolderName("日本語"), "日本語")
        XCTAssertEqual(EntryNaming.tagFolderName("..."), "...")
        XCTAssertEqual(EntryNaming.tagFolderName(".hidden"), ".hidden")   // only `.` and `..` are dropped
        XCTAssertNil(EntryNaming.tagFolderName("a/../b"), "a part `..` would leave tag/: no folder")
    }

    /// The one-pass check that a tag is its own folder name says so only
    /// where splitting, sanitizing and joining gives the tag back.
    func testATagIsItsOwnFolderNameExactlyWhenSanitizingKeepsIt() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "B", "7", ".", "..", " ", "/", "//", "é", "\t", "\n", "\u{7F}", "~", String(repeating: "x", count: 254)]
        for _ in 0..<20_000 {
            let tag = (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            XCTAssertEqual(EntryNaming.tagFolderName(tag), EntryNaming.sanitizedFolderName(tag), JSON.string(tag))
        }
        for tag in [".", "..", "...", "a/.", "./a", "a/../b", " a", "a ", "a /b", String(repeating: "y", count: 255),
                    String(repeating: "y", count: 256), "a/" + String(repeating: "y", count: 256)] {
            XCTAssertEqual(EntryNaming.tagFolderName(tag), EntryNaming.sanitizedFolderName(tag), JSON.string(tag))
        }
    }

    func testTagsThatSanitizeToNothingOrDotsHaveNoFolder() {
        for tag in ["", " ", "\t\n", "\u{0}", "\u{7F}", ".", "..", " . ", "\t..\n", "\u{1}.\u{1}"] {
            XCTAssertNil(EntryNaming.tagFolderName(tag), tag.debugDescription)
        }
        let items = [makeItem("a", tags: ["", ".", "..", " . ", " .. ", "real"])]
        XCTAssertEqual(ViewSet.tagFolders(of: items), ["real"])
        XCTAssertEqual(Catalog(items: items).views.map(\.pathString).filter { $0.hasPrefix("tag/") }, ["tag/real"])
    }

    func testAVeryLongTagIsCutTo255BytesAtAWholeScalar() throws {
        let folder = try XCTUnwrap(EntryNaming.tagFolderName(String(repeating: "é", count: 200)))
        XCTAssertEqual(folder, String(repeating: "é", count: 127))
        XCTAssertEqual(folder.utf8.count, 254)
    }

    func testTagsAreCaseSensitive() {
        let items = [
            makeItem("a", tags: ["Work"], modified: 1), makeItem("b", tags: ["work"], modified: 2),
            makeItem("c", tags: ["WORK", "Work"], modified: 3),
        ]
        XCTAssertEqual(ViewSet.tagFolders(of: items), ["WORK", "Work", "work"])
        let viewSet = ViewSet()
        XCTAssertEqual(viewSet.view(at: "tag/Work", over: items).map { itemNames($0, items) }, ["c", "a"])
        XCTAssertEqual(viewSet.view(at: "tag/work", over: items).map { itemNames($0, items) }, ["b"])
        XCTAssertEqual(viewSet.view(at: "tag/WORK", over: items).map { itemNames($0, items) }, ["c"])
        XCTAssertNil(viewSet.view(at: "tag/wORK", over: items))
    }

    func testTagsThatSanitizeAlikeShareOneFolder() {
        let items = [
            makeItem("slash", title: "Slash", tags: ["rock/metal"], modified: 1),
            makeItem("division", title: "Division", tags: ["rock∕metal"], modified: 2),
            makeItem("padded", title: "Padded", tags: [" rock/metal "], modified: 3),
            makeItem("other", title: "Other", tags: ["rock"], modified: 4),
        ]
        XCTAssertEqual(ViewSet.tagFolders(of: items), ["rock", "rock/metal", "rock∕metal"])
        let nested = ViewSet().view(at: "tag/rock/metal", over: items)
        XCTAssertEqual(nested?.path, ["tag", "rock/metal"])
        XCTAssertEqual(nested.map { entryNames($0, items) }, ["0001 Padded", "0002 Slash"], "` rock/metal ` and `rock/metal` sanitize alike")
        XCTAssertEqual(nested?.entries(of: items).first?.targetString, "../../../bundles/padded", "three levels down")
        XCTAssertEqual(ViewSet().view(at: "tag/rock", over: items).map { entryNames($0, items) }, ["0001 Other", "0002 Padded", "0003 Slash"],
                       "the items of a nested tag are in the folder above it")
        XCTAssertEqual(ViewSet().view(at: "tag/rock∕metal", over: items).map { entryNames($0, items) }, ["0001 Division"],
                       "the division slash is a character of a name, not a level")
        // An item with two tags that merge is listed once.
        let both = [makeItem("both", tags: ["a/b", " a/b"])]
        XCTAssertEqual(ViewSet().view(at: "tag/a/b", over: both).map { itemNames($0, both) }, ["both"])
    }

    func testTagViewsAreNewestModifiedFirstWithTiesByName() {
        let items = [
            makeItem("old", tags: ["t"], modified: 100, created: 900),
            makeItem("new", tags: ["t"], modified: 300, created: 100),
            makeItem("mid-b", tags: ["t"], modified: 200),
            makeItem("mid-a", tags: ["t"], modified: 200),
            makeItem("untagged", modified: 999),
            makeItem("archived", archived: true, tags: ["t"], modified: 250),
        ]
        let view = ViewDefinition.tag(folder: "t")
        XCTAssertEqual(itemNames(view, items), ["new", "archived", "mid-a", "mid-b", "old"])
        XCTAssertEqual(view.entries(of: items).map(\.targetString).first, "../../bundles/new")
    }

    func testATagViewExistsOnlyWhileSomeItemCarriesTheTag() {
        var items = [makeItem("a", tags: ["keep"]), makeItem("b", tags: ["gone"])]
        XCTAssertNotNil(ViewSet().view(at: "tag/gone", over: items))
        XCTAssertEqual(Catalog(items: items).views.map(\.pathString),
                       ["by-name", "by-modified", "by-created", "unarchived", "archived", "conflicts", "tag/gone", "tag/keep"])
        items[1].tags = []
        XCTAssertNil(ViewSet().view(at: "tag/gone", over: items))
        XCTAssertNotNil(ViewSet().view(at: "tag/keep", over: items))
        XCTAssertEqual(Catalog(items: items).views.map(\.pathString).last, "tag/keep")
        items[0].tags = []
        XCTAssertEqual(Catalog(items: items).views.count, 6)
        XCTAssertNil(ViewSet().view(at: "tag/keep", over: items))
        // `tag` itself is not a view.
        XCTAssertNil(ViewSet().view(at: "tag", over: items))
    }

    func testTagFoldersAreListedInByteOrder() {
        let items = [makeItem("a", tags: ["b", "B", "a", "é", "_", "10", "9"])]
        XCTAssertEqual(ViewSet.tagFolders(of: items), ["10", "9", "B", "_", "a", "b", "é"])
    }

    func testTagFoldersFromScannedPayloads() throws {
        hipstapaper("one.hpwebsite", title: "one", tags: ["Work", "rock/metal", " . "], mtime: 100)
        hipstapaper("two.hpwebsite", title: "two", tags: ["work", "rock∕metal", ""], mtime: 200)
        hipstapaper("three.hpwebsite", title: "three", tags: [], mtime: 300)
        let catalog = try catalog()
        XCTAssertEqual(catalog.views.map(\.pathString).filter { $0.hasPrefix("tag/") }, ["tag/Work", "tag/rock", "tag/rock/metal", "tag/rock∕metal", "tag/work"])
        let nested = try XCTUnwrap(catalog.view(at: "tag/rock/metal"))
        XCTAssertEqual(catalog.entries(of: nested).map(\.nameString), ["0001 one.hpwebsite"])
        XCTAssertEqual(catalog.entries(of: nested).map(\.targetString), ["../../../bundles/one.hpwebsite"])
        XCTAssertEqual(try listing("tag/rock∕metal"), ["0001 two.hpwebsite"])
        XCTAssertEqual(try listing("tag/Work"), ["0001 one.hpwebsite"])
        XCTAssertEqual(try listing("tag/work"), ["0001 two.hpwebsite"])
        XCTAssertNil(catalog.view(at: "tag/."))
        XCTAssertNil(catalog.view(at: "tag/ . "))
    }
}
