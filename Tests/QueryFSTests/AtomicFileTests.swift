import Foundation
import XCTest
@testable import QueryFSCollection

/// `AtomicFile.replace(unchangedSince:)`: a file that is no longer the one
/// the caller read is neither replaced nor copied from.
final class AtomicFileTests: XCTestCase {
    /// Found from outside: a 0600 payload swapped for a link between the
    /// edit's read and its write came back with the link's mode (0777, later 0644).
    func testAFileSwappedForALinkSinceItWasReadIsLeftAlone() throws {
        let backing = TemporaryBacking()
        let folder = backing.bundle("x.hpwebsite", title: "T")
        let payload = folder + "/payload.plist"
        XCTAssertEqual(chmod(payload, 0o600), 0)
        var read = stat()
        XCTAssertEqual(stat(payload, &read), 0)
        // Swapped: the payload moved aside, a link in its place.
        XCTAssertEqual(rename(payload, folder + "/aside"), 0)
        XCTAssertEqual(symlink("/tmp/queryfs-elsewhere", payload), 0)
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY)
        defer { close(dirfd) }
        XCTAssertThrowsError(try AtomicFile.replace(Array("payload.plist".utf8), in: dirfd, with: Array("new".utf8),
                                                    unchangedSince: FileIdentity(read))) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EAGAIN)
        }
        var now = stat()
        XCTAssertEqual(lstat(payload, &now), 0)
        XCTAssertEqual(now.st_mode & S_IFMT, S_IFLNK, "the link is still there")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), ["aside", "payload.plist"], "no file left beside")
    }

    /// What a killed process's edit left under its own name goes at the
    /// next edit in that folder; a live process's is left to it (found from
    /// outside: `kill -9` during edits left `.payload.plist.queryfs-PID-N` for good).
    func testAnEditRemovesTheLeftoversOfAKilledEdit() throws {
        let backing = TemporaryBacking()
        let folder = backing.bundle("x.hpwebsite", title: "T")
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let dead = gone.processIdentifier
        let live = getppid()
        let names = [".payload.plist.queryfs-\(dead)-123", ".queryfs-\(dead)-9", ".payload.plist.queryfs-\(live)-5",
                     ".payload.plist.queryfs-x-1", ".payload.plist.queryfs-0\(dead)-1", ".other.queryfs-\(dead)-1", "kept.queryfs-\(dead)-1"]
        for name in names { XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/" + name, contents: Data("old".utf8))) }
        // What an edit never makes: a FIFO, a second link to another file.
        XCTAssertEqual(mkfifo(folder + "/.payload.plist.queryfs-\(dead)-7", 0o600), 0)
        XCTAssertEqual(link(folder + "/kept.queryfs-\(dead)-1", folder + "/.payload.plist.queryfs-\(dead)-8"), 0)
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY)
        defer { close(dirfd) }
        try AtomicFile.replace(Array("payload.plist".utf8), in: dirfd, with: Array("new".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
                       [".queryfs-\(dead)-9", ".payload.plist.queryfs-\(live)-5", ".payload.plist.queryfs-x-1", ".payload.plist.queryfs-0\(dead)-1",
                        ".other.queryfs-\(dead)-1", "kept.queryfs-\(dead)-1", ".payload.plist.queryfs-\(dead)-7", ".payload.plist.queryfs-\(dead)-8",
                        "payload.plist"].sorted(),
                       "only the dead edit's own file of this name goes")
        let prefix = Array(".n.md.queryfs-".utf8).count
        XCTAssertEqual(EditLeftovers.pid(afterPrefixOf: Array(".n.md.queryfs-42-7".utf8), prefixLength: prefix), 42)
        XCTAssertNil(EditLeftovers.pid(afterPrefixOf: Array(".n.md.queryfs-42-".utf8), prefixLength: prefix))
        XCTAssertNil(EditLeftovers.pid(afterPrefixOf: Array(".n.md.queryfs-42-7-8".utf8), prefixLength: prefix))
        XCTAssertNil(EditLeftovers.pid(afterPrefixOf: Array(".n.md.queryfs-042-7".utf8), prefixLength: prefix))
    }
}
