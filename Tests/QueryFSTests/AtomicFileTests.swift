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
}
