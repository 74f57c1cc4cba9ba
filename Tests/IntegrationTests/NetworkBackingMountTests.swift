import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A backing directory on a network-style filesystem: bindfs (FUSE) over a
/// plain folder, as an NFS or sshfs mount would be. Changes made in the
/// plain folder — as another machine would make them — raise no
/// notification on the bindfs path, so the mount finds them by polling:
/// within the poll interval plus one batch (and bindfs's attribute cache).
/// Views are compared with a fresh reading of BACKING itself (through
/// bindfs, which has no birth times: `created` is the mtime there).
final class NetworkBackingMountTests: MountTestCase {
    /// Where "the other machine" writes: the folder bindfs shows as BACKING.
    private var underneath: String { fixture.root + "/underneath" }
    private var bound = false

    private func makeFixture(bundles: Int = 40) throws {
        fixture = MountedFixture { corpus in
            for number in 0..<bundles {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", archived: number % 4 == 0,
                              tags: number % 3 == 0 ? ["three"] : [], mtime: 1_000 + number)
            }
        }
        XCTAssertEqual(rename(fixture.backing, underneath), 0)
        XCTAssertEqual(mkdir(fixture.backing, 0o755), 0)
        let bind = Program.run(["bindfs", "--no-allow-other", underneath, fixture.backing])
        guard bind.status == 0 else { return XCTFail("bindfs: \(bind.stderrText) (install bindfs: scripts/install-deps.sh)") }
        bound = true
    }

    override func tearDown() {
        // The queryfs mount first (MountTestCase), then bindfs under it, whatever happened.
        fixture?.unmount()
        if bound, let fixture {
            // Whether each step worked is read from the mount table, asserted below.
            _ = Program.run(["fusermount3", "-u", fixture.backing])
            if MountTable.isMounted(fixture.backing) { _ = Program.run(["fusermount3", "-u", "-z", fixture.backing]) }
            XCTAssertFalse(MountTable.isMounted(fixture.backing), "bindfs left mounted")
        }
        bound = false
        super.tearDown()
    }

    private func status() throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// What another machine does to the list: made, deleted, renamed,
    /// saved by rename, edited in place, a file added inside a bundle.
    private func changeUnderneath(round: Int) {
        let corpus = Corpus(path: underneath)
        corpus.bundle("new\(round).hpwebsite", title: "Made elsewhere \(round)", tags: ["elsewhere"], mtime: 9_000 + round)
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: underneath + "/b\(round).hpwebsite"))
        rename(underneath + "/b\(round + 10).hpwebsite", underneath + "/moved\(round).hpwebsite")
        let saved = underneath + "/b\(round + 20).hpwebsite/payload.plist"
        corpus.write(saved + ".tmp", Array(Corpus.plist(title: "Saved elsewhere \(round)", archived: true, tags: ["three"]).utf8))
        rename(saved + ".tmp", saved)
        corpus.write(underneath + "/b\(round + 30).hpwebsite/payload.plist",
                     Array(Corpus.plist(title: "Edited in place \(round)", archived: false, tags: ["elsewhere"]).utf8))
    }

    func testChangesMadeUnderneathShowByPolling() throws {
        try makeFixture()
        try fixture.mount(["--poll", "1", "--log", fixture.root + "/log"])
        let status = try status()
        XCTAssertTrue((status["backingFilesystem"] as? String)?.hasPrefix("fuse") == true, "\(status)")
        XCTAssertEqual(status["pollingSeconds"] as? Double, 1)
        XCTAssertEqual(status["itemLocks"] as? String, "this machine only")
        XCTAssertEqual((status["warnings"] as? [String])?.count, 1, "\(status)")
        XCTAssertTrue((status["changesFollowedBy"] as? String)?.contains("notifications hear only this machine") == true, "\(status)")
        for round in 0..<3 {
            changeUnderneath(round: round)
            // A poll interval or two, a batch, and the kernel's one-second caches of bindfs: within 10 s.
            XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [], "round \(round)")
        }
        // A file added to a bundle, then rewritten in place with a later
        // mtime: only the full round (every 6th: 6 s here) sees those.
        let image = underneath + "/b5.hpwebsite/image.jpg"
        Corpus(path: underneath).write(image, Array(repeating: 1, count: 1_000))
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 12), [])
        Corpus(path: underneath).write(image, Array(repeating: 2, count: 50_000))
        Corpus(path: underneath).setMTime(image, 20_000)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 12), [])
    }

    func testNetworkFilesystemsArePolledByDefault() throws {
        try makeFixture(bundles: 5)
        try fixture.mount()
        XCTAssertEqual(try status()["pollingSeconds"] as? Double, 5)
        fixture.unmount()
        try fixture.mount(["--poll", "0"])
        XCTAssertTrue(try status()["pollingSeconds"] is NSNull)
    }

    /// A sync tool's burst (each payload written to a hidden temporary file,
    /// then renamed over) and a git checkout of many commits at once.
    func testSyncBurstsAndCheckoutsConverge() throws {
        try makeFixture(bundles: 30)
        XCTAssertEqual(Program.run(["git", "-C", underneath, "init", "-q"]).status, 0)
        let commit = { (message: String) in
            XCTAssertEqual(Program.run(["git", "-C", self.underneath, "add", "-A"]).status, 0)
            XCTAssertEqual(Program.run(["git", "-C", self.underneath, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message]).status, 0)
        }
        commit("first")
        try fixture.mount(["--poll", "1"])
        let corpus = Corpus(path: underneath)
        for number in 0..<30 {
            let payload = underneath + "/b\(number).hpwebsite/payload.plist"
            let temporary = underneath + "/b\(number).hpwebsite/.syncthing.payload.plist.tmp"
            corpus.write(temporary, Array(Corpus.plist(title: "Synced \(number)", archived: number % 2 == 0, tags: ["synced"]).utf8))
            rename(temporary, payload)
        }
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 8), [])
        commit("synced")
        for number in 0..<10 { corpus.bundle("later\(number).hpwebsite", title: "Later \(number)", tags: ["later"], mtime: 30_000 + number) }
        commit("later")
        // Back to the first commit in one checkout: 30 payloads and 10 bundles change at once.
        XCTAssertEqual(Program.run(["git", "-C", underneath, "checkout", "-q", "HEAD~2"]).status, 0)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 8), [])
        XCTAssertEqual(Program.run(["git", "-C", underneath, "checkout", "-q", "-"]).status, 0)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 8), [])
    }
}
