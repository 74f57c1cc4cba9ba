import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Folder listings without opendir: the kernel keeps every folder's listing
/// and the mount says when one changed. Listings read in many batches are
/// whole; `bundles/`, folders inside bundles, hidden folders and `query/`
/// show what changed, whoever changed it.
final class FolderListingMountTests: MountTestCase {
    private func names(_ path: String) -> Set<String> {
        Set((RawFiles.list(path) ?? []).map { String(decoding: $0, as: UTF8.self) })
    }

    func testAFolderOfThousandsOfFilesListsWhole() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("big.hpwebsite", title: "Big", mtime: 1_000)
            for number in 0..<5_000 {
                corpus.write(corpus.path + "/big.hpwebsite/file-\(number)-with-a-longer-name-to-fill-batches.txt", [1])
            }
        }
        try fixture.mount()
        let mounted = names(fixture.mounted("bundles/big.hpwebsite"))
        XCTAssertEqual(mounted.count, 5_001)
        XCTAssertEqual(mounted, names(fixture.backed("big.hpwebsite")))
        // Read again from the kernel's copy, and after a change in BACKING.
        XCTAssertEqual(names(fixture.mounted("bundles/big.hpwebsite")), mounted)
        unlink(fixture.backed("big.hpwebsite/file-7-with-a-longer-name-to-fill-batches.txt"))
        XCTAssertTrue(eventually { self.names(self.fixture.mounted("bundles/big.hpwebsite")).count == 5_000 })
    }

    /// Without events too: then nothing passes through the mount, and the
    /// watcher alone tells the kernel that the listing changed.
    func testBundlesMadeAndRemovedInBackingShowInItsListing() throws {
        try bundlesMadeAndRemovedShow(mountOptions: [])
    }

    func testBundlesMadeAndRemovedShowWithoutEvents() throws {
        try bundlesMadeAndRemovedShow(mountOptions: ["--no-events"])
    }

    private func bundlesMadeAndRemovedShow(mountOptions: [String]) throws {
        fixture = MountedFixture()
        try fixture.mount(mountOptions)
        let before = names(fixture.mounted("bundles"))
        XCTAssertEqual(before, names(fixture.backing))
        Corpus(path: fixture.backing).bundle("made.hpwebsite", title: "Made", mtime: 5_000)
        XCTAssertTrue(eventually { self.names(self.fixture.mounted("bundles")).contains("made.hpwebsite") })
        try FileManager.default.removeItem(atPath: fixture.backed("made.hpwebsite"))
        XCTAssertTrue(eventually { self.names(self.fixture.mounted("bundles")) == before })
    }

    func testAHiddenFolderNothingWatchesShowsChangesWithinSeconds() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("one.hpwebsite", title: "One", mtime: 1_000)
            mkdir(corpus.path + "/.git", 0o755)
            corpus.write(corpus.path + "/.git/HEAD", Array("ref: refs/heads/main\n".utf8))
        }
        try fixture.mount()
        XCTAssertEqual(names(fixture.mounted("bundles/.git")), ["HEAD"])
        usleep(20_000)  // a later mtime than the listing the kernel keeps
        Corpus(path: fixture.backing).write(fixture.backed(".git/ORIG_HEAD"), Array("x\n".utf8))
        XCTAssertTrue(eventually(timeout: 5) {
            // As `ls` does: the folder's status first, then its entries.
            _ = RawFiles.lstat(self.fixture.mounted("bundles/.git"))
            return self.names(self.fixture.mounted("bundles/.git")) == ["HEAD", "ORIG_HEAD"]
        })
    }

    func testAQueryFolderMadeByALookupShowsInQuery() throws {
        fixture = MountedFixture()
        try fixture.mount()
        XCTAssertFalse(names(fixture.mounted("query")).contains("tag:swift"))
        XCTAssertNotNil(RawFiles.lstat(fixture.mounted("query/tag:swift")))
        XCTAssertTrue(eventually { self.names(self.fixture.mounted("query")).contains("tag:swift") })
    }
}
