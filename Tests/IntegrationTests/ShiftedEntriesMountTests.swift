import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 17: when more than 256 entries of a view shift (an item placed
/// above them), a name that only lost its rank stays in the kernel's cache
/// and still leads to its item, while one that now means another item (a
/// neighbour with the same title) is dropped — found off the watcher thread
/// (`NameSweeps`), not by dropping the folder's dentry, which
/// made the kernel prune every cached entry at once.
final class ShiftedEntriesMountTests: MountTestCase {
    func testANameThatNowMeansAnotherItemIsDroppedAfterALargeShift() throws {
        fixture = MountedFixture { corpus in
            for number in 0..<600 {
                // Newest first in by-modified: b300 at rank 301, b301 at rank 302, both titled "Twin".
                let title = number == 300 || number == 301 ? "Twin" : "Item \(number)"
                corpus.bundle("b\(number).hpwebsite", title: title, mtime: 10_000 - number)
            }
        }
        // Without events: the replay renames shifted entries through the
        // mount for file managers, which moves the kernel's names itself.
        try fixture.mount(["--no-events"])
        let view = fixture.mounted("by-modified")
        // Every name handed to the kernel, and the twins' targets read through it.
        XCTAssertEqual(RawFiles.list(view)?.count, 600)
        XCTAssertEqual(RawFiles.linkTarget(view + "/0302 Twin.hpwebsite"), "../bundles/b301.hpwebsite")
        XCTAssertEqual(RawFiles.linkTarget(view + "/0301 Twin.hpwebsite"), "../bundles/b300.hpwebsite")
        XCTAssertEqual(RawFiles.linkTarget(view + "/0002 Item 1.hpwebsite"), "../bundles/b1.hpwebsite")

        // A newest item: all 600 entries move one rank down.
        Corpus(path: fixture.backing).bundle("new.hpwebsite", title: "Newest", mtime: 20_000)
        XCTAssertTrue(eventually { RawFiles.linkTarget(view + "/0001 Newest.hpwebsite") != nil })

        // "0302 Twin" now names b300: the kernel's cached answer (b301) must be gone.
        XCTAssertTrue(eventually(timeout: 3) { RawFiles.linkTarget(view + "/0302 Twin.hpwebsite") == "../bundles/b300.hpwebsite" },
                      "0302 Twin still leads to \(RawFiles.linkTarget(view + "/0302 Twin.hpwebsite") ?? "nothing")")
        XCTAssertEqual(RawFiles.linkTarget(view + "/0303 Twin.hpwebsite"), "../bundles/b301.hpwebsite")
        // A name that only lost its rank leads to its own item still.
        XCTAssertEqual(RawFiles.linkTarget(view + "/0002 Item 1.hpwebsite"), "../bundles/b1.hpwebsite")
        XCTAssertEqual(RawFiles.linkTarget(view + "/0003 Item 1.hpwebsite"), "../bundles/b1.hpwebsite")
        // And the listing is the fresh one.
        XCTAssertEqual(ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "by-modified"),
                       ViewComparison.expected(backing: fixture.backing, view: "by-modified"))
    }

    /// A large shift drops no name at all when no title repeats: the
    /// folder's listing must still be read again. The kernel kept it
    /// (no opendir: FOPEN_CACHE_DIR), and the watcher drops it by dropping
    /// the folder's attributes only (its mtime moved: the kernel starts the
    /// listing over), not its pages, which took 5 ms per million entries on
    /// the watcher thread. Twice, so a second change finds it kept again.
    func testAListingTheKernelKeptIsReadAgainAfterAShiftThatDropsNoName() throws {
        fixture = MountedFixture { corpus in
            for number in 0..<600 { corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", mtime: 10_000 - number) }
        }
        try fixture.mount(["--no-events"])
        let view = fixture.mounted("by-modified")
        for round in 1...2 {
            XCTAssertEqual(RawFiles.list(view)?.count, 599 + round, "round \(round)")
            // A newest item: every entry moves one rank down.
            Corpus(path: fixture.backing).bundle("new\(round).hpwebsite", title: "Newest \(round)", mtime: 20_000 + round)
            XCTAssertTrue(eventually { RawFiles.linkTarget(view + "/0001 Newest \(round).hpwebsite") != nil }, "round \(round)")
            let names = RawFiles.list(view)?.map(\.text).sorted() ?? []
            XCTAssertEqual(names.count, 600 + round, "round \(round)")
            XCTAssertEqual(names.first, "0001 Newest \(round).hpwebsite", "round \(round)")
            XCTAssertTrue(ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "by-modified")
                == ViewComparison.expected(backing: fixture.backing, view: "by-modified"), "round \(round): not a fresh reading")
        }
    }

    /// A name left cached after a large shift stats as gone once its item
    /// is deleted: the item's entry nodes answer ENOENT and the kernel drops
    /// their attributes (a script polling for an entry to go never waits forever).
    func testAShiftedNameOfADeletedItemIsGone() throws {
        fixture = MountedFixture { corpus in
            for number in 0..<600 { corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", mtime: 10_000 - number) }
        }
        try fixture.mount(["--no-events"])
        let view = fixture.mounted("by-modified")
        var status = stat()
        XCTAssertEqual(lstat(view + "/0001 Item 0.hpwebsite", &status), 0)
        // A newest item: 600 entries shift, "0001 Item 0" stays in the kernel's cache (it only lost its rank).
        Corpus(path: fixture.backing).bundle("new.hpwebsite", title: "Newest", mtime: 20_000)
        XCTAssertTrue(eventually { RawFiles.linkTarget(view + "/0001 Newest.hpwebsite") != nil })
        XCTAssertEqual(lstat(view + "/0001 Item 0.hpwebsite", &status), 0, "a shifted name still leads to its item")
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.backed("b0.hpwebsite")))
        XCTAssertTrue(eventually(timeout: 3) { lstat(view + "/0001 Item 0.hpwebsite", &status) != 0 },
                      "the deleted item's old name still stats")
        XCTAssertTrue(eventually(timeout: 3) { lstat(view + "/0002 Item 0.hpwebsite", &status) != 0 })
        XCTAssertEqual(ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "by-modified"),
                       ViewComparison.expected(backing: fixture.backing, view: "by-modified"))

        // A bundle renamed in BACKING is a new item under the same title. Its
        // old name, left cached by a shift, comes back to mean the new item
        // once that holds the rank again: looked up anew, not gone, not the old target.
        XCTAssertEqual(RawFiles.linkTarget(view + "/0002 Item 1.hpwebsite"), "../bundles/b1.hpwebsite")
        Corpus(path: fixture.backing).bundle("newer.hpwebsite", title: "Newer", mtime: 30_000)
        XCTAssertTrue(eventually { RawFiles.linkTarget(view + "/0001 Newer.hpwebsite") != nil })
        XCTAssertEqual(rename(fixture.backed("b1.hpwebsite"), fixture.backed("b1-renamed.hpwebsite")), 0)
        XCTAssertTrue(eventually { RawFiles.linkTarget(view + "/0003 Item 1.hpwebsite") == "../bundles/b1-renamed.hpwebsite" })
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.backed("newer.hpwebsite")))
        XCTAssertTrue(eventually(timeout: 3) { RawFiles.linkTarget(view + "/0002 Item 1.hpwebsite") == "../bundles/b1-renamed.hpwebsite" },
                      "0002 Item 1 leads to \(RawFiles.linkTarget(view + "/0002 Item 1.hpwebsite") ?? "nothing")")
        // A stale name is for acting on the entry (open, readlink, rm, mv), not for a look:
        // a file manager's late stat of it must fail, as on a disk, or it keeps a ghost.
        XCTAssertNotEqual(lstat(view + "/0002 Item 1.hpwebsite", &status), 0)
    }

    /// A lookup of a name no item has is answered at once, whatever the
    /// folder's size (`EntryTitlePresence`), and a stale name whose title
    /// exists still finds its item far from its old rank (`rm -r`'s case).
    func testNamesNoItemHasAreMissingAndStaleNamesStillResolve() throws {
        fixture = MountedFixture { corpus in
            for number in 0..<3000 {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", mtime: 10_000 - number)
            }
        }
        try fixture.mount()
        let view = fixture.mounted("by-modified")
        var status = stat()
        XCTAssertNotEqual(lstat(view + "/0001 No such title.hpwebsite", &status), 0)
        XCTAssertEqual(errno, ENOENT)
        // Item 2999 is at rank 3000; asked for at rank 1, it is found by its title.
        XCTAssertEqual(RawFiles.linkTarget(view + "/0001 Item 2999.hpwebsite"), "../bundles/b2999.hpwebsite")
        // Removed: its title is gone from every view, and so is the name.
        XCTAssertEqual(unlink(fixture.backed("b2999.hpwebsite/payload.plist")), 0)
        XCTAssertEqual(rmdir(fixture.backed("b2999.hpwebsite")), 0)
        XCTAssertTrue(eventually { lstat(view + "/3000 Item 2999.hpwebsite", &status) != 0 })
        XCTAssertNotEqual(lstat(view + "/0001 Item 2999.hpwebsite", &status), 0)
    }
}
