import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The trash at the mount's root (issue 32), through GIO — what Nautilus,
/// Nemo, Caja, Thunar and pcmanfm call for "Move to Trash": trashing a view
/// entry is the view's `rm` (undoable), the trash keeps a link to the item,
/// and moving that link back (a file manager's "Restore") rejoins the view.
final class TrashMountTests: MountTestCase {
    private func mount(_ extra: [String] = []) throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["t"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", tags: ["t", "u"], mtime: 4_000)
        }
        try fixture.mount(["--log", fixture.root + "/mount.log"] + extra)
    }

    /// What `mkdir PATH` says as user 65534: "0", or the error it printed.
    private func mkdirAsNobody(_ path: String) -> String {
        // LC_ALL=C: the message compared is mkdir's own, untranslated whatever the machine's locale.
        let result = Program.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                  "env", "LC_ALL=C", "sh", "-c", "mkdir \"$0\" 2>&1 && echo 0", path])
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private var trash: String { fixture.mounted(".Trash-\(geteuid())") }

    private func entry(_ view: String, _ item: String) throws -> String {
        try XCTUnwrap((RawFiles.list(fixture.mounted(view)) ?? []).map(\.text)
            .first { RawFiles.linkTarget(fixture.mounted("\(view)/\($0)"))?.hasSuffix("/" + item) == true }, "\(item) in \(view)")
    }

    private func tags(_ item: String) throws -> [String] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.backed("\(item)/payload.plist")))
        let plist = try XCTUnwrap(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        return plist["tags"] as? [String] ?? []
    }

    func testTrashingAnEntryLeavesTheViewAndRestoringRejoinsIt() throws {
        try mount()
        let alpha = try entry("tag/t", "a.hpwebsite")
        let trashed = Program.run(["gio", "trash", fixture.mounted("tag/t/" + alpha)])
        XCTAssertEqual(trashed.status, 0, trashed.stderrText)
        XCTAssertEqual(try tags("a.hpwebsite"), [], "trashed from tag/t: untagged")
        XCTAssertEqual(RawFiles.linkTarget(trash + "/files/" + alpha), "../../bundles/a.hpwebsite")
        XCTAssertEqual(FileManager.default.fileExists(atPath: trash + "/files/" + alpha + "/payload.plist"), true,
                       "the link leads to the bundle through the mount")
        let info = try String(contentsOfFile: trash + "/info/" + alpha + ".trashinfo", encoding: .utf8)
        XCTAssertTrue(info.contains("Path=tag/t/"), info)
        // BACKING's own .Trash-UID: private, and never an item.
        var status = stat()
        XCTAssertEqual(lstat(fixture.backed(".Trash-\(geteuid())"), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o700)
        XCTAssertEqual((RawFiles.list(fixture.mounted("by-name")) ?? []).count, 2, "the trash folder is no item")
        assertEveryViewIsCurrent("after trashing")

        // Restore: what gvfsd-trash does, a rename back to the recorded path.
        XCTAssertEqual(rename(trash + "/files/" + alpha, fixture.mounted("tag/t/" + alpha)), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(try tags("a.hpwebsite"), ["t"])
        XCTAssertEqual(RawFiles.list(trash + "/files")?.count, 0, "the link is gone once restored")
        XCTAssertEqual(RawFiles.list(trash + "/info")?.count, 0, "and so is its trashinfo, as gio trash --restore leaves it")
        XCTAssertNoThrow(try entry("tag/t", "a.hpwebsite"))
        assertEveryViewIsCurrent("after restoring")
    }

    /// Restored into the folder it was trashed from, an entry's item comes
    /// back as it was, nested tags and all, byte for byte (found from
    /// outside: trashed from tag/lang, an item tagged lang/rust came back tagged lang).
    func testRestoringIntoTheFolderItLeftTakesTheTrashingBack() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["lang/rust", "lang/python", "x"], mtime: 5_000)
        }
        try fixture.mount()
        let payload = RawFiles.read(fixture.backed("a.hpwebsite/payload.plist"))
        let alpha = try entry("tag/lang", "a.hpwebsite")
        let trashed = Program.run(["gio", "trash", fixture.mounted("tag/lang/" + alpha)])
        XCTAssertEqual(trashed.status, 0, trashed.stderrText)
        XCTAssertEqual(try tags("a.hpwebsite"), ["x"])
        XCTAssertEqual(rename(trash + "/files/" + alpha, fixture.mounted("tag/lang/" + alpha)), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("a.hpwebsite/payload.plist")), payload)
    }

    /// A view that no edit can leave (by-name/ holds every item) refuses the
    /// trash as it refuses `rm`, and the trash holds nothing for it.
    func testAnEntryThatCannotLeaveItsViewIsNotTrashed() throws {
        try mount()
        let alpha = try entry("by-name", "a.hpwebsite")
        XCTAssertNotEqual(Program.run(["gio", "trash", fixture.mounted("by-name/" + alpha)]).status, 0)
        XCTAssertEqual(RawFiles.list(trash + "/files")?.count ?? 0, 0)
        XCTAssertEqual(try tags("a.hpwebsite"), ["t"])
        XCTAssertNoThrow(try entry("by-name", "a.hpwebsite"))
    }

    /// Trashing is an edit like `rm`: journaled, and `queryfs undo` takes it back.
    func testUndoTakesATrashedEntryBack() throws {
        try mount()
        let beta = try entry("tag/u", "b.hpwebsite")
        XCTAssertEqual(Program.run(["gio", "trash", fixture.mounted("tag/u/" + beta)]).status, 0)
        XCTAssertEqual(try tags("b.hpwebsite"), ["t"])
        let undo = QueryfsBinary.run(["undo", fixture.backing])
        XCTAssertEqual(undo.status, 0, undo.stderrText)
        XCTAssertEqual(try tags("b.hpwebsite"), ["t", "u"])
        // Emptying the trash removes the link, never the item.
        XCTAssertEqual(unlink(trash + "/files/" + beta), 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.backed("b.hpwebsite/payload.plist")))
    }

    /// Each user makes only their own trash folder; no other name at the root leads into BACKING.
    func testOnlyTheCallersTrashFolderIsMade() throws {
        try mount()
        var status = stat()
        XCTAssertEqual(errno { lstat(trash, &status) }, ENOENT, "no trash until one is made")
        XCTAssertEqual(errno { mkdir(fixture.mounted(".Trash-\(geteuid() + 1)"), 0o700) }, EACCES)
        XCTAssertEqual(errno { mkdir(fixture.mounted(".Trash"), 0o1777) }, EPERM)
        XCTAssertEqual(errno { mkdir(fixture.mounted(".Trash-x"), 0o700) }, EPERM)
        XCTAssertEqual(errno { mkdir(trash, 0o777) }, 0)
        XCTAssertEqual(lstat(trash, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o700, "the trash specification's mode, whatever was asked")
        XCTAssertEqual(status.st_uid, geteuid())
        XCTAssertFalse((RawFiles.list(fixture.mountPoint) ?? []).map(\.text).contains(".Trash-\(geteuid())"),
                       "the root lists its own folders only")
    }

    /// On a mount other users reach (`allow_other`), the trash is the mount
    /// owner's: another user is refused by the kernel (the root is the
    /// owner's 0755) and by the mount (another's name), cleanly.
    func testAnotherUserHasNoTrashOnSomeoneElsesMount() throws {
        try mount(["-o", "allow_other"])
        XCTAssertEqual(chmod(fixture.backing, 0o1777), 0)
        XCTAssertTrue(mkdirAsNobody(fixture.mounted(".Trash-65534")).contains("Permission denied"))
        XCTAssertTrue(mkdirAsNobody(fixture.mounted(".Trash-0")).contains("Permission denied"))
        var status = stat()
        XCTAssertNotEqual(lstat(fixture.backed(".Trash-65534"), &status), 0)
        XCTAssertEqual(mkdir(trash, 0o700), 0)
        XCTAssertTrue(mkdirAsNobody(trash + "/files").contains("Permission denied"), "root's trash is root's")
    }

    /// An ordinary user's own mount (user 65534, in a namespace of its own,
    /// as on a desktop): GIO makes that user's trash on it, as that user, and
    /// trashing an entry untags it.
    func testTheMountsOwnerTrashesAsThemselves() throws {
        try XCTSkipIf(getuid() != 0, "needs root to make the private /dev/fuse and switch users")
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["t"], mtime: 5_000)
        }
        XCTAssertEqual(Program.run(["chown", "-R", "65534:65534", fixture.backing]).status, 0)
        guard let mount = try UnprivilegedMount.started(for: self, backing: fixture.backing, mountPoint: fixture.mountPoint,
                                                        option: "allow_root") else { return }
        let seen = "/proc/\(mount.shell)/root" + fixture.mountPoint
        let entry = try XCTUnwrap(RawFiles.list(seen + "/tag/t")?.first?.text)
        let trashed = Program.run(["nsenter", "-t", String(mount.shell), "-m", "--", "setpriv", "--reuid=65534", "--regid=65534",
                                   "--clear-groups", "--", "env", "HOME=/tmp", "gio", "trash", fixture.mountPoint + "/tag/t/" + entry])
        XCTAssertEqual(trashed.status, 0, trashed.stderrText)
        var status = stat()
        XCTAssertEqual(lstat(fixture.backed(".Trash-65534"), &status), 0)
        XCTAssertEqual(status.st_uid, 65534)
        XCTAssertEqual(status.st_mode & 0o7777, 0o700)
        XCTAssertEqual(RawFiles.linkTarget(fixture.backed(".Trash-65534/files/" + entry)), "../../bundles/a.hpwebsite")
        XCTAssertEqual(try tags("a.hpwebsite"), [])
    }

    /// What file managers probe each folder for (`.Trash`, `.directory`,
    /// `.hidden`) is a quiet miss everywhere: in `query/` never parsed as a
    /// query and logged.
    func testProbesForHiddenNamesAreQuietMisses() throws {
        try mount()
        var status = stat()
        for probe in [".Trash", ".Trash-\(geteuid())", "query/.directory", "query/.hidden", "tag/t/.hidden", "by-name/.directory"] {
            XCTAssertEqual(errno { lstat(fixture.mounted(probe), &status) }, ENOENT, probe)
        }
        let log = (try? String(contentsOfFile: fixture.root + "/mount.log", encoding: .utf8)) ?? ""
        XCTAssertFalse(log.contains(".directory"), log)
    }

    private func errno(_ call: () -> Int32) -> Int32 { call() == 0 ? 0 : Glibc.errno }

    private func assertEveryViewIsCurrent(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [], what, file: file, line: line)
    }
}
