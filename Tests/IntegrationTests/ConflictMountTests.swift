import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `conflicts/`: items a sync tool doubled, live as copies come and go, each
/// entry named after the item its copy clashes with (a link to the copy),
/// each copy also keeping its place in every other view.
final class ConflictMountTests: MountTestCase {
    private func makeFixture() {
        fixture = MountedFixture { corpus in
            corpus.bundle("A.hpwebsite", title: "Alpha", tags: ["t"], mtime: 1_000)
            corpus.bundle("B.hpwebsite", title: "Beta", mtime: 2_000)
            corpus.file(Array("note.txt".utf8), contents: Array("plain".utf8), mtime: 3_000)
        }
    }

    private func conflicts() -> [String: String] {
        var entries: [String: String] = [:]
        for name in RawFiles.list(fixture.mounted("conflicts")) ?? [] {
            let path = fixture.mounted("conflicts/" + name.text)
            entries[name.text] = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
        }
        return entries
    }

    private func statusCount() throws -> Int? {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["conflicts"] as? Int
    }

    private func settle(_ expected: [String: String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(eventually(timeout: 5) { self.conflicts() == expected }, "\(conflicts())", file: file, line: line)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 5), [], file: file, line: line)
        XCTAssertEqual(try statusCount(), expected.count, file: file, line: line)
    }

    func testEachKindOfConflictComesAndGoesLive() throws {
        makeFixture()
        try fixture.mount()
        settle([:])
        let corpus = Corpus(path: fixture.backing)
        let syncthing = "A.sync-conflict-20240101-120000-ABCDEFG.hpwebsite"
        corpus.bundle(syncthing, title: "Alpha", tags: ["t"], mtime: 1_500)
        settle(["0001 A.hpwebsite": "../bundles/" + syncthing])
        // The copy keeps its place beside its original elsewhere too.
        XCTAssertEqual((RawFiles.list(fixture.mounted("tag/t")) ?? []).count, 2)
        let dropbox = "B (Jo's conflicted copy 2024-05-01).hpwebsite"
        corpus.bundle(dropbox, title: "Beta", mtime: 2_500)
        settle(["0001 A.hpwebsite": "../bundles/" + syncthing, "0002 B.hpwebsite": "../bundles/" + dropbox])
        // A numbered copy counts while its original is there.
        corpus.file(Array("note 2.txt".utf8), contents: Array("copy".utf8), mtime: 3_500)
        let three = ["0001 A.hpwebsite": "../bundles/" + syncthing, "0002 B.hpwebsite": "../bundles/" + dropbox,
                     "0003 note.txt": "../bundles/note 2.txt"]
        settle(three)
        XCTAssertEqual(rename(fixture.backed("note.txt"), fixture.root + "/note.txt"), 0)
        settle(["0001 A.hpwebsite": "../bundles/" + syncthing, "0002 B.hpwebsite": "../bundles/" + dropbox])
        XCTAssertEqual(rename(fixture.root + "/note.txt", fixture.backed("note.txt")), 0)
        settle(three)
        // Git conflict markers in a payload.
        corpus.write(fixture.backed("B.hpwebsite/payload.plist"),
                     Array("<plist>\n<<<<<<< HEAD\n<dict/>\n=======\n<dict/>\n>>>>>>> theirs\n</plist>\n".utf8))
        XCTAssertTrue(eventually(timeout: 5) { self.conflicts().values.contains("../bundles/B.hpwebsite") }, "\(conflicts())")
        XCTAssertEqual(try statusCount(), 4)
        // An edit of it is refused as read-only until resolved: EROFS, not EINVAL (which mv took
        // for "a subdirectory of itself", and retried); the payload as it was.
        let marked = RawFiles.read(fixture.backed("B.hpwebsite/payload.plist"))
        let entry = try XCTUnwrap((RawFiles.list(fixture.mounted("by-name")) ?? []).map(\.text).first {
            RawFiles.linkTarget(fixture.mounted("by-name/" + $0)) == "../bundles/B.hpwebsite" })
        XCTAssertEqual(rename(fixture.mounted("by-name/" + entry), fixture.mounted("by-name/Retitled.hpwebsite")), -1)
        XCTAssertEqual(Glibc.errno, EROFS)
        XCTAssertEqual(RawFiles.read(fixture.backed("B.hpwebsite/payload.plist")), marked)
        // Resolved: the copies deleted through bundles/, the payload rewritten.
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.mounted("bundles/" + syncthing)))
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.mounted("bundles/" + dropbox)))
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.mounted("bundles/note 2.txt")))
        corpus.write(fixture.backed("B.hpwebsite/payload.plist"), Array(Corpus.plist(title: "Beta", archived: false, tags: []).utf8))
        settle([:])
    }

    func testThePatternsAreConfigurable() throws {
        makeFixture()
        let corpus = Corpus(path: fixture.backing)
        corpus.bundle("A~clash~1.hpwebsite", title: "Alpha", mtime: 1_100)
        corpus.file(Array("note 2.txt".utf8), contents: Array("copy".utf8), mtime: 3_500)
        try fixture.mount()
        settle(["0001 note.txt": "../bundles/note 2.txt"])
        corpus.write(fixture.backed(".queryfs.toml"), Array("[conflicts]\nmarkers = [\"~clash~\"]\nnumbered-copies = false\n".utf8))
        settle(["0001 A.hpwebsite": "../bundles/A~clash~1.hpwebsite"])
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "conflicts", "--no-index"]).stdoutText, "0001 A.hpwebsite\n")
    }
}
