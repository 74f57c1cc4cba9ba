import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What `make soak` (issue 30) found, each made small and certain.
final class SoakFindingsMountTests: MountTestCase {
    /// A bundle assembled in a hidden folder and renamed into BACKING (as
    /// sync tools and `Coordinator.replaceBundle` do), then changed in
    /// place: the change shows. With fanotify, the hidden folder's events
    /// placed it outside every item once the burst settled, and the rename
    /// forgot nothing (it was filed under no item), so every later change in
    /// the bundle was dropped for good (a change within the rename's own
    /// burst still showed; one a second later never did, nor did the kernel
    /// drop its cached payload). Found by the soak with `--no-events`; fails
    /// today with fanotify (`--notify auto` as root), passes with inotify.
    func testABundleAssembledInAHiddenFolderFollowsItsLaterChanges() throws {
        for notify in ["auto", "inotify"] {
            fixture = MountedFixture { corpus in
                corpus.bundle("a.hpwebsite", title: "Alpha", mtime: 1_000)
            }
            try fixture.mount(["--notify", notify])
            let corpus = Corpus(path: fixture.backing)
            XCTAssertEqual(mkdir(fixture.backed(".assembling"), 0o755), 0)
            corpus.write(fixture.backed(".assembling/payload.plist"), Array(Corpus.plist(title: "Assembled", archived: false, tags: []).utf8))
            // The burst with the hidden folder's events is over before the rename.
            usleep(500_000)
            XCTAssertEqual(rename(fixture.backed(".assembling"), fixture.backed("new.hpwebsite")), 0)
            // A change a second later, as a program writes it once the bundle is in place.
            sleep(1)
            corpus.write(fixture.backed("new.hpwebsite/payload.plist.tmp"), Array(Corpus.plist(title: "Changed later", archived: false, tags: ["later"]).utf8))
            XCTAssertEqual(rename(fixture.backed("new.hpwebsite/payload.plist.tmp"), fixture.backed("new.hpwebsite/payload.plist")), 0)
            XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 5), [], "\(notify): changed in place")
            fixture.unmount()
            fixture = nil
        }
    }
}
