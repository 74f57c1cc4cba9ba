import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What `make soak` (issue 30) found, each made small and certain.
final class SoakFindingsMountTests: MountTestCase {
    /// A bundle assembled in a hidden folder and renamed into BACKING (as
    /// sync tools and `Coordinator.replaceBundle` do), then changed in
    /// place: the change shows, in the views and through `bundles/`. Found
    /// by the soak with `--no-events`. Fails today with fanotify (`--notify
    /// auto` as root); passes with inotify.
    ///
    /// With fanotify the hidden folder's events are placed once their burst
    /// is over: the folder is remembered as outside every item (its name is
    /// hidden), the rename forgets only folders remembered under the name
    /// `.assembling` (this one is under no item), so every later change in
    /// the bundle is dropped for good. Any folder moved or deleted anywhere
    /// on BACKING's filesystem in between makes the watcher forget every
    /// folder and hides the fault (each `Program.run` deletes its scratch
    /// folder in /tmp): here nothing runs between the placing and the change.
    /// (A change in the rename's own burst shows: the rename marks the item.)
    func testABundleAssembledInAHiddenFolderFollowsItsLaterChanges() throws {
        for notify in ["auto", "inotify"] {
            fixture = MountedFixture { corpus in
                corpus.bundle("a.hpwebsite", title: "Alpha", mtime: 1_000)
            }
            try fixture.mount(["--notify", notify])
            let corpus = Corpus(path: fixture.backing)
            XCTAssertEqual(mkdir(fixture.backed(".assembling"), 0o755), 0)
            corpus.write(fixture.backed(".assembling/payload.plist"), Array(Corpus.plist(title: "Assembled", archived: false, tags: []).utf8))
            // The burst with the hidden folder's events is over (5 ms of quiet) before the rename.
            usleep(100_000)
            XCTAssertEqual(rename(fixture.backed(".assembling"), fixture.backed("new.hpwebsite")), 0)
            // The rename shows (its burst is over), then the change: in a burst of its own.
            XCTAssertTrue(eventually(timeout: 5) { RawFiles.lstat(self.fixture.mounted("by-name/0002 Assembled.hpwebsite")) != nil }, "\(notify): renamed in")
            usleep(20_000)
            corpus.write(fixture.backed("new.hpwebsite/payload.plist.tmp"), Array(Corpus.plist(title: "Changed later", archived: false, tags: ["later"]).utf8))
            XCTAssertEqual(rename(fixture.backed("new.hpwebsite/payload.plist.tmp"), fixture.backed("new.hpwebsite/payload.plist")), 0)
            XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 5), [], "\(notify): changed in place")
            let payload = "new.hpwebsite/payload.plist"
            XCTAssertTrue(eventually(timeout: 5) { RawFiles.read(self.fixture.mounted("bundles/" + payload)) == RawFiles.read(self.fixture.backed(payload)) },
                          "\(notify): bundles/ still serves the replaced payload")
            fixture.unmount()
            fixture = nil
        }
    }
}
