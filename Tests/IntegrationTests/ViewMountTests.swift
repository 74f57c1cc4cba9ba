import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The read-only side of a real mount (SPEC §3): the root, every view
/// folder, and each entry's name, target, mtime and what it leads to.
final class ViewMountTests: XCTestCase {
    private var fixture: MountedFixture!

    override func setUpWithError() throws {
        fixture = MountedFixture()
        try fixture.mount()
    }

    override func tearDown() {
        fixture?.unmount()
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "left mounted")
        fixture = nil
    }

    /// `queryfs views BACKING`: every view path with its count.
    private func viewPaths() -> [(path: String, count: Int)] {
        let result = QueryfsBinary.run(["views", fixture.backing])
        XCTAssertEqual(result.status, 0, result.stderrText)
        return result.stdoutText.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t")
            return (String(fields[0]), Int(fields.last!) ?? -1)
        }
    }

    func testRootListsBundlesViewsTagAndQuery() {
        let names = Set(RawFiles.list(fixture.mountPoint)!.map(\.text))
        // SPEC §3's folders, query/ (issue 6: ad-hoc queries) and .queryfs/ (issue 16: the daemon's status).
        XCTAssertEqual(names, ["bundles", "by-name", "by-modified", "by-created", "unarchived", "archived", "conflicts", "tag", "query", ".queryfs"])
        for name in names {
            XCTAssertEqual((RawFiles.lstat(fixture.mounted(name))?.st_mode ?? 0) & S_IFMT, S_IFDIR, "\(name) is a folder")
        }
        let tags = Set(RawFiles.list(fixture.mounted("tag"))!.map(\.text))
        XCTAssertEqual(tags, ["rock", "swift", "bytes", "five"], "rock/metal is nested: tag/rock/metal/")
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/rock/metal"))?.count, 1)
    }

    /// Each view as readdir returns it equals `queryfs ls BACKING VIEW`, in order, byte for byte.
    func testEveryViewEqualsQueryfsLs() {
        let views = viewPaths()
        XCTAssertGreaterThanOrEqual(views.count, 9)
        for (path, count) in views {
            let expected = QueryfsBinary.run(["ls", fixture.backing, path])
            XCTAssertEqual(expected.status, 0, expected.stderrText)
            let expectedNames = expected.stdout.split(separator: 0x0A).map(Array.init)
            // A tag's folder lists its nested tags' folders after its entries: those are not entries.
            guard let listed = RawFiles.list(fixture.mounted(path))?.filter({ name in
                (RawFiles.lstat(fixture.mounted(path) + "/" + name.text)?.st_mode ?? 0) & S_IFMT != S_IFDIR
            }) else { return XCTFail("cannot list \(path): \(errno)") }
            XCTAssertEqual(listed.count, count, path)
            XCTAssertEqual(listed.map(\.text), expectedNames.map(\.text), path)
            XCTAssertEqual(listed, expectedNames, "\(path): names differ bytewise")
        }
    }

    /// Targets equal `queryfs ls --long`, resolve to the right bundle, and
    /// lstat gives a symlink of the target's length with the item's modified time.
    func testEntriesAreSymlinksToTheirItems() {
        for (path, _) in viewPaths() {
            let long = QueryfsBinary.run(["ls", "--long", fixture.backing, path])
            for line in long.stdout.split(separator: 0x0A) {
                let fields = line.split(separator: 0x09, maxSplits: 1).map(Array.init)
                let (name, target) = (fields[0], fields[1])
                let entry = Array((fixture.mounted(path) + "/").utf8) + name
                XCTAssertEqual(RawFiles.readlink(entry), target, "\(path)/\(name.text)")
                guard let status = RawFiles.lstat(entry) else { XCTFail("lstat \(path)/\(name.text)"); continue }
                XCTAssertEqual(status.st_mode & S_IFMT, S_IFLNK)
                XCTAssertEqual(Int(status.st_size), target.count)
                let itemName = Array(target.split(separator: 0x2F).last!)
                let modified = RawFiles.latestModification(Array((fixture.backing + "/").utf8) + itemName)
                XCTAssertEqual(status.st_mtim.tv_sec, modified.tv_sec, "mtime of \(path)/\(name.text)")
                XCTAssertEqual(status.st_mtim.tv_nsec, modified.tv_nsec, "mtime of \(path)/\(name.text)")
                // Followed: the item itself, in bundles/.
                let followed = RawFiles.stat(entry)
                let backingItem = RawFiles.stat(Array((fixture.backing + "/").utf8) + itemName)
                XCTAssertNotNil(followed, "\(path)/\(name.text) does not resolve")
                XCTAssertEqual(followed?.st_mode, backingItem?.st_mode)
                XCTAssertEqual(followed?.st_size, backingItem?.st_size)
                XCTAssertEqual(followed?.st_mtim.tv_sec, backingItem?.st_mtim.tv_sec)
            }
        }
    }

    func testFilesReadThroughAViewEqualTheBackingBytes() throws {
        var checked = 0
        for name in RawFiles.list(fixture.mounted("by-modified"))! {
            let entry = Array((fixture.mounted("by-modified") + "/").utf8) + name
            let itemName = Array(RawFiles.readlink(entry)!.split(separator: 0x2F).last!)
            let backingItem = Array((fixture.backing + "/").utf8) + itemName
            if RawFiles.lstat(backingItem)!.st_mode & S_IFMT == S_IFDIR {
                let payload = Array("/payload.plist".utf8)
                XCTAssertEqual(RawFiles.read(entry + payload), RawFiles.read(backingItem + payload), name.text)
                XCTAssertEqual(RawFiles.list(entry).map { Set($0) }, RawFiles.list(backingItem).map { Set($0) })
            } else {
                XCTAssertEqual(RawFiles.read(entry), RawFiles.read(backingItem), name.text)
            }
            checked += 1
        }
        XCTAssertEqual(checked, 156)
    }

    /// A name that is not UTF-8 survives byte for byte: in bundles/, in view targets, and followed.
    func testNonUTF8NamesSurvive() {
        let name: [UInt8] = Array("caf".utf8) + [0xE9, 0x2D, 0xFF] + Array(".hpwebsite".utf8)
        XCTAssertTrue(RawFiles.list(fixture.mounted("bundles"))!.contains(name))
        let tagView = fixture.mounted("tag/bytes")
        let entries = RawFiles.list(tagView)!
        XCTAssertEqual(entries.map(\.text), ["0001 Caf\u{E9} bytes.hpwebsite"])
        let entry = Array((tagView + "/").utf8) + entries[0]
        XCTAssertEqual(RawFiles.readlink(entry), Array("../../bundles/".utf8) + name)
        XCTAssertEqual(RawFiles.read(entry + Array("/payload.plist".utf8)),
                       RawFiles.read(Array((fixture.backing + "/").utf8) + name + Array("/payload.plist".utf8)))
    }

    /// Views change only by edits (ViewEditMountTests); anything else is refused.
    func testViewsTakeNothingButEdits() {
        let view = fixture.mounted("by-name")
        let first = RawFiles.list(view)!.first!.text
        XCTAssertEqual(RawFiles.write(view + "/new-file", [1, 2, 3]), EPERM, "created a file in a view")
        XCTAssertNotEqual(unlink(view + "/" + first), 0, "unlinked an entry of by-name")
        XCTAssertEqual(errno, EPERM)
        XCTAssertNotEqual(mkdir(view + "/folder", 0o755), 0, "made a folder in a view")
        XCTAssertNotEqual(mkdir(fixture.mounted("new-view"), 0o755), 0, "made a folder at the root")
        XCTAssertNotEqual(rmdir(fixture.mounted("by-name")), 0, "removed a view")
        XCTAssertNotEqual(chmod(view, 0o777), 0, "chmod of a view")
        XCTAssertNotNil(RawFiles.lstat(view + "/" + first))
    }

    func testInodeNumbersAreStable() {
        let entry = fixture.mounted("by-name") + "/" + RawFiles.list(fixture.mounted("by-name"))!.first!.text
        let first = RawFiles.lstat(entry)!.st_ino
        _ = RawFiles.list(fixture.mounted("by-name"))
        XCTAssertEqual(RawFiles.lstat(entry)!.st_ino, first)
        let view = RawFiles.lstat(fixture.mounted("by-created"))!.st_ino
        XCTAssertEqual(RawFiles.lstat(fixture.mounted("by-created"))!.st_ino, view)
    }

    func testAbsoluteLinks() throws {
        fixture.unmount()
        try fixture.mount(["--absolute-links"])
        let view = fixture.mounted("by-name")
        let first = RawFiles.list(view)!.first!
        let target = RawFiles.readlink(Array((view + "/").utf8) + first)!
        XCTAssertTrue(target.text.hasPrefix(fixture.mountPoint + "/bundles/"), target.text)
        let long = QueryfsBinary.run(["ls", "--long", "--absolute-links", fixture.mountPoint, fixture.backing, "by-name"])
        XCTAssertEqual(long.status, 0, long.stderrText)
        let expected = long.stdout.split(separator: 0x0A).first?.split(separator: 0x09).last.map(Array.init)
        XCTAssertEqual(target, expected)
    }
}
