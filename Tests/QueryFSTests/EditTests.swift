import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// Editing items (issue 14): each payload format keeps its format and every
/// key an edit does not touch; XML and JSON change only the lines of the
/// changed values; every edit is journaled and undone byte for byte.
final class EditTests: FixtureTestCase {
    private func editor() throws -> ItemEditor {
        ItemEditor(backing: try BackingDirectory(path: backing), lockTimeout: 1)
    }

    private func bytes(_ relative: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: path(relative)) ?? Data())
    }

    /// Decoded with Foundation: an independent reader of what was written.
    private func foundationPlist(_ relative: String) throws -> [String: Any] {
        try XCTUnwrap(try PropertyListSerialization.propertyList(from: Data(bytes(relative)), format: nil) as? [String: Any])
    }

    private func foundationJSON(_ relative: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(bytes(relative))) as? [String: Any])
    }

    /// Lines of `after` not in `before` and the reverse, as a line diff would count them.
    private func changedLines(_ before: [UInt8], _ after: [UInt8]) -> (removed: [String], added: [String]) {
        let old = String(decoding: before, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let new = String(decoding: after, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var prefix = 0
        while prefix < min(old.count, new.count), old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < min(old.count, new.count) - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        return (Array(old[prefix..<(old.count - suffix)]), Array(new[prefix..<(new.count - suffix)]))
    }

    private static let hipstapaperXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>isArchived</key>
        \t<false/>
        \t<key>tags</key>
        \t<array>
        \t\t<string>Tag Number 4</string>
        \t</array>
        \t<key>webLocation</key>
        \t<dict>
        \t\t<key>relative</key>
        \t\t<string>https://www.google.com/search?hl=en&amp;q=4</string>
        \t</dict>
        \t<key>webTitle</key>
        \t<string>Google: The Epic Search</string>
        </dict>
        </plist>

        """

    private static let hipstapaperJSON = """
        {
          "isArchived": false,
          "tags": [
            "Tag Number 4"
          ],
          "webLocation": {"relative": "https://example.com/?a=1&b=2"},
          "webTitle": "A JSON title"
        }

        """

    // MARK: XML

    /// An item read under its lock that is no folder or regular file was
    /// put in place of the one locked: the edit stops (a note swapped with
    /// a link got its tags in the attribute of the note that came back).
    func testAnItemSwappedForALinkAfterItsLockIsNotEdited() throws {
        writeFile("n.md", "---\ntitle: N\n---\n")
        XCTAssertEqual(symlink(path("n.md"), path("link.md")), 0)
        let rootFD = open(backing, O_RDONLY | O_DIRECTORY)
        defer { close(rootFD) }
        XCTAssertThrowsError(try ItemState.read(ItemName("link.md"), in: rootFD, payloadNames: FieldSources.defaultPayloadNames)) { error in
            XCTAssertEqual((error as? EditError)?.errno, EAGAIN)
        }
        XCTAssertNoThrow(try ItemState.read(ItemName("n.md"), in: rootFD, payloadNames: FieldSources.defaultPayloadNames))
    }

    func testXMLEditsChangeOnlyTheLinesOfTheChangedValues() throws {
        bundle("x.b", file: "payload.plist", contents: Array(Self.hipstapaperXML.utf8))
        let editor = try editor()
        var before = bytes("x.b/payload.plist")
        try editor.apply([.setArchived(true)], to: ItemName("x.b"))
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).removed, ["\t<false/>"])
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).added, ["\t<true/>"])

        before = bytes("x.b/payload.plist")
        try editor.apply([.addTag("swift & more")], to: ItemName("x.b"))
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).removed, [])
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).added, ["\t\t<string>swift &amp; more</string>"])

        before = bytes("x.b/payload.plist")
        try editor.apply([.setTitle("New <title>")], to: ItemName("x.b"))
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).added, ["\t<string>New &lt;title&gt;</string>"])
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).removed.count, 1)

        before = bytes("x.b/payload.plist")
        try editor.apply([.removeTag("Tag Number 4")], to: ItemName("x.b"))
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).removed, ["\t\t<string>Tag Number 4</string>"])
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).added, [])

        before = bytes("x.b/payload.plist")
        try editor.apply([.setPayload("starred", .bool(true))], to: ItemName("x.b"))
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).removed, [])
        XCTAssertEqual(changedLines(before, bytes("x.b/payload.plist")).added, ["\t<key>starred</key>", "\t<true/>"])

        let plist = try foundationPlist("x.b/payload.plist")
        XCTAssertEqual(plist["isArchived"] as? Bool, true)
        XCTAssertEqual(plist["tags"] as? [String], ["swift & more"])
        XCTAssertEqual(plist["webTitle"] as? String, "New <title>", "the title goes where it came from")
        XCTAssertNil(plist["title"])
        XCTAssertEqual(plist["starred"] as? Bool, true)
        XCTAssertEqual((plist["webLocation"] as? [String: String])?["relative"], "https://www.google.com/search?hl=en&q=4", "untouched")
        XCTAssertEqual(try scanItem("x.b").tags, ["swift & more"])
    }

    func testEmptyAndMissingContainersInXML() throws {
        bundle("empty.b", plistBody: "<dict><key>tags</key><array/><key>webTitle</key><string>E</string></dict>")
        bundle("none.b", plistBody: "<dict/>")
        makeDirectory("bare.b")
        let editor = try editor()
        for name in ["empty.b", "none.b", "bare.b"] {
            try editor.apply([.addTag("a"), .addTag("b"), .setArchived(true)], to: ItemName(name))
            let item = try scanItem(name)
            XCTAssertEqual(item.tags, ["a", "b"], name)
            XCTAssertTrue(item.archived, name)
            XCTAssertEqual(try foundationPlist("\(name)/payload.plist")["tags"] as? [String], ["a", "b"], name)
        }
        XCTAssertEqual(try foundationPlist("bare.b/payload.plist")["archived"] as? Bool, true, "a new payload takes the first alias")
    }

    // MARK: JSON

    func testJSONEditsChangeOnlyTheLinesOfTheChangedValues() throws {
        bundle("j.b", file: "payload.json", contents: Array(Self.hipstapaperJSON.utf8))
        let editor = try editor()
        var before = bytes("j.b/payload.json")
        try editor.apply([.setArchived(true)], to: ItemName("j.b"))
        XCTAssertEqual(changedLines(before, bytes("j.b/payload.json")).removed, ["  \"isArchived\": false,"])
        XCTAssertEqual(changedLines(before, bytes("j.b/payload.json")).added, ["  \"isArchived\": true,"])

        before = bytes("j.b/payload.json")
        try editor.apply([.addTag("new \"one\"")], to: ItemName("j.b"))
        XCTAssertEqual(changedLines(before, bytes("j.b/payload.json")).removed, [])
        XCTAssertEqual(changedLines(before, bytes("j.b/payload.json")).added, ["    \"new \\\"one\\\"\","])

        before = bytes("j.b/payload.json")
        try editor.apply([.setPayload("kind", .string("article"))], to: ItemName("j.b"))
        XCTAssertEqual(changedLines(before, bytes("j.b/payload.json")).removed, [])
        XCTAssertEqual(changedLines(before, bytes("j.b/payload.json")).added, ["  \"kind\": \"article\","])

        let json = try foundationJSON("j.b/payload.json")
        XCTAssertEqual(json["isArchived"] as? Bool, true)
        XCTAssertEqual(json["tags"] as? [String], ["new \"one\"", "Tag Number 4"])
        XCTAssertEqual(json["kind"] as? String, "article")
        XCTAssertEqual((json["webLocation"] as? [String: String])?["relative"], "https://example.com/?a=1&b=2")
        try editor.apply([.removeTag("Tag Number 4"), .removeTag("new \"one\""), .removePayload("kind")], to: ItemName("j.b"))
        XCTAssertEqual(try foundationJSON("j.b/payload.json")["tags"] as? [String], [])
        XCTAssertNil(try foundationJSON("j.b/payload.json")["kind"])
    }

    /// A list written on one line gets the new tag last, in its own
    /// separator (found from outside: `["zz", "arr1","arr2"]`); over lines,
    /// first (above: the one-line diff).
    func testAOneLineJSONListGrowsAtItsEnd() throws {
        let editor = try editor()
        for (list, grown) in [(#"["arr1","arr2"]"#, #"["arr1","arr2","zz"]"#), (#"["a", "b"]"#, #"["a", "b", "zz"]"#),
                              (#"["a"]"#, #"["a", "zz"]"#), (#"[]"#, #"["zz"]"#)] {
            bundle("o.b", file: "payload.json", contents: Array(#"{"title": "One", "tags": \#(list), "kind": {"a": 1}}"#.utf8))
            try editor.apply([.addTag("zz")], to: ItemName("o.b"))
            XCTAssertEqual(String(decoding: bytes("o.b/payload.json"), as: UTF8.self), #"{"title": "One", "tags": \#(grown), "kind": {"a": 1}}"#, list)
            try editor.apply([.setPayload("kind.b", .integer(2))], to: ItemName("o.b"))
            XCTAssertTrue(String(decoding: bytes("o.b/payload.json"), as: UTF8.self).hasSuffix(#""kind": {"a": 1, "b": 2}}"#), list)
            removeTree(path("o.b"))
        }
    }

    /// Tags kept as one string (ArchiveBox's): a tag taken out or renamed
    /// changes where it stands, every other tag and blank as it was.
    func testAStringOfTagsChangesOnlyWhereATagStands() throws {
        var sources = FieldSources()
        sources.payloadNames = ["index.json"]
        sources.tagsMayBeText = true
        let editor = ItemEditor(backing: try BackingDirectory(path: backing), sources: sources, lockTimeout: 1)
        bundle("s.b", file: "index.json", contents: Array(#"{"title": "S", "tags": " a , b ,c "}"#.utf8))
        try editor.apply([.removeTag("b")], to: ItemName("s.b"))
        XCTAssertEqual(String(decoding: bytes("s.b/index.json"), as: UTF8.self), #"{"title": "S", "tags": " a ,c "}"#)
        try editor.apply([.renameTagFolder("a", to: "z")], to: ItemName("s.b"))
        XCTAssertEqual(String(decoding: bytes("s.b/index.json"), as: UTF8.self), #"{"title": "S", "tags": " z ,c "}"#)
        try editor.apply([.renameTagFolder("z", to: "c")], to: ItemName("s.b"))
        XCTAssertEqual(String(decoding: bytes("s.b/index.json"), as: UTF8.self), #"{"title": "S", "tags": "c "}"#, "renamed onto one it holds: once")
        bundle("t.b", file: "index.json", contents: Array(#"{"tags": "a, b"}"#.utf8))
        try editor.apply([.removeTag("a")], to: ItemName("t.b"))
        XCTAssertEqual(String(decoding: bytes("t.b/index.json"), as: UTF8.self), #"{"tags": "b"}"#)
    }

    // MARK: Binary

    func testBinaryPlistsStayBinaryWithEveryOtherValue() throws {
        let original: [String: Any] = ["webTitle": "Bin", "isArchived": false, "tags": ["a"], "n": 1.5,
                                       "when": Date(timeIntervalSince1970: 1_700_000_000), "blob": Data([0, 1, 255]),
                                       "nested": ["deep": ["x", 2]] as [String: Any], "unicode": "日本語 ☕"]
        let data = try PropertyListSerialization.data(fromPropertyList: original, format: .binary, options: 0)
        bundle("bin.b", file: "payload.plist", contents: [UInt8](data))
        try editor().apply([.addTag("b"), .setArchived(true), .setTitle("Binary")], to: ItemName("bin.b"))
        XCTAssertEqual(Array(bytes("bin.b/payload.plist").prefix(8)), Array("bplist00".utf8))
        var format = PropertyListSerialization.PropertyListFormat.xml
        let plist = try XCTUnwrap(try PropertyListSerialization.propertyList(from: Data(bytes("bin.b/payload.plist")), format: &format)
            as? [String: Any])
        XCTAssertEqual(format, .binary)
        XCTAssertEqual(plist["tags"] as? [String], ["a", "b"])
        XCTAssertEqual(plist["isArchived"] as? Bool, true)
        XCTAssertEqual(plist["webTitle"] as? String, "Binary")
        XCTAssertEqual(plist["n"] as? Double, 1.5)
        XCTAssertEqual(plist["when"] as? Date, Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertEqual(plist["blob"] as? Data, Data([0, 1, 255]))
        XCTAssertEqual(plist["unicode"] as? String, "日本語 ☕")
        XCTAssertEqual(((plist["nested"] as? [String: Any])?["deep"] as? [Any])?.count, 2)
    }

    func testKeyedArchivesAreLeftAlone() throws {
        let archive = try NSKeyedArchiver.archivedData(withRootObject: ["a": "b"], requiringSecureCoding: false)
        bundle("archive.b", file: "payload.plist", contents: [UInt8](archive))
        XCTAssertThrowsError(try editor().apply([.addTag("x")], to: ItemName("archive.b"))) { error in
            XCTAssertEqual((error as? EditError)?.errno, EPERM)
        }
        XCTAssertEqual(bytes("archive.b/payload.plist"), [UInt8](archive))
    }

    // MARK: Plain files, refusals

    func testPlainFilesAreTaggedThroughTheirAttribute() throws {
        writeFile("notes.txt", "plain")
        let editor = try editor()
        try editor.apply([.addTag("todo"), .addTag("swift")], to: ItemName("notes.txt"))
        XCTAssertEqual(try scanItem("notes.txt").tags, ["todo", "swift"])
        try editor.apply([.removeTag("todo")], to: ItemName("notes.txt"))
        XCTAssertEqual(try scanItem("notes.txt").tags, ["swift"])
        XCTAssertThrowsError(try editor.apply([.setArchived(true)], to: ItemName("notes.txt"))) { error in
            XCTAssertEqual((error as? EditError)?.errno, EPERM)
        }
        XCTAssertThrowsError(try editor.apply([.addTag("x")], to: ItemName("missing"))) { error in
            XCTAssertEqual((error as? EditError)?.errno, ENOENT)
        }
    }

    func testAnEditWaitsForTheItemsLockAndFailsBusyAfterTheTimeout() throws {
        hipstapaper("locked.b", title: "Locked")
        let directory = try BackingDirectory(path: backing)
        let lock = try ItemLock(item: ItemName("locked.b"), in: directory.fd)
        try lock.lock(.exclusive, timeout: 1)
        XCTAssertThrowsError(try editor().apply([.addTag("x")], to: ItemName("locked.b"))) { error in
            XCTAssertEqual((error as? EditError)?.errno, EBUSY)
        }
        // Released meanwhile: the edit waits, then succeeds.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { lock.unlock() }
        try editor().apply([.addTag("x")], to: ItemName("locked.b"))
        XCTAssertEqual(try scanItem("locked.b").tags, ["x"])
    }

    // MARK: Journal and undo

    func testEveryEditIsJournaledAndUndoneByteForByte() throws {
        bundle("x.b", file: "payload.plist", contents: Array(Self.hipstapaperXML.utf8))
        bundle("j.b", file: "payload.json", contents: Array(Self.hipstapaperJSON.utf8))
        makeDirectory("bare.b")
        writeFile("notes.txt", "plain")
        let originals = ["x.b/payload.plist": bytes("x.b/payload.plist"), "j.b/payload.json": bytes("j.b/payload.json")]
        let editor = try editor()
        try editor.apply([.addTag("a"), .setArchived(true)], to: ItemName("x.b"))
        try editor.apply([.setTitle("T")], to: ItemName("j.b"))
        try editor.apply([.addTag("b")], to: ItemName("bare.b"))
        try editor.apply([.addTag("c")], to: ItemName("notes.txt"))
        XCTAssertNil(try editor.apply([.addTag("c")], to: ItemName("notes.txt")), "nothing to change: no entry")

        let journal = EditJournal(backing: try BackingDirectory(path: backing))
        let entries = try journal.entries()
        XCTAssertEqual(entries.map(\.item.description), ["x.b", "j.b", "bare.b", "notes.txt"])
        XCTAssertEqual(entries[0].changes.map(\.field), ["archived", "tags"])
        XCTAssertEqual(entries[0].changes.first?.old, .bool(false))
        XCTAssertEqual(entries[1].changes, [EditJournal.Change(field: "title", old: .string("A JSON title"), new: .string("T"))])

        for entry in EditJournal.undoable(entries) { try editor.undo(entry) }
        for (file, original) in originals { XCTAssertEqual(bytes(file), original, file) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("bare.b/payload.plist")), "the payload the edit made is gone again")
        XCTAssertEqual(try scanItem("notes.txt").tags, [])
        // Undone entries are not undone twice; undos are journaled, with what they undid.
        let after = try journal.entries()
        XCTAssertEqual(after.count, 8)
        XCTAssertEqual(Set(after.compactMap(\.undoes)), Set(entries.map(\.id)))
        XCTAssertEqual(EditJournal.undoable(after), [])
    }

    func testTheEditsOfOneActionAreUndoneTogether() throws {
        for name in ["a.b", "b.b", "c.b", "d.b"] { bundle(name, file: "payload.plist", contents: Array(Self.hipstapaperXML.utf8)) }
        let original = try scanItem("b.b").tags
        let editor = try editor()
        try editor.apply([.addTag("alone")], to: ItemName("a.b"))
        let action = EditJournal.newAction()
        // Another edit in between, as a concurrent command would make: it is not part of the action.
        try editor.apply([.addTag("grouped")], to: ItemName("b.b"), action: action)
        try editor.apply([.addTag("between")], to: ItemName("d.b"))
        try editor.apply([.addTag("grouped")], to: ItemName("c.b"), action: action)
        let journal = EditJournal(backing: try BackingDirectory(path: backing))
        let entries = try journal.entries()
        XCTAssertEqual(entries.map(\.action), [nil, action, nil, action], "the action is journaled and read back")

        XCTAssertEqual(EditJournal.undoable(entries, last: 1).map(\.item.description), ["c.b", "b.b"], "the last action, whole")
        XCTAssertEqual(EditJournal.undoable(entries, last: 2).map(\.item.description), ["c.b", "d.b", "b.b"])
        XCTAssertEqual(EditJournal.undoable(entries, last: 3).map(\.item.description), ["c.b", "d.b", "b.b", "a.b"])
        // A time inside the action takes all of it back, the part before the time too.
        let since = entries[2].time
        XCTAssertEqual(Set(EditJournal.undoable(entries, since: since).map(\.item.description)), ["b.b", "c.b", "d.b"])

        for entry in EditJournal.undoable(entries, last: 1) { try editor.undo(entry) }
        XCTAssertEqual(try scanItem("b.b").tags, original)
        XCTAssertEqual(try scanItem("c.b").tags, original)
        XCTAssertEqual(try scanItem("d.b").tags, original + ["between"])
        XCTAssertEqual(EditJournal.undoable(try journal.entries(), last: 1).map(\.item.description), ["d.b"], "then the edit before it")
    }

    func testAnUndoOfAFieldChangedSinceIsRefusedAndOtherChangesDoNotStopIt() throws {
        bundle("x.b", file: "payload.plist", contents: Array(Self.hipstapaperXML.utf8))
        let editor = try editor()
        try editor.apply([.addTag("a")], to: ItemName("x.b"))
        try editor.apply([.setArchived(true)], to: ItemName("x.b"))
        let entries = try EditJournal(backing: try BackingDirectory(path: backing)).entries()
        // Someone else retags: the tag edit cannot be undone; the archive edit can, field by field.
        try editor.apply([.removeTag("a"), .addTag("z")], to: ItemName("x.b"))
        XCTAssertThrowsError(try editor.undo(entries[0])) { error in
            XCTAssertEqual((error as? EditError)?.errno, EBUSY)
            XCTAssertTrue("\(error)".contains("tags changed since"), "\(error)")
        }
        try editor.undo(entries[1])
        XCTAssertFalse(try scanItem("x.b").archived)
        XCTAssertEqual(try scanItem("x.b").tags, ["Tag Number 4", "z"])
    }

    // MARK: Views and edits

    func testWhatJoiningAndLeavingAViewMeans() throws {
        func query(_ text: String) throws -> QueryFSEngine.Predicate { try Query(parsing: text, now: .now).filter }
        let tagNamed: (String) -> String = { $0 }
        XCTAssertEqual(ViewMembership.join(ViewDefinition.tag(folder: "t").filter, tagNamed: tagNamed), .edits([.addTag("t")]))
        XCTAssertEqual(ViewMembership.leave(ViewDefinition.tag(folder: "t").filter), .edits([.removeTagFolder("t")]))
        XCTAssertEqual(ViewMembership.join(ViewDefinition.archived.filter, tagNamed: tagNamed), .edits([.setArchived(true)]))
        XCTAssertEqual(ViewMembership.leave(ViewDefinition.unarchived.filter), .edits([.setArchived(true)]))
        XCTAssertEqual(ViewMembership.join(ViewDefinition.byName.filter, tagNamed: tagNamed), .alreadyMember)
        if case .refused = ViewMembership.leave(ViewDefinition.byName.filter) {} else { XCTFail("by-name cannot be left") }
        XCTAssertEqual(ViewMembership.join(try query("tag:x -archived payload.kind=article payload.n=3"), tagNamed: tagNamed),
                       .edits([.addTag("x"), .setArchived(false), .setPayload("kind", .string("article")), .setPayload("n", .integer(3))]))
        XCTAssertEqual(ViewMembership.join(try query("-tag:x payload.done=true"), tagNamed: tagNamed),
                       .edits([.removeTag("x"), .setPayload("done", .bool(true))]))
        for text in ["tag:x or tag:y", "title:swift", "modified>7d", "payload.n>3", "not (tag:a tag:b)"] {
            if case .refused = ViewMembership.join(try query(text), tagNamed: tagNamed) {} else { XCTFail("\(text) cannot be joined") }
        }
        XCTAssertEqual(ViewMembership.leave(try query("-tag:x")), .edits([.addTag("x")]))
        if case .refused = ViewMembership.leave(try query("tag:x -archived")) {} else { XCTFail("two terms cannot be left") }
    }

    /// In a recursive collection an item replaced by a folder of notes
    /// (since a view listed it) is no bundle to make a payload in: the edit
    /// is refused and the folder left as it is (found from outside: the
    /// payload made in it hid its notes).
    func testAFolderOfItemsInARecursiveCollectionIsNoBundleToEdit() throws {
        writeFile("sub/n.md", "---\ntitle: Inner\n---\n")
        var sources = FieldSources()
        sources.recursive = true
        let editor = ItemEditor(backing: try BackingDirectory(path: backing, readingAs: sources), sources: sources, lockTimeout: 1)
        XCTAssertThrowsError(try editor.apply([.addTag("x")], to: ItemName("sub"))) { error in
            XCTAssertEqual((error as? EditError)?.errno, ENOENT, "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path("sub")), ["n.md"])
    }


    /// A tag added and removed again leaves Apple's empty form as it was
    /// (`<array/>`), byte for byte (found from outside: `git diff` showed
    /// `<array>` and `</array>` where `<array/>` had been).
    func testATagAddedAndRemovedLeavesTheEmptyListAsItWas() throws {
        let original = Self.hipstapaperXML.replacingOccurrences(of: "\t<array>\n\t\t<string>Tag Number 4</string>\n\t</array>",
                                                                with: "\t<array/>")
        XCTAssertTrue(original.contains("\t<array/>\n"))
        writeFile("a.b/payload.plist", original)
        let editor = try editor()
        try editor.apply([.addTag("x")], to: ItemName("a.b"))
        XCTAssertEqual(try scanItem("a.b").tags, ["x"])
        try editor.apply([.removeTag("x")], to: ItemName("a.b"))
        XCTAssertEqual(String(decoding: bytes("a.b/payload.plist"), as: UTF8.self), original)
    }
}
