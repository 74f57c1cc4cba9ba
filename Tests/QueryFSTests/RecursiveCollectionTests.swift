import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection

/// Items at any depth (`recursive = true`, issue 31): which entries are
/// items, which are folders of items, what their names mean, and the
/// configuration that asks for it.
final class RecursiveCollectionTests: XCTestCase {
    private func makeFolders(_ backing: TemporaryBacking, _ paths: [String]) {
        for path in paths {
            XCTAssertNoThrow(try FileManager.default.createDirectory(atPath: backing.path + "/" + path, withIntermediateDirectories: true))
        }
    }

    func testNestedNamesKeepTheirLastComponentForExtAndStem() {
        let name = ItemName("v1.2/notes/idea.md")
        XCTAssertEqual(name.ext, "md")
        XCTAssertEqual(name.stem, "idea", "an untitled nested note is titled by its own name, not its folders")
        XCTAssertEqual(ItemName("v1.2/README").ext, "", "a dot in a folder is no extension")
        XCTAssertEqual(ItemName("v1.2/README").stem, "README")
        XCTAssertEqual(ItemName("notes/.hidden").ext, "", "a leading dot of the last component is no extension")
        XCTAssertTrue(ItemName("notes/.obsidian/x.md").isHidden)
        XCTAssertTrue(ItemName(".git/x").isHidden)
        XCTAssertFalse(ItemName("notes/x.md").isHidden)
        XCTAssertTrue(ItemName("notes/x.md").isItemPath)
        for bad in ["", "/abs", "notes/", "a//b", "a/./b", "a/../b", "..", "a/.b"] {
            XCTAssertFalse(ItemName(bad).isItemPath, bad)
        }
        XCTAssertFalse(ItemName([UInt8(ascii: "a"), 0]).isItemPath)
    }

    func testListingWalksFoldersAndStopsAtBundles() throws {
        let backing = TemporaryBacking()
        makeFolders(backing, ["notes/2024/deep", "notes/.obsidian", ".git/objects", "archive/b.hpwebsite/images", "empty"])
        backing.write(backing.path + "/top.md", "# Top\n")
        backing.write(backing.path + "/notes/2024/idea.md", "---\ntitle: Idea\n---\n")
        backing.write(backing.path + "/notes/2024/deep/deeper.md", "x\n")
        backing.write(backing.path + "/notes/.obsidian/app.json", "{}")
        backing.write(backing.path + "/notes/.draft.md", "x\n")
        backing.write(backing.path + "/archive/b.hpwebsite/payload.json", #"{"title": "B"}"#)
        let root = try BackingDirectory(path: backing.path, recursive: true)
        let listing = try root.listing()
        XCTAssertEqual(listing.items.map(\.description).sorted(),
                       ["archive/b.hpwebsite", "notes/2024/deep/deeper.md", "notes/2024/idea.md", "top.md"])
        XCTAssertEqual(listing.folders.map(\.description).sorted(), ["archive", "empty", "notes", "notes/2024", "notes/2024/deep"])
        XCTAssertEqual(try root.listing(under: ItemName("notes/2024")).items.map(\.description).sorted(),
                       ["notes/2024/deep/deeper.md", "notes/2024/idea.md"])
        // Not recursive: the entries directly inside, folders being bundles, as before.
        let flat = try BackingDirectory(path: backing.path)
        XCTAssertEqual(try flat.itemNames().map(\.description).sorted(), ["archive", "empty", "notes", "top.md"])
    }

    func testScanReadsNestedItemsAndTellsFoldersFromBundles() throws {
        let backing = TemporaryBacking()
        makeFolders(backing, ["notes/2024", "archive/b.hpwebsite"])
        backing.write(backing.path + "/notes/2024/idea.md", "---\ntitle: Idea\ntags: [swift]\n---\n")
        backing.write(backing.path + "/archive/b.hpwebsite/payload.json", #"{"title": "B", "tags": ["swift"]}"#)
        var sources = FieldSources()
        sources.recursive = true
        let items = try Scanner(sources: sources).scan(directory: backing.path)
        XCTAssertEqual(items.map { "\($0.name) \($0.title) \($0.tags)" }.sorted(),
                       [#"archive/b.hpwebsite B ["swift"]"#, #"notes/2024/idea.md Idea ["swift"]"#])
        let root = try BackingDirectory(path: backing.path, recursive: true)
        guard case .folder = Scanner(sources: sources).scan(named: ItemName("notes/2024"), in: root.fd) else {
            return XCTFail("a folder without a payload is a folder of items")
        }
        guard case .gone = Scanner(sources: sources).scan(named: ItemName("notes/2024/missing.md"), in: root.fd) else {
            return XCTFail("a missing nested item is gone")
        }
    }

    /// A folder deeper than the walk goes is one item, with a problem that
    /// says so (found from outside: it and what it held vanished, unsaid).
    func testAFolderTooDeepToWalkIsOneItemWithAProblem() throws {
        let backing = TemporaryBacking()
        let deep = (1...BackingDirectory.maximumFolderDepth + 1).map(String.init).joined(separator: "/")
        let inside = (1...BackingDirectory.maximumFolderDepth).map(String.init).joined(separator: "/")
        makeFolders(backing, [deep, "a"])
        backing.write(backing.path + "/" + deep + "/deep.md", "x\n")
        backing.write(backing.path + "/" + inside + "/walked.md", "x\n")
        backing.write(backing.path + "/a/shallow.md", "x\n")
        var sources = FieldSources()
        sources.recursive = true
        let items = try Scanner(sources: sources).scan(directory: backing.path).sorted { $0.name < $1.name }
        XCTAssertEqual(items.map(\.name.description), [deep, inside + "/walked.md", "a/shallow.md"].sorted())
        let folder = try XCTUnwrap(items.first { $0.name.description == deep })
        XCTAssertEqual(folder.problems.count, 1)
        XCTAssertTrue(folder.problems.first?.contains("one item") == true, "\(folder.problems)")
        let root = try BackingDirectory(path: backing.path, recursive: true)
        guard case .item = Scanner(sources: sources).scan(named: ItemName(deep), in: root.fd) else {
            return XCTFail("read alone (a change heard), it is the same item")
        }
        // Named on the command line, a path into it names it, as a path into a bundle does.
        XCTAssertEqual(try ItemReference.resolve(deep + "/deep.md", backing: backing.path, recursive: true), ItemName(deep))
    }

    func testAFolderSwappedForALinkLeadsNowhere() throws {
        let backing = TemporaryBacking()
        let outside = TemporaryBacking()
        backing.write(outside.path + "/secret.md", "---\ntitle: Outside\n---\n")
        XCTAssertEqual(symlink(outside.path, backing.path + "/notes"), 0)
        var sources = FieldSources()
        sources.recursive = true
        let root = try BackingDirectory(path: backing.path, recursive: true)
        XCTAssertEqual(try root.itemNames().map(\.description), ["notes"], "a link is an item of its own, never walked")
        guard case .gone = Scanner(sources: sources).scan(named: ItemName("notes/secret.md"), in: root.fd) else {
            return XCTFail("a name through a link is read as gone, never from outside")
        }
    }

    func testConfigurationAsksForIt() throws {
        let configuration = try Configuration(parsing: "recursive = true\n", file: "q.toml", now: .now)
        XCTAssertTrue(configuration.sources.recursive)
        XCTAssertThrowsError(try Configuration(parsing: "recursive = \"yes\"\n", file: "q.toml", now: .now)) { error in
            XCTAssertEqual((error as? ConfigurationError)?.message, "'recursive' is true or false")
        }
    }

    func testAFolderWatchIsPlacedBeneathBackingThroughNoLink() throws {
        let backing = TemporaryBacking()
        let outside = TemporaryBacking()
        makeFolders(backing, ["notes"])
        XCTAssertEqual(symlink(outside.path, backing.path + "/elsewhere"), 0)
        let root = try BackingDirectory(path: backing.path, recursive: true)
        let watcher = try BackingWatcher(rootPath: backing.path, logger: .discarding)
        let before = watcher.watchCount
        XCTAssertTrue(watcher.watchFolder(ItemName("notes"), in: root.fd))
        XCTAssertEqual(watcher.watchCount, before + 1)
        XCTAssertTrue(watcher.watchFolder(ItemName("elsewhere"), in: root.fd), "nothing of the collection to watch")
        XCTAssertEqual(watcher.watchCount, before + 1, "a link is never followed out of BACKING")
        // Events in the watched folder name items inside it.
        backing.write(backing.path + "/notes/new.md", "# New\n")
        var observation = BackingWatcher.Observation()
        usleep(50_000)
        watcher.observe(watcher.readAvailable(), into: &observation)
        XCTAssertTrue(observation.dirtyItems.contains(ItemName("notes/new.md")), "\(observation.dirtyItems)")
    }
}
