import Foundation
import XCTest
import QueryFSTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// How changes inside bundles are heard: one fanotify mark on BACKING's
/// filesystem when the mount is privileged (no watch per folder), inotify
/// watches otherwise. Either way, random changes made straight in BACKING
/// converge: every view equals a fresh computation.
final class ChangeNotificationMountTests: MountTestCase {
    private static let bundleCount = 120

    private func makeFixture() {
        fixture = MountedFixture { corpus in
            for number in 0..<Self.bundleCount {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", archived: number % 5 == 0,
                              tags: number % 3 == 0 ? ["three"] : [], mtime: 1_000 + number)
            }
        }
    }

    private func status(at mountPoint: String) throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: mountPoint + "/.queryfs/status"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A seeded run of the changes people and sync tools make, all straight
    /// in BACKING: payloads rewritten in place (only the bundle's own folder
    /// hears that) or replaced by rename, nested folders made, filled and
    /// moved between bundles, bundles made, deleted and renamed — and
    /// edited in place right after a rename, when a folder's old path is
    /// the one last seen.
    private func randomChanges(backing: String, seed: UInt64, count: Int) {
        var random = SplitMix64(seed: seed)
        let corpus = Corpus(path: backing)
        var names = (0..<Self.bundleCount).map { "b\($0).hpwebsite" }
        var made = 0
        func payload(_ name: String) -> String { backing + "/" + name + "/payload.plist" }
        func plist() -> [UInt8] {
            Array(Corpus.plist(title: "Changed \(random.next() % 1000)", archived: random.next() % 2 == 0,
                               tags: random.next() % 2 == 0 ? ["three", "new\(random.next() % 4)"] : []).utf8)
        }
        for _ in 0..<count {
            guard !names.isEmpty else { break }
            let index = Int(random.next() % UInt64(names.count))
            let name = names[index]
            switch random.next() % 7 {
            case 0:  // in place: O_TRUNC and write, no rename
                corpus.write(payload(name), plist())
            case 1:  // replaced: a sibling renamed over the payload
                corpus.write(payload(name) + ".tmp", plist())
                rename(payload(name) + ".tmp", payload(name))
            case 2:
                made += 1
                corpus.bundle("made\(made).hpwebsite", title: "Made \(made)", tags: ["fresh"], mtime: 5_000 + made)
                names.append("made\(made).hpwebsite")
            case 3:
                try? FileManager.default.removeItem(atPath: backing + "/" + name)
                names.remove(at: index)
            case 4:  // renamed, then edited in place under its new name
                let new = "r\(random.next() % 100_000)-" + name
                rename(backing + "/" + name, backing + "/" + new)
                names[index] = new
                corpus.write(payload(new), plist())
            case 5:  // a nested folder with a file, then a payload edit in place
                mkdir(backing + "/" + name + "/nested", 0o755)
                corpus.write(backing + "/" + name + "/nested/note.txt", Array("note".utf8))
                corpus.write(payload(name), plist())
            default:  // a nested folder moved to another bundle, then a file written inside it
                let other = names[Int(random.next() % UInt64(names.count))]
                mkdir(backing + "/" + name + "/moving", 0o755)
                if other != name, rename(backing + "/" + name + "/moving", backing + "/" + other + "/moved\(random.next() % 1000)") == 0 {
                    corpus.write(payload(other), plist())
                }
            }
        }
    }

    func testFanotifyFollowsEveryBundleWithOneMark() throws {
        try XCTSkipIf(getuid() != 0, "a filesystem mark needs CAP_SYS_ADMIN; CI runs as root")
        makeFixture()
        try fixture.mount(["--notify", "fanotify"])
        let status = try status(at: fixture.mountPoint)
        XCTAssertEqual(status["changeNotification"] as? String, "fanotify")
        // BACKING's own watch, and its folder's for the configuration: none per bundle.
        XCTAssertLessThanOrEqual(try XCTUnwrap(status["inotifyWatches"] as? Int), 2)
        randomChanges(backing: fixture.backing, seed: 17, count: 150)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [])
    }

    /// The mark remembers which item each folder lies in. A bundle renamed
    /// forgets its folders and no other's; a bundle deleted after its
    /// payload is never looked up by its gone folder, and a change in
    /// another bundle in the same burst still counts. Each step waits until
    /// the views settle, so each is a burst of its own.
    func testFanotifyPlacesFoldersAcrossRenamesAndDeletes() throws {
        try XCTSkipIf(getuid() != 0, "a filesystem mark needs CAP_SYS_ADMIN; CI runs as root")
        makeFixture()
        try fixture.mount(["--notify", "fanotify"])
        let corpus = Corpus(path: fixture.backing)
        func edit(_ name: String, title: String) {
            corpus.write(fixture.backed(name + "/payload.plist"), Array(Corpus.plist(title: title, archived: false, tags: []).utf8))
        }
        // Settled, and then past the poller's second look at items read within a
        // clock tick of their change (it would find the next edit by itself).
        func settled() -> [String] {
            defer { usleep(200_000) }
            return ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10)
        }
        // Both bundles' folders placed (and remembered).
        edit("b1.hpwebsite", title: "First edit")
        edit("b2.hpwebsite", title: "Second bundle")
        XCTAssertEqual(settled(), [])
        // Renamed: an edit in place later is b1's under its new name.
        XCTAssertEqual(rename(fixture.backed("b1.hpwebsite"), fixture.backed("renamed.hpwebsite")), 0)
        XCTAssertEqual(settled(), [])
        edit("renamed.hpwebsite", title: "Edited after the rename")
        XCTAssertEqual(settled(), [])
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: fixture.mounted("by-name"))
            .contains { $0.contains("Edited after the rename") })
        // b2, remembered, still placed after b1's rename.
        edit("b2.hpwebsite", title: "Second bundle again")
        XCTAssertEqual(settled(), [])
        // A payload removed, then its bundle, with another bundle edited in the same burst.
        XCTAssertEqual(unlink(fixture.backed("b3.hpwebsite/payload.plist")), 0)
        XCTAssertEqual(rmdir(fixture.backed("b3.hpwebsite")), 0)
        edit("b4.hpwebsite", title: "Edited beside a deletion")
        XCTAssertEqual(settled(), [])
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: fixture.mounted("by-name"))
            .contains { $0.contains("Edited beside a deletion") })
    }

    func testInotifyCanBeAskedFor() throws {
        makeFixture()
        try fixture.mount(["--notify", "inotify"])
        let status = try status(at: fixture.mountPoint)
        XCTAssertEqual(status["changeNotification"] as? String, "inotify")
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(status["inotifyWatches"] as? Int), Self.bundleCount + 1)
        randomChanges(backing: fixture.backing, seed: 23, count: 150)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [])
    }

    func testFanotifyAskedForButRefusedIsOneLine() throws {
        try XCTSkipIf(getuid() != 0, "needs root to switch to an unprivileged user")
        makeFixture()
        let queryfs = try ReachableCopies(for: self).queryfs()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-fanotify")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        chmod(scratch, 0o777)
        XCTAssertEqual(chown(fixture.mountPoint, 65534, 65534), 0)
        let script = "mount -t tmpfs tmpfs /dev && mknod -m 0666 /dev/fuse c 10 229 && "
            + "exec setpriv --reuid=65534 --regid=65534 --clear-groups -- \"$0\" mount \"$1\" \"$2\" --notify fanotify"
        let result = Program.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                  queryfs, fixture.backing, fixture.mountPoint])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.contains("fanotify"), result.stderrText)
    }

    /// An unprivileged mount (user 65534, in a mount namespace of its own
    /// with a /dev/fuse it may open) falls back to inotify, says why, and
    /// converges. The test reads the mount through the namespace's root
    /// (/proc/PID/root) while the mount stays up; `allow_root` lets it, with
    /// `user_allow_other` in a fuse.conf bound over the real one in that
    /// namespace only.
    func testAnUnprivilegedMountUsesInotifyAndConverges() throws {
        try XCTSkipIf(getuid() != 0, "needs root to make the private /dev/fuse and switch users")
        makeFixture()
        let queryfs = try ReachableCopies(for: self).queryfs()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-inotify-user")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let mount = UnprivilegedMount(queryfs: queryfs, backing: fixture.backing, mountPoint: fixture.mountPoint,
                                      option: "allow_root", scratch: scratch)
        defer { mount.stop() }
        guard mount.waitUntilMounted() else { return }
        let shell = mount.shell
        let mountPoint = "/proc/\(shell)/root" + fixture.mountPoint
        let status = try status(at: mountPoint)
        XCTAssertEqual(status["changeNotification"] as? String, "inotify")
        XCTAssertTrue((status["changesFollowedBy"] as? String)?.contains("CAP_SYS_ADMIN") == true, "\(status)")
        randomChanges(backing: fixture.backing, seed: 29, count: 150)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: mountPoint, timeout: 10), [])
    }
}

