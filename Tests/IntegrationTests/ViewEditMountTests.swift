import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Edits through views (issue 14, SPEC §6), through a real mount: `ln -s`
/// joins, `rm` leaves, `mv` moves and retitles, `mkdir`/`rmdir`/`mv` in
/// `tag/` make, remove and rename tags. Payloads are read back with
/// Foundation's own parsers; every view shows each change as soon as the
/// command returns; refusals have their errno; everything can be undone.
final class ViewEditMountTests: MountTestCase {
    private static let jsonPayload = """
        {
          "title": "JSON item",
          "archived": false,
          "tags": [
            "t"
          ],
          "kind": "note"
        }

        """

    private func mount(_ extra: [String] = []) throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["t"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", archived: true, tags: ["t", "u"], mtime: 4_000)
            corpus.bundle("c.hpwebsite", title: "Gamma", mtime: 3_000)
            mkdir(corpus.path + "/d.hpwebsite", 0o755)
            corpus.write(corpus.path + "/d.hpwebsite/payload.json", Array(Self.jsonPayload.utf8))
            corpus.setMTime(corpus.path + "/d.hpwebsite/payload.json", 2_000)
            corpus.file(Array("notes.txt".utf8), contents: Array("plain\n".utf8), mtime: 1_000)
            corpus.write(corpus.path + "/.queryfs.toml", Array("""
                [views]
                reading = "tag:reading -archived"
                either = "tag:a or tag:b"
                articles = "payload.kind=article"
                """.utf8))
        }
        try fixture.mount(["--log", fixture.root + "/mount.log"] + extra)
    }

    /// The entry of `item` in a view folder.
    private func entry(_ view: String, _ item: String) -> String? {
        (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).first { RawFiles.linkTarget(fixture.mounted("\(view)/\($0)"))?.hasSuffix("/" + item) == true }
    }

    /// Whether another holds the item lock of `path` (SPEC §5): a probe with its own open file description.
    private static func isLocked(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_SH | LOCK_NB) != 0 && Glibc.errno == EWOULDBLOCK
    }

    private func plist(_ item: String) throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.backed("\(item)/payload.plist")))
        return try XCTUnwrap(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    private func json(_ item: String) throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.backed("\(item)/payload.json")))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Runs a program; its status.
    @discardableResult
    private func run(_ arguments: [String]) -> Int32 { Program.run(arguments).status }

    /// Every view equals a fresh computation now — no waiting.
    private func assertEveryViewIsCurrent(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [], what, file: file, line: line)
    }

    private func errno(of call: () -> Int32) -> Int32 {
        call() == 0 ? 0 : Glibc.errno
    }

    // MARK: Join

    func testLinkingAnItemIntoAViewJoinsIt() throws {
        try mount()
        // The last: an entry of by-name/ copied as it is into tag/t/ (copy and paste, `cp -a`), one level short.
        let targets = ["../../bundles/c.hpwebsite", fixture.mounted("bundles/c.hpwebsite"), fixture.backed("c.hpwebsite"), "../bundles/c.hpwebsite"]
        for (number, target) in targets.enumerated() {
            XCTAssertEqual(errno { symlink(target, fixture.mounted("tag/t/any name \(number)")) }, 0, target)
            XCTAssertTrue(try plist("c.hpwebsite")["tags"] as? [String] == ["t"], target)
            assertEveryViewIsCurrent("after ln -s \(target)")
            XCTAssertNotNil(entry("tag/t", "c.hpwebsite"))
            XCTAssertNil(RawFiles.lstat(fixture.mounted("tag/t/any name \(number)")), "the entry shows under its computed name only")
            // Back out for the next form.
            XCTAssertEqual(errno { unlink(fixture.mounted("tag/t/" + entry("tag/t", "c.hpwebsite")!)) }, 0)
        }
        // Another view's entry as the target; a configured view of two terms; archived.
        let gamma = try XCTUnwrap(entry("by-name", "c.hpwebsite"))
        XCTAssertEqual(errno { symlink("../by-name/" + gamma, fixture.mounted("reading/x")) }, 0)
        XCTAssertEqual(try plist("c.hpwebsite")["tags"] as? [String], ["reading"])
        XCTAssertEqual(try plist("c.hpwebsite")["isArchived"] as? Bool, false)
        XCTAssertEqual(errno { symlink("../bundles/c.hpwebsite", fixture.mounted("archived/x")) }, 0)
        XCTAssertEqual(try plist("c.hpwebsite")["isArchived"] as? Bool, true)
        XCTAssertEqual(try plist("c.hpwebsite")["webTitle"] as? String, "Gamma", "other keys untouched")
        // A query folder: its terms set, a payload value among them, in the JSON item.
        XCTAssertEqual(errno { symlink("../../bundles/d.hpwebsite", fixture.mounted("query/tag:q payload.kind=article/x")) }, 0)
        XCTAssertEqual(try json("d.hpwebsite")["kind"] as? String, "article")
        XCTAssertEqual(try json("d.hpwebsite")["tags"] as? [String], ["q", "t"])
        XCTAssertNotNil(entry("articles", "d.hpwebsite"))
        assertEveryViewIsCurrent("after the joins")
        // Refusals.
        XCTAssertEqual(errno { symlink("../bundles/c.hpwebsite", fixture.mounted("by-name/x")) }, EEXIST)
        XCTAssertEqual(errno { symlink("../bundles/c.hpwebsite", fixture.mounted("either/x")) }, EPERM)
        XCTAssertEqual(errno { symlink("../bundles/nothing", fixture.mounted("archived/x")) }, ENOENT)
        XCTAssertEqual(errno { symlink("/etc/passwd", fixture.mounted("archived/x")) }, ENOENT)
        // A path that leaves an item with `..` leads to no item (found from outside: it tagged the item).
        XCTAssertEqual(errno { symlink("../bundles/c.hpwebsite/../../outside", fixture.mounted("archived/x")) }, ENOENT)
        XCTAssertEqual(errno { symlink(fixture.backed("notes.txt/../../outside"), fixture.mounted("archived/x")) }, ENOENT)
        XCTAssertNil(entry("archived", "notes.txt"))
        let log = (try? String(contentsOfFile: fixture.root + "/mount.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains("either cannot be joined by an edit"), log)
    }

    // MARK: Leave

    func testRemovingAnEntryLeavesTheView() throws {
        try mount()
        XCTAssertEqual(errno { unlink(fixture.mounted("tag/u/" + entry("tag/u", "b.hpwebsite")!)) }, 0)
        XCTAssertEqual(try plist("b.hpwebsite")["tags"] as? [String], ["t"])
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/u"))?.count, 0, "emptied by rm, it stays until rmdir (so rm -r works)")
        XCTAssertEqual(errno { rmdir(fixture.mounted("tag/u")) }, 0)
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/u")))
        assertEveryViewIsCurrent("rm in tag/u")
        XCTAssertEqual(errno { unlink(fixture.mounted("unarchived/" + entry("unarchived", "a.hpwebsite")!)) }, 0)
        XCTAssertEqual(try plist("a.hpwebsite")["isArchived"] as? Bool, true, "done reading")
        XCTAssertEqual(errno { unlink(fixture.mounted("archived/" + entry("archived", "b.hpwebsite")!)) }, 0)
        XCTAssertEqual(try plist("b.hpwebsite")["isArchived"] as? Bool, false)
        assertEveryViewIsCurrent("rm in unarchived and archived")
        XCTAssertEqual(errno { unlink(fixture.mounted("by-name/" + entry("by-name", "c.hpwebsite")!)) }, EPERM)
        XCTAssertEqual(errno { unlink(fixture.mounted("tag/t/no such entry")) }, ENOENT)
        XCTAssertNotNil(RawFiles.lstat(fixture.backed("c.hpwebsite")), "items are never deleted through a view")
        // A plain file's tag goes from its attribute; archiving it is refused.
        XCTAssertEqual(errno { symlink("../../bundles/notes.txt", fixture.mounted("tag/t/x")) }, 0)
        XCTAssertEqual(Program.run(["getfattr", "--only-values", "-n", "user.xdg.tags", fixture.backed("notes.txt")]).stdoutText, "t")
        XCTAssertEqual(errno { unlink(fixture.mounted("unarchived/" + entry("unarchived", "notes.txt")!)) }, EPERM)
    }

    // MARK: Move and retitle

    func testMovingAnEntryBetweenViewsLeavesOneAndJoinsTheOther() throws {
        try mount()
        let alpha = try XCTUnwrap(entry("tag/t", "a.hpwebsite"))
        XCTAssertEqual(errno { rename(fixture.mounted("tag/t/" + alpha), fixture.mounted("tag/u/" + alpha)) }, 0)
        XCTAssertEqual(try plist("a.hpwebsite")["tags"] as? [String], ["u"])
        assertEveryViewIsCurrent("mv tag/t → tag/u")
        // The last entry moved out: emptied by mv, the folder stays until rmdir, as one emptied by rm.
        for item in ["b.hpwebsite", "d.hpwebsite"] {
            let named = try XCTUnwrap(entry("tag/t", item))
            XCTAssertEqual(errno { rename(fixture.mounted("tag/t/" + named), fixture.mounted("tag/u/" + named)) }, 0, item)
        }
        XCTAssertEqual(try plist("b.hpwebsite")["tags"] as? [String], ["u"])
        XCTAssertEqual(try json("d.hpwebsite")["tags"] as? [String], ["u"])
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/t"))?.count, 0, "emptied by mv, it stays until rmdir")
        XCTAssertEqual(errno { symlink("../../bundles/b.hpwebsite", fixture.mounted("tag/t/x")) }, 0, "and takes an item back")
        XCTAssertEqual(try plist("b.hpwebsite")["tags"] as? [String], ["u", "t"])
        let unarchived = try XCTUnwrap(entry("unarchived", "a.hpwebsite"))
        XCTAssertEqual(run(["mv", fixture.mounted("unarchived/" + unarchived), fixture.mounted("archived/")]), 0)
        XCTAssertEqual(try plist("a.hpwebsite")["isArchived"] as? Bool, true)
        let gamma = try XCTUnwrap(entry("by-name", "c.hpwebsite"))
        XCTAssertEqual(run(["mv", fixture.mounted("by-name/" + gamma), fixture.mounted("tag/t/")]), 0)
        XCTAssertEqual(try plist("c.hpwebsite")["tags"] as? [String], ["t"])
        XCTAssertNotNil(entry("by-name", "c.hpwebsite"), "still in by-name: every item is")
        assertEveryViewIsCurrent("after the moves")
        XCTAssertEqual(errno { rename(fixture.mounted("by-name/" + gamma), fixture.mounted("bundles/x")) }, EPERM)
    }

    func testRenamingAnEntryWithinItsViewRetitlesIt() throws {
        try mount()
        let gamma = try XCTUnwrap(entry("by-name", "c.hpwebsite"))
        XCTAssertEqual(errno { rename(fixture.mounted("by-name/" + gamma), fixture.mounted("by-name/0003 New title ✓.hpwebsite")) }, 0)
        XCTAssertEqual(try plist("c.hpwebsite")["webTitle"] as? String, "New title ✓", "rank and .ext dropped, the key kept")
        XCTAssertNil(try plist("c.hpwebsite")["title"])
        XCTAssertNotNil(RawFiles.lstat(fixture.mounted("by-name/0003 New title ✓.hpwebsite")))
        let json = try XCTUnwrap(entry("by-name", "d.hpwebsite"))
        XCTAssertEqual(errno { rename(fixture.mounted("by-name/" + json), fixture.mounted("by-name/Retitled")) }, 0)
        XCTAssertEqual(try self.json("d.hpwebsite")["title"] as? String, "Retitled")
        // The name given, looked up next (Nautilus, after a whole name typed over, extension and all).
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("by-name/Retitled")), "../bundles/d.hpwebsite")
        XCTAssertNil(RawFiles.lstat(fixture.mounted("by-name/Never given")))
        XCTAssertNil(RawFiles.lstat(fixture.mounted("unarchived/Retitled")), "in the folder it was given in only")
        assertEveryViewIsCurrent("after the retitles")
        // A rename typed over the whole stem, rank and all (a file manager's
        // F2): the name it then looks up leads to the entry it became.
        let alpha = try XCTUnwrap(entry("by-name", "a.hpwebsite"))
        XCTAssertEqual(errno { rename(fixture.mounted("by-name/" + alpha), fixture.mounted("by-name/Typed over.hpwebsite")) }, 0)
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("by-name/Typed over.hpwebsite")), "../bundles/a.hpwebsite")
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("by-name/Typed over.json")), nil, "the extension is part of the name")
        XCTAssertNotNil(entry("by-name", "a.hpwebsite").map { $0.hasSuffix(" Typed over.hpwebsite") })
        // A leading number that cannot be a rank here (not the folder's width, or past its count) is the title's.
        let retitled = try XCTUnwrap(entry("by-name", "a.hpwebsite"))
        XCTAssertEqual(errno { rename(fixture.mounted("by-name/" + retitled), fixture.mounted("by-name/2024 Plans.hpwebsite")) }, 0)
        XCTAssertEqual(try plist("a.hpwebsite")["webTitle"] as? String, "2024 Plans")
        let again = try XCTUnwrap(entry("by-name", "a.hpwebsite"))
        XCTAssertEqual(errno { rename(fixture.mounted("by-name/" + again), fixture.mounted("by-name/7 Wonders.hpwebsite")) }, 0)
        XCTAssertEqual(try plist("a.hpwebsite")["webTitle"] as? String, "7 Wonders")
    }

    // MARK: Tag folders

    func testTagFoldersAreMadeRemovedAndRenamed() throws {
        try mount()
        XCTAssertEqual(errno { mkdir(fixture.mounted("tag/later"), 0o755) }, 0)
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/later"))?.count, 0)
        XCTAssertTrue((RawFiles.list(fixture.mounted("tag")) ?? []).map(\.text).contains("later"))
        XCTAssertEqual(errno { mkdir(fixture.mounted("tag/later"), 0o755) }, EEXIST)
        let gamma = try XCTUnwrap(entry("by-name", "c.hpwebsite"))
        XCTAssertEqual(run(["mv", fixture.mounted("by-name/" + gamma), fixture.mounted("tag/later/")]), 0)
        XCTAssertEqual(try plist("c.hpwebsite")["tags"] as? [String], ["later"])
        XCTAssertEqual(errno { rmdir(fixture.mounted("tag/later")) }, ENOTEMPTY)
        XCTAssertEqual(errno { unlink(fixture.mounted("tag/later/" + entry("tag/later", "c.hpwebsite")!)) }, 0)
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/later"))?.count, 0, "made by mkdir: it stays, empty")
        XCTAssertEqual(errno { rmdir(fixture.mounted("tag/later")) }, 0)
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/later")))
        // mv tag/t tag/renamed: on every item that carries it.
        XCTAssertEqual(errno { rename(fixture.mounted("tag/t"), fixture.mounted("tag/renamed")) }, 0)
        XCTAssertEqual(try plist("a.hpwebsite")["tags"] as? [String], ["renamed"])
        XCTAssertEqual(try plist("b.hpwebsite")["tags"] as? [String], ["renamed", "u"], "in place")
        XCTAssertEqual(try json("d.hpwebsite")["tags"] as? [String], ["renamed"])
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/t")))
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/renamed"))?.count, 3)
        assertEveryViewIsCurrent("after mv tag/t tag/renamed")
    }

    /// A nested tag's folder emptied by `rm` stays, and so does the folder
    /// it is in, as a flat one does (found from outside: tag/x and tag/x/y
    /// went, under a file manager showing tag/x/y).
    func testANestedTagFolderEmptiedByRmStaysWithItsParent() throws {
        try mount()
        XCTAssertEqual(QueryfsBinary.run(["tag", fixture.backing, "c.hpwebsite", "--add", "x/y"]).status, 0)
        let entry = try XCTUnwrap(entry("tag/x/y", "c.hpwebsite"))
        XCTAssertEqual(errno { unlink(fixture.mounted("tag/x/y/" + entry)) }, 0)
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/x/y"))?.count, 0, "emptied by rm: it stays")
        XCTAssertNotNil(RawFiles.list(fixture.mounted("tag/x")), "and so does its parent")
        XCTAssertEqual(errno { rmdir(fixture.mounted("tag/x")) }, ENOTEMPTY)
        XCTAssertEqual(errno { rmdir(fixture.mounted("tag/x/y")) }, 0)
        XCTAssertEqual(errno { rmdir(fixture.mounted("tag/x")) }, 0)
    }

    // MARK: Undo

    /// A file manager's `rm -r` of a tag folder untags every item; one undo
    /// brings every payload back byte for byte.
    func testRemovingATagFolderIsUndoneByOneCommand() throws {
        try mount()
        let before = ["a.hpwebsite/payload.plist", "b.hpwebsite/payload.plist", "d.hpwebsite/payload.json"].map {
            ($0, FileManager.default.contents(atPath: fixture.backed($0)))
        }
        XCTAssertEqual(run(["rm", "-r", fixture.mounted("tag/t")]), 0)
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/t")))
        XCTAssertEqual(try plist("a.hpwebsite")["tags"] as? [String], [])
        let history = QueryfsBinary.run(["history", fixture.backing])
        XCTAssertEqual(history.stdoutText.split(separator: "\n").filter { $0.contains("\ttags\t") }.count, 3, history.stdoutText)
        let undo = QueryfsBinary.run(["undo", fixture.backing, "--since", "5m"])
        XCTAssertEqual(undo.status, 0, undo.stderrText)
        for (file, bytes) in before { XCTAssertEqual(FileManager.default.contents(atPath: fixture.backed(file)), bytes, file) }
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 2), [])
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/t"))?.count, 3)
    }

    // MARK: Coordination

    func testAnEditWaitsForAnotherProcesssLockAndNeverInterleaves() throws {
        try mount(["--lock-timeout", "1"])
        // Held 0.4 s by flock(1): the edit waits, then succeeds.
        let holder = Program.spawn(["flock", fixture.backed("c.hpwebsite"), "-c", "sleep 0.4"], stdout: "/dev/null", stderr: "/dev/null")
        XCTAssertTrue(eventually { Self.isLocked(self.fixture.backed("c.hpwebsite")) }, "flock(1) never took the lock")
        XCTAssertEqual(errno { symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/t/x")) }, 0)
        _ = Program.wait(holder)
        XCTAssertEqual(try plist("c.hpwebsite")["tags"] as? [String], ["t"])
        // Held longer than --lock-timeout: EBUSY, and the payload is as the holder left it.
        let longer = Program.spawn(["flock", fixture.backed("c.hpwebsite"), "-c", "sleep 3"], stdout: "/dev/null", stderr: "/dev/null")
        XCTAssertTrue(eventually { Self.isLocked(self.fixture.backed("c.hpwebsite")) }, "flock(1) never took the lock")
        XCTAssertEqual(errno { symlink("../bundles/c.hpwebsite", fixture.mounted("archived/x")) }, EBUSY)
        XCTAssertEqual(try plist("c.hpwebsite")["isArchived"] as? Bool, false)
        _ = Program.wait(longer)
    }

    /// Issue 30: an edit whose journal cannot be written is refused before
    /// anything changes — the caller's error is the whole truth.
    func testAnEditWhoseJournalCannotBeWrittenChangesNothing() throws {
        try mount()
        let elsewhere = fixture.root + "/elsewhere"
        XCTAssertTrue(FileManager.default.createFile(atPath: elsewhere, contents: Data("kept".utf8)))
        XCTAssertEqual(symlink(elsewhere, fixture.backed(".queryfs-journal")), 0)
        let before = FileManager.default.contents(atPath: fixture.backed("c.hpwebsite/payload.plist"))
        let tagged = RawFiles.list(fixture.mounted("tag/t"))?.count
        XCTAssertEqual(errno { symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/t/x")) }, ELOOP)
        XCTAssertEqual(FileManager.default.contents(atPath: fixture.backed("c.hpwebsite/payload.plist")), before)
        XCTAssertEqual(FileManager.default.contents(atPath: elsewhere), Data("kept".utf8))
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/t"))?.count, tagged, "the item did not join the tag")
        // With the journal usable again, the same edit goes through and is undone.
        XCTAssertEqual(unlink(fixture.backed(".queryfs-journal")), 0)
        XCTAssertEqual(errno { symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/t/x")) }, 0)
        XCTAssertEqual(try plist("c.hpwebsite")["tags"] as? [String], ["t"])
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: fixture.backed("c.hpwebsite/payload.plist")), before)
    }

    /// The commands take a mount's paths for an item too: bundles/X, or a view's entry.
    func testCommandsNameItemsThroughTheMount() throws {
        try mount()
        let gamma = try XCTUnwrap(entry("by-name", "c.hpwebsite"))
        var result = QueryfsBinary.run(["tag", fixture.backing, fixture.mounted("by-name/" + gamma), "--add", "via-entry"])
        XCTAssertEqual(result.status, 0, result.stderrText)
        result = QueryfsBinary.run(["archive", fixture.backing, fixture.mounted("bundles/a.hpwebsite")])
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertEqual(try plist("c.hpwebsite")["tags"] as? [String], ["via-entry"])
        XCTAssertEqual(try plist("a.hpwebsite")["isArchived"] as? Bool, true)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 2), [])
    }

    /// An edit command returns once a running mount of BACKING shows its
    /// edit (found from outside: `queryfs tag B X --add new; ls MOUNT/tag/new`
    /// failed every time, the mount applying the edit 6–14 ms later).
    func testAnEditCommandsChangeIsShownByTheMountWhenItReturns() throws {
        try mount()
        for round in 0..<12 {
            let tag = "new\(round)"
            let result = QueryfsBinary.run(["tag", fixture.backing, "c.hpwebsite", "--add", tag])
            XCTAssertEqual(result.status, 0, result.stderrText)
            XCTAssertEqual(RawFiles.list(fixture.mounted("tag/" + tag))?.count, 1, "round \(round): tag/\(tag) at once")
            let title = "Gamma \(round)"
            XCTAssertEqual(QueryfsBinary.run(["set", fixture.backing, "c.hpwebsite", "title=" + title]).status, 0)
            XCTAssertNotNil(entry("by-name", "c.hpwebsite").map { $0.hasSuffix(" \(title).hpwebsite") ? $0 : nil } ?? nil,
                            "round \(round): by-name shows the new title at once")
        }
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertNotNil(entry("by-name", "c.hpwebsite").map { $0.hasSuffix(" Gamma 10.hpwebsite") ? $0 : nil } ?? nil, "an undo too")
        XCTAssertEqual(RawFiles.list(fixture.mounted(".queryfs"))?.map(\.text).sorted(), ["settled", "status"])
        // A stopped daemon cannot show it: the edit stands, and one line says the mount did not confirm it.
        let daemon = try XCTUnwrap(fixture.daemonPID())
        XCTAssertEqual(kill(daemon, SIGSTOP), 0)
        let stopped = QueryfsBinary.run(["tag", fixture.backing, "c.hpwebsite", "--add", "while-stopped"])
        XCTAssertEqual(kill(daemon, SIGCONT), 0)
        XCTAssertEqual(stopped.status, 0, stopped.stderrText)
        XCTAssertTrue(stopped.stderrText.contains("did not show the edit within 2 s"), stopped.stderrText)
        XCTAssertTrue(try plist("c.hpwebsite")["tags"].map { ($0 as? [String])?.contains("while-stopped") == true } ?? false)
    }

    // MARK: git

    /// Reading lists are synced with git: an edit's diff is the edit's lines.
    func testAnEditsGitDiffIsAsSmallAsTheEdit() throws {
        try mount()
        XCTAssertEqual(run(["git", "-C", fixture.backing, "init", "-q"]), 0)
        XCTAssertEqual(run(["git", "-C", fixture.backing, "add", "-A"]), 0)
        XCTAssertEqual(run(["git", "-C", fixture.backing, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "start"]), 0)
        XCTAssertEqual(errno { unlink(fixture.mounted("unarchived/" + entry("unarchived", "a.hpwebsite")!)) }, 0)
        XCTAssertEqual(errno { unlink(fixture.mounted("unarchived/" + entry("unarchived", "d.hpwebsite")!)) }, 0)
        let stat = Program.run(["git", "-C", fixture.backing, "diff", "--numstat"]).stdoutText
        XCTAssertEqual(Set(stat.split(separator: "\n").map(String.init)),
                       ["1\t1\ta.hpwebsite/payload.plist", "1\t1\td.hpwebsite/payload.json"], stat)
    }

    // MARK: A file manager's library

    /// GIO, the library Nautilus uses: move, rename and remove do what `mv` and `rm` do.
    func testGioMoveRenameAndRemove() throws {
        try mount()
        let alpha = try XCTUnwrap(entry("tag/t", "a.hpwebsite"))
        var result = Program.run(["gio", "move", fixture.mounted("tag/t/" + alpha), fixture.mounted("tag/u/")])
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertEqual(try plist("a.hpwebsite")["tags"] as? [String], ["u"])
        let gamma = try XCTUnwrap(entry("by-name", "c.hpwebsite"))
        result = Program.run(["gio", "rename", fixture.mounted("by-name/" + gamma), "Renamed by gio.hpwebsite"])
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertEqual(try plist("c.hpwebsite")["webTitle"] as? String, "Renamed by gio")
        result = Program.run(["gio", "remove", fixture.mounted("unarchived/" + entry("unarchived", "c.hpwebsite")!)])
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertEqual(try plist("c.hpwebsite")["isArchived"] as? Bool, true)
        assertEveryViewIsCurrent("after gio")
    }
}
