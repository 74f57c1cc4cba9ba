import Foundation
import QueryFS
import QueryFSTestSupport
import XCTest

/// The library as its users get it: `import QueryFS`, no other module of the
/// package and nothing `@testable` (the shared fixture builders aside),
/// against a real folder, real inotify and real flock.
final class ItemCollectionTests: XCTestCase {
    func testAViewIsSortedFilteredAndFindsItsItems() throws {
        let folder = try Folder()
        try folder.bundle("a.hpwebsite", title: "Beta", tags: ["swift"], modified: 3000)
        try folder.bundle("b.hpwebsite", title: "Alpha", tags: ["swift", "linux"], modified: 1000)
        try folder.bundle("c.hpwebsite", title: "Gamma", archived: true, modified: 2000)

        let byName = try ItemCollection(at: folder.path)
        defer { byName.close() }
        XCTAssertEqual(byName.view, "by-name")
        XCTAssertEqual(byName.items.map(\.title), ["Alpha", "Beta", "Gamma"])
        XCTAssertEqual(byName.count, 3)
        XCTAssertEqual(byName[1].name, "a.hpwebsite")
        XCTAssertEqual(byName[1].tags, ["swift"])
        XCTAssertEqual(byName[1].modified, 3000)
        XCTAssertEqual(byName.index(of: byName[2]), 2)
        XCTAssertEqual(byName.items.index(named: "b.hpwebsite"), 0)
        XCTAssertNil(byName.items.index(named: "missing"))

        let query = try ItemCollection(at: folder.path, view: "tag:swift -archived sort:-modified")
        defer { query.close() }
        XCTAssertEqual(query.view, "query/tag:swift -archived sort:-modified")
        XCTAssertEqual(query.items.map(\.title), ["Beta", "Alpha"])
        let tag = try ItemCollection(at: folder.path, view: "tag/linux")
        defer { tag.close() }
        XCTAssertEqual(tag.items.map(\.name), ["b.hpwebsite"])
    }

    /// The folder's own `.queryfs.toml` is read as a mount reads it: its
    /// format (notes in nested folders, their front matter), its views,
    /// and a mistake in it is a typed error, not a collection read wrong.
    func testTheFoldersConfigurationIsRead() throws {
        let folder = try Folder()
        try folder.write(".queryfs.toml", "format = \"obsidian\"\n[views]\nmine = \"tag:swift sort:title\"\n")
        try folder.write("notes/2024/b.md", "---\ntitle: Beta note\ntags: [swift]\n---\nBody\n")
        try folder.write("notes/a.md", "---\ntitle: Alpha note\ntags: [swift, lang/rust]\n---\n")
        try folder.write("c.md", "# Gamma heading\n")
        let byName = try ItemCollection(at: folder.path)
        defer { byName.close() }
        XCTAssertEqual(byName.items.map(\.title), ["Alpha note", "Beta note", "Gamma heading"])
        XCTAssertEqual(byName.items.map(\.name), ["notes/a.md", "notes/2024/b.md", "c.md"])
        let mine = try ItemCollection(at: folder.path, view: "mine")
        defer { mine.close() }
        XCTAssertEqual(mine.view, "mine")
        XCTAssertEqual(mine.items.map(\.title), ["Alpha note", "Beta note"])
        let nested = try ItemCollection(at: folder.path, view: "tag/lang/rust")
        defer { nested.close() }
        XCTAssertEqual(nested.items.map(\.name), ["notes/a.md"])

        try folder.write(".queryfs.toml", "format = \"no such format\"\n")
        XCTAssertThrowsError(try ItemCollection(at: folder.path)) { error in
            guard case CollectionError.system(_, let path, let errno, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(errno, EINVAL)
            XCTAssertTrue(path.hasSuffix(".queryfs.toml"), path)
        }
    }

    /// An edit of the folder's configuration that changes the collection's
    /// view is one change against the list before; one that takes the view
    /// away ends the changes, and says so (found from outside: both silent).
    func testAReloadedConfigurationChangesOrEndsAConfiguredView() async throws {
        let folder = try Folder()
        for (index, (title, tags)) in [("Alpha", ["a"]), ("Bravo", ["b"]), ("Charlie", ["a", "b"])].enumerated() {
            try folder.bundle("\(index).hpwebsite", title: title, tags: tags)
        }
        try folder.write(".queryfs.toml", "[views]\nmine = \"tag:a\"\ngone = \"tag:b\"\n")
        let mine = try ItemCollection(at: folder.path, view: "mine")
        defer { mine.close() }
        let gone = try ItemCollection(at: folder.path, view: "gone")
        defer { gone.close() }
        var changes = mine.changes.makeAsyncIterator()
        var goneChanges = gone.changes.makeAsyncIterator()
        guard let first = await changes.next(), await goneChanges.next() != nil else { return XCTFail("no first change") }
        let before = first.applied(to: [], make: \.title) ?? []
        XCTAssertEqual(Set(before), ["Alpha", "Charlie"])
        try folder.write(".queryfs.toml", "[views]\nmine = \"tag:b\"\n")
        guard let change = await changes.next() else { return XCTFail("the reload was no change") }
        XCTAssertEqual(change.applied(to: before, make: \.title), mine.items.map(\.title))
        XCTAssertEqual(Set(mine.items.map(\.title)), ["Bravo", "Charlie"])
        let ended = await goneChanges.next()
        XCTAssertNil(ended, "a view taken away ends its changes")
        XCTAssertTrue(gone.isViewGone)
        XCTAssertFalse(mine.isViewGone)
    }

    func testABadViewOrFolderIsOneTypedError() {
        XCTAssertThrowsError(try ItemCollection(at: "/nonexistent/queryfs-library-test")) { error in
            guard case CollectionError.system(_, _, let errno, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(errno, ENOENT)
        }
        XCTAssertThrowsError(try ItemCollection(at: "/tmp", view: "sort:nonsense(")) { error in
            guard case CollectionError.invalidView = error else { return XCTFail("\(error)") }
        }
    }

    /// Every change, applied in order to a list that started from the first
    /// (the whole view inserted), gives the view as the change says it is:
    /// inserts, moves, updates and deletes, as a list view would apply them.
    func testChangesAppliedInOrderRebuildTheView() async throws {
        let folder = try Folder()
        for (index, title) in ["Delta", "Bravo", "Foxtrot"].enumerated() {
            try folder.bundle("\(index).hpwebsite", title: title)
        }
        let collection = try ItemCollection(at: folder.path)
        var changes = collection.changes.makeAsyncIterator()
        guard let first = await changes.next() else { return XCTFail("no first change") }
        XCTAssertTrue(first.isInitial)
        var mirror = first.applied(to: [], make: \.title) ?? []
        XCTAssertEqual(mirror, ["Bravo", "Delta", "Foxtrot"])

        var sawKinds: Set<String> = []
        let steps: [() throws -> Void] = [
            { try folder.bundle("3.hpwebsite", title: "Alpha") },                 // insert at the top
            { try folder.bundle("1.hpwebsite", title: "Zulu") },                  // Bravo → Zulu: a move
            { try folder.bundle("0.hpwebsite", title: "Delta", tags: ["new"]) },  // fields only: an update
            { try FileManager.default.removeItem(atPath: folder.path + "/2.hpwebsite") },  // a delete
        ]
        for step in steps {
            try step()
            guard let change = await changes.next() else { return XCTFail("the sequence ended early") }
            if !change.insertions.isEmpty { sawKinds.insert("insert") }
            if !change.moves.isEmpty { sawKinds.insert("move") }
            if !change.updates.isEmpty { sawKinds.insert("update") }
            if !change.deletions.isEmpty { sawKinds.insert("delete") }
            XCTAssertEqual(change.before.map(\.title), mirror, "each change starts where the last one ended")
            mirror = change.applied(to: mirror, make: \.title) ?? ["(did not fit)"]
            XCTAssertEqual(mirror, change.items.map(\.title))
        }
        XCTAssertEqual(sawKinds, ["insert", "move", "update", "delete"])
        XCTAssertEqual(mirror, ["Alpha", "Delta", "Zulu"])
        XCTAssertEqual(collection.items.map(\.title), mirror)

        collection.close()
        while await changes.next() != nil {}  // ends: a hang here is the bug
        var late = collection.changes.makeAsyncIterator()
        let initial = await late.next()
        XCTAssertEqual(initial?.items.count, 3, "a sequence asked for after close still gets the view…")
        let afterClose = await late.next()
        XCTAssertNil(afterClose, "…and then ends")
    }

    func testEditsAndCoordinatedAccessShowWhenTheyReturn() throws {
        let folder = try Folder()
        try folder.bundle("a.hpwebsite", title: "Alpha", modified: 2000)
        try folder.bundle("b.hpwebsite", title: "Beta", modified: 1000)
        let unarchived = try ItemCollection(at: folder.path, view: "unarchived")
        defer { unarchived.close() }

        try unarchived.edit(unarchived[0], .setArchived(true), .addTag("read"))
        XCTAssertEqual(unarchived.items.map(\.title), ["Beta"], "the edit shows when it returns")
        let payload = try PropertyListSerialization.propertyList(
            from: Data(contentsOf: URL(fileURLWithPath: folder.path + "/a.hpwebsite/payload.plist")), format: nil) as? [String: Any]
        XCTAssertEqual(payload?["isArchived"] as? Bool, true)
        XCTAssertEqual(payload?["tags"] as? [String], ["read"])
        // A tag with no folder under tag/ is refused here as on the command line.
        for lost in ["../x", "", "a/./b"] {
            XCTAssertThrowsError(try unarchived.edit(unarchived[0], .addTag(lost)), lost)
        }

        let beta = unarchived[0]
        let bytes = try unarchived.read(beta, file: "payload.plist")
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).contains("Beta"))
        try unarchived.write(Array(Folder.plist(title: "Beta 2").utf8), to: beta, file: "payload.plist")
        XCTAssertEqual(unarchived.items.map(\.title), ["Beta 2"])
        try unarchived.update(unarchived[0], file: "payload.plist") { old in
            Array(String(decoding: old, as: UTF8.self).replacingOccurrences(of: "Beta 2", with: "Beta 3").utf8)
        }
        XCTAssertEqual(unarchived.items.map(\.title), ["Beta 3"])

        try unarchived.delete(unarchived[0])
        XCTAssertEqual(unarchived.count, 0)
        // The journal of the edit above stays (`queryfs undo` reads it); nothing else is left.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), [".queryfs-journal", "a.hpwebsite"],
                       "deleted whole, nothing left under a hidden name")
        XCTAssertThrowsError(try unarchived.read(beta)) { error in
            guard case CollectionError.system(_, _, let errno, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(errno, ENOENT)
        }
    }

    /// A holder of the item's lock (SPEC §5, here a second open file
    /// description, as `flock(1)` would be) makes a write wait, then fail
    /// with a typed error; views never show the write.
    func testAHeldLockIsATypedErrorNotAHang() throws {
        let folder = try Folder()
        try folder.bundle("a.hpwebsite", title: "Alpha")
        let collection = try ItemCollection(at: folder.path, lockTimeout: 0.3)
        defer { collection.close() }
        let holder = open(folder.path + "/a.hpwebsite", O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(holder, 0)
        defer { close(holder) }
        XCTAssertEqual(flock(holder, LOCK_EX), 0)
        let start = Date()
        XCTAssertThrowsError(try collection.edit(collection[0], .addTag("x"))) { error in
            guard case CollectionError.lockTimeout(let item, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(item, "a.hpwebsite")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertThrowsError(try collection.delete(collection[0])) { error in
            guard case CollectionError.lockTimeout = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(collection[0].tags, [])
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.path + "/a.hpwebsite"))
    }
}

/// A temporary backing directory of Hipstapaper bundles.
final class Folder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "queryfs-library-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func bundle(_ name: String, title: String, archived: Bool = false, tags: [String] = [], modified: Int? = nil) throws {
        let directory = path + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Written beside and renamed over: the collection never reads half a file.
        let staged = directory + "/.payload.plist.new"
        try Data(Self.plist(title: title, archived: archived, tags: tags).utf8).write(to: URL(fileURLWithPath: staged))
        if let modified {
            let date = Date(timeIntervalSince1970: TimeInterval(modified))
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: staged)
        }
        XCTAssertEqual(rename(staged, directory + "/payload.plist"), 0)
        if let modified {
            let date = Date(timeIntervalSince1970: TimeInterval(modified))
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: directory)
        }
    }

    /// Writes `text` at `relative` (its folders made).
    func write(_ relative: String, _ text: String) throws {
        let file = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }

    static func plist(title: String, archived: Bool = false, tags: [String] = []) -> String {
        HipstapaperPlist.xml(title: title, archived: archived, tags: tags)
    }
}
