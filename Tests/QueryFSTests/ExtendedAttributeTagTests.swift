import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// Tags from `user.xdg.tags` (the freedesktop convention), merged with the
/// payload's: on bundles and on plain files.
final class ExtendedAttributeTagTests: FixtureTestCase {
    /// With setfattr(1) (the test command installs `attr`), as a user would.
    private func setTags(_ relative: String, _ value: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setfattr")
        process.arguments = ["-n", "user.xdg.tags", "-v", value, path(relative)]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "setfattr failed: the file system must allow user xattrs", file: file, line: line)
    }

    func testParsingSplitsOnCommasAndTrims() {
        XCTAssertEqual(ExtendedAttributeTags.parse(Array("swift, rust ,,  work\u{0}".utf8)), ["swift", "rust", "work"])
        XCTAssertEqual(ExtendedAttributeTags.parse(Array("".utf8)), [])
        XCTAssertEqual(ExtendedAttributeTags.merge(payload: ["a", "b"], attribute: ["b", "c", "c"]), ["a", "b", "c"])
    }

    func testBundleTagsMergeThePayloadsAndTheAttributes() throws {
        bundle("a.hpwebsite", plistBody: "<key>tags</key><array><string>swift</string></array>")
        try setTags("a.hpwebsite", "swift,from-kde, work")
        XCTAssertEqual(try scanItem("a.hpwebsite").tags, ["swift", "from-kde", "work"])
    }

    func testPlainFilesTakeTheirTagsFromTheAttribute() throws {
        _ = writeFile("notes.txt", "hello")
        try setTags("notes.txt", "todo")
        XCTAssertEqual(try scanItem("notes.txt").tags, ["todo"])
        XCTAssertEqual(ViewSet.tagFolders(of: try scan()), ["todo"])
    }

    func testALongAttributeIsReadWhole() throws {
        _ = writeFile("long.txt", "x")
        let tags = (0..<150).map { "tag-number-\($0)" }  // ~2 KB: past the first 1 KiB buffer, within ext4's one-block limit
        try setTags("long.txt", tags.joined(separator: ","))
        XCTAssertEqual(try scanItem("long.txt").tags, tags)
    }
}
