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
    private func mount() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["t"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", tags: ["t", "u"], mtime: 4_000)
        }
        try fixture.mount(["--log", fixture.root + "/mount.log"])
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
        XCTAssertNoThrow(try entry("tag/t", "a.hpwebsite"))
        assertEveryViewIsCurrent("after restoring")
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
