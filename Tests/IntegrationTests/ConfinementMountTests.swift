import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 30: what the daemon does on its own mount (the event replay's
/// unlink, rename, symlink, mkdir, rmdir and utimensat; the link warming's
/// readlink) never leaves the mount. The folder above the mount point is
/// renamed and the mount point's path made a symbolic link to another
/// folder, shaped like the mount (a sandbox): changes in BACKING must leave
/// the sandbox exactly as it was, the mount (at its new place) stays right,
/// and the daemon says once that events stopped.
final class ConfinementMountTests: MountTestCase {
    func testTheReplayNeverFollowsAMountPointPathSteeredElsewhere() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["swift"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", tags: ["swift"], mtime: 4_000)
            corpus.bundle("c.hpwebsite", title: "Gamma", mtime: 3_000)
        }
        let log = fixture.root + "-mount.log"
        defer { unlink(log) }
        try fixture.mount(["--log", log])
        for view in ["by-name", "by-modified", "tag/swift", "bundles"] { _ = RawFiles.list(fixture.mounted(view)) }

        // A sandbox holding what the replay would touch if it went by path.
        let sandbox = makeTemporaryDirectory(prefix: "queryfs-sandbox")
        defer { try? FileManager.default.removeItem(atPath: sandbox) }
        let sandboxFiles = ["bundles/a.hpwebsite/payload.plist", "bundles/victim.txt", "by-name/0001 Alpha.hpwebsite",
                            "by-name/0002 Beta.hpwebsite", "by-modified/0001 Alpha.hpwebsite", "tag/swift/0001 Alpha.hpwebsite"]
        for file in sandboxFiles {
            let path = sandbox + "/" + file
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil), path)
        }
        let before = Self.snapshot(sandbox)
        XCTAssertEqual(before.count, sandboxFiles.count + 6, "\(before.keys.sorted())")

        // The folder above the mount point moves; its old path now leads to the sandbox.
        let moved = fixture.root + "-moved"
        XCTAssertEqual(rename(fixture.root, moved), 0, String(cString: strerror(errno)))
        XCTAssertEqual(mkdir(fixture.root, 0o755), 0)
        XCTAssertEqual(symlink(sandbox, fixture.mountPoint), 0)
        defer {
            // Back in place, so the fixture's teardown unmounts and removes it.
            unlink(fixture.mountPoint)
            rmdir(fixture.root)
            rename(moved, fixture.root)
        }

        // Every kind of replayed change: a file touched in a bundle, a bundle
        // made (mkdir, symlink), one removed (rmdir, unlink), a retitle (rename).
        let backing = moved + "/backing", mountPoint = moved + "/mnt"
        XCTAssertTrue(FileManager.default.createFile(atPath: backing + "/victim.txt", contents: Data("x".utf8)))
        let payload = Corpus.plist(title: "Alpha", archived: false, tags: ["swift"])
        XCTAssertTrue(FileManager.default.createFile(atPath: backing + "/a.hpwebsite/payload.plist", contents: Data(payload.utf8)))
        let staging = moved + "/staging"
        XCTAssertEqual(mkdir(staging, 0o755), 0)
        Corpus(path: staging).write(staging + "/payload.plist", Array(Corpus.plist(title: "Aardvark", archived: false, tags: ["swift"]).utf8))
        XCTAssertEqual(rename(staging, backing + "/n.hpwebsite"), 0)
        try FileManager.default.removeItem(atPath: backing + "/c.hpwebsite")
        Corpus(path: backing).write(backing + "/b.hpwebsite/payload.plist.new", Array(Corpus.plist(title: "Omega Point", archived: false, tags: ["swift"]).utf8))
        XCTAssertEqual(rename(backing + "/b.hpwebsite/payload.plist.new", backing + "/b.hpwebsite/payload.plist"), 0)

        // The mount, at its new place, follows every change.
        let expected = ["0001 Aardvark.hpwebsite", "0002 Alpha.hpwebsite", "0003 Omega Point.hpwebsite", "0004 victim.txt"]
        XCTAssertTrue(eventually { (RawFiles.list(mountPoint + "/by-name") ?? []).map(\.text) == expected },
                      "\((RawFiles.list(mountPoint + "/by-name") ?? []).map(\.text))")
        // The daemon's own signal that the replay found the path steered away.
        XCTAssertTrue(eventually { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("no longer reaches this mount") },
                      (try? String(contentsOfFile: log, encoding: .utf8)) ?? "no log")
        XCTAssertEqual(Self.snapshot(sandbox), before, "the daemon changed a folder outside its mount")
        // A listing with targets (which starts the link warming) still leaves the sandbox alone.
        _ = Program.run(["ls", "-l", mountPoint + "/by-name"])
        XCTAssertEqual(Self.snapshot(sandbox), before)
    }

    /// BACKING's own `.queryfs.toml` is read as BACKING's owner when the
    /// daemon is root: a symbolic link there to a root-only file is refused
    /// (one line, exit 2), never read with root's rights into the views.
    /// A `--config` given by the administrator is read as the daemon.
    func testBackingsOwnConfigurationIsReadWithItsOwnersRights() throws {
        try XCTSkipIf(getuid() != 0, "needs root to own BACKING as another user")
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["swift"], mtime: 5_000)
        }
        let rootOnly = fixture.root + "/root-only.toml"
        XCTAssertTrue(FileManager.default.createFile(atPath: rootOnly, contents: Data("[views]\nsecret = \"tag:swift\"\n".utf8)))
        XCTAssertEqual(chmod(rootOnly, 0o600), 0)
        XCTAssertEqual(Program.run(["chown", "-R", "65534:65534", fixture.backing]).status, 0)
        XCTAssertEqual(symlink(rootOnly, fixture.backed(".queryfs.toml")), 0)

        let views = QueryfsBinary.run(["views", fixture.backing, "--no-index"])
        XCTAssertEqual(views.status, 2)
        XCTAssertFalse(views.stdoutText.contains("secret"), views.stdoutText)
        XCTAssertTrue(views.stderrText.contains("Permission denied"), views.stderrText)
        let mount = QueryfsBinary.run(["mount", fixture.backing, fixture.mountPoint])
        XCTAssertNotEqual(mount.status, 0, "mounted with a configuration its owner may not read")
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
        XCTAssertTrue(mount.stderrText.contains("Permission denied"), mount.stderrText)

        let given = QueryfsBinary.run(["views", fixture.backing, "--no-index", "--config", rootOnly])
        XCTAssertEqual(given.status, 0, given.stderrText)
        XCTAssertTrue(given.stdoutText.contains("secret\t1"), given.stdoutText)
    }

    /// A `.queryfs.toml` link another user planted in a shared BACKING
    /// (1777, root's) is followed with that user's rights, for reading and
    /// for saving a query: a root-only file stays unread, a file they may
    /// not write stays as it was. A dangling link is never replaced by a
    /// file (found from outside: root's daemon read and rewrote both, and
    /// a dangling link became a 0777 file).
    func testAConfigurationLinkIsFollowedWithTheRightsOfWhoPlacedIt() throws {
        try XCTSkipIf(getuid() != 0, "needs root to place a link as another user")
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["swift"], mtime: 5_000)
        }
        XCTAssertEqual(chmod(fixture.backing, 0o1777), 0)
        let link = fixture.backed(".queryfs.toml")
        let rootOnly = fixture.root + "/root-only.toml"
        XCTAssertTrue(FileManager.default.createFile(atPath: rootOnly, contents: Data("[views]\nsecret = \"tag:swift\"\n".utf8)))
        XCTAssertEqual(chmod(rootOnly, 0o600), 0)
        XCTAssertEqual(symlink(rootOnly, link), 0)
        XCTAssertEqual(lchown(link, 65534, 65534), 0)
        let views = QueryfsBinary.run(["views", fixture.backing, "--no-index"])
        XCTAssertEqual(views.status, 2)
        XCTAssertFalse(views.stdoutText.contains("secret"), views.stdoutText)
        XCTAssertTrue(views.stderrText.contains("Permission denied"), views.stderrText)

        let shared = fixture.root + "/shared.toml"
        let sharedText = Data("queries = [\"tag:swift\"]\n".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: shared, contents: sharedText))
        XCTAssertEqual(chmod(shared, 0o644), 0)
        XCTAssertEqual(unlink(link), 0)
        XCTAssertEqual(symlink(shared, link), 0)
        XCTAssertEqual(lchown(link, 65534, 65534), 0)
        try fixture.mount()
        XCTAssertNotNil(RawFiles.list(fixture.mounted("query/tag:swift")), "read with the planter's rights, which may read it")
        XCTAssertNotEqual(mkdir(fixture.mounted("query/tag:rock"), 0o755), 0, "saved through the link as its planter, who may not write it")
        XCTAssertEqual(FileManager.default.contents(atPath: shared), sharedText)
        fixture.unmount()

        XCTAssertEqual(unlink(link), 0)
        XCTAssertEqual(symlink(fixture.root + "/missing.toml", link), 0)
        try fixture.mount()
        XCTAssertNotEqual(mkdir(fixture.mounted("query/tag:rock"), 0o755), 0, "a dangling link is not replaced")
        var status = stat()
        XCTAssertEqual(lstat(link, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFLNK, "still a link")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.root + "/missing.toml"))
    }

    /// Every path below `folder` with its type, mtime and ctime.
    private static func snapshot(_ folder: String) -> [String: String] {
        var result: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return result }
        for case let relative as String in walker {
            var status = stat()
            guard lstat(folder + "/" + relative, &status) == 0 else { continue }
            result[relative] = "\(status.st_mode) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec) \(status.st_ctim.tv_sec).\(status.st_ctim.tv_nsec)"
        }
        return result
    }
}
