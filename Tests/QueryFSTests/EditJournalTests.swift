import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// Issue 30: an edit either happens and is journaled, or does not happen
/// and the caller is told why; the journal's lines are written whole, each
/// with a checksum, and a torn tail is cut before the next record.
final class EditJournalTests: FixtureTestCase {
    private let payload = "x.b/payload.plist"

    private func contents(_ relative: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: path(relative)) ?? Data())
    }

    private func editor() throws -> ItemEditor { ItemEditor(backing: try BackingDirectory(path: backing), lockTimeout: 1) }
    private func journal() throws -> EditJournal { EditJournal(backing: try BackingDirectory(path: backing)) }
    private var journalPath: String { path(EditJournal.fileName) }

    override func setUp() {
        super.setUp()
        bundle("x.b", plistBody: "<dict><key>webTitle</key><string>X</string><key>tags</key><array/></dict>")
    }

    func testAnUnusableJournalRefusesTheEditBeforeAnythingChanges() throws {
        let elsewhere = writeFile("../elsewhere-\(getpid())", Array("kept".utf8))
        defer { unlink(elsewhere) }
        XCTAssertEqual(symlink(elsewhere, journalPath), 0)
        let before = contents(payload)
        XCTAssertThrowsError(try editor().apply([.addTag("t")], to: ItemName("x.b"))) { error in
            let edit = error as? EditError
            XCTAssertEqual(edit?.errno, ELOOP)
            XCTAssertTrue(edit?.message.contains("not changed") == true, edit?.message ?? "")
        }
        XCTAssertEqual(contents(payload), before, "the payload was changed although the edit was refused")
        XCTAssertEqual(String(decoding: contents("../elsewhere-\(getpid())"), as: UTF8.self), "kept")
    }

    /// Another program's lock on the journal makes an edit wait its lock
    /// timeout, then fail with EBUSY, nothing changed (found from outside:
    /// every edit waited for as long as the lock was held).
    func testAJournalLockedElsewhereRefusesTheEditAfterTheTimeout() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: journalPath, contents: nil, attributes: [.posixPermissions: 0o600]))
        let holder = open(journalPath, O_RDONLY | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(holder, 0)
        defer { close(holder) }
        XCTAssertEqual(flock(holder, LOCK_EX), 0)
        let before = contents(payload)
        let start = Date()
        XCTAssertThrowsError(try editor().apply([.addTag("t")], to: ItemName("x.b"))) { error in
            let edit = error as? EditError
            XCTAssertEqual(edit?.errno, EBUSY)
            XCTAssertTrue(edit?.message.contains("still locked by another process after 1.0 s") == true, edit?.message ?? "")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 3, "the wait is bounded by the lock timeout")
        XCTAssertEqual(contents(payload), before)
        XCTAssertEqual(flock(holder, LOCK_UN), 0)
        XCTAssertNoThrow(try editor().apply([.addTag("t")], to: ItemName("x.b")), "once let go, the edit is made")
    }

    func testARecordThatCannotBeWrittenTakesTheEditBack() throws {
        let editor = try editor()
        // The journal grows past the payload's size, so a file size limit can
        // let the payload be written and stop the record part way.
        for tag in ["a", "b", "c"] { try editor.apply([.addTag(tag)], to: ItemName("x.b")) }
        let before = contents(payload)
        let journalBefore = contents(EditJournal.fileName)
        XCTAssertGreaterThan(journalBefore.count, before.count + 200)
        let limit = rlim_t(journalBefore.count + 16)
        var old = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &old)
        let oldHandler = signal(SIGXFSZ, SIG_IGN)
        var limited = rlimit(rlim_cur: limit, rlim_max: old.rlim_max)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limited), 0)
        var failure: EditError?
        do { try editor.apply([.addTag("d")], to: ItemName("x.b")) } catch { failure = error }
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &old), 0)
        signal(SIGXFSZ, oldHandler)

        XCTAssertEqual(failure?.errno, EFBIG, failure?.message ?? "the edit did not fail")
        XCTAssertTrue(failure?.message.contains("not changed") == true, failure?.message ?? "")
        XCTAssertEqual(contents(payload), before, "the edit was left made although its record failed")
        // The 16 bytes the failed write left are cut at once (the journal is as before).
        XCTAssertEqual(contents(EditJournal.fileName), journalBefore)
        try editor.apply([.addTag("e")], to: ItemName("x.b"))
        let lines = String(decoding: contents(EditJournal.fileName), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.last, "", "the journal ends with a whole line")
        XCTAssertEqual(try journal().entries().count, 4)
        for line in lines.dropLast() {
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8)), String(line))
        }
    }

    func testATornTailIsCutAndADamagedLineSkippedWhileOlderLinesStillRead() throws {
        let editor = try editor()
        try editor.apply([.addTag("a")], to: ItemName("x.b"))
        try editor.apply([.addTag("b")], to: ItemName("x.b"))
        var text = String(decoding: contents(EditJournal.fileName), as: UTF8.self)
        var lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines.allSatisfy { $0.contains(",\"sum\":\"") }, text)
        // The first line as a journal before checksums wrote it; the second damaged in place.
        lines[0] = lines[0].replacingOccurrences(of: #",\"sum\":\"[0-9a-f]+\"\}$"#, with: "}", options: .regularExpression)
        lines[1] = lines[1].replacingOccurrences(of: "\"b\"", with: "\"q\"")
        text = lines.joined(separator: "\n") + "\n{\"id\":\"torn"
        _ = writeFile(EditJournal.fileName, Array(text.utf8))
        XCTAssertEqual(try journal().entries().map { $0.changes.first?.new }, [.array([.string("a")])],
                       "the older line is read, the damaged one and the torn tail skipped")
        try editor.apply([.addTag("c")], to: ItemName("x.b"))
        let after = String(decoding: contents(EditJournal.fileName), as: UTF8.self)
        XCTAssertFalse(after.contains("torn"), after)
        XCTAssertEqual(try journal().entries().count, 2)
    }
}
