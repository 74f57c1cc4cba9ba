import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A folder of Markdown notes mounted (issue 31, first step): titles and
/// tags from front matter (YAML and TOML) and headings, live as notes are
/// written, tags added through a view as the note's attribute, and a
/// front-matter tag refused (read, not edited) with nothing changed.
final class NotesMountTests: MountTestCase {
    private static func notes(_ corpus: Corpus) {
        corpus.file(Array("swift.md".utf8), contents: Array("---\ntitle: Swift on Linux\ntags: [swift, servers]\n---\nBody\n".utf8), mtime: 1_000)
        corpus.file(Array("hugo.md".utf8), contents: Array("+++\ntitle = \"A Hugo post\"\ntags = [\"swift\"]\n+++\n".utf8), mtime: 2_000)
        corpus.file(Array("heading.md".utf8), contents: Array("Intro\n# From the heading\n".utf8), mtime: 3_000)
        corpus.file(Array("bad.md".utf8), contents: Array("---\ntags: {not: a list}\n---\n# Bad\n".utf8), mtime: 4_000)
        corpus.file(Array("plain.txt".utf8), contents: Array("no front matter\n".utf8), mtime: 5_000)
    }

    private func names(_ view: String) -> [String] { (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).sorted() }

    func testNotesAreItemsWithTheirFrontMatterLiveAndEditable() throws {
        fixture = MountedFixture(corpus: Self.notes)
        try fixture.mount()
        XCTAssertEqual(names("by-name"), ["0001 A Hugo post.md", "0002 Bad.md", "0003 From the heading.md", "0004 plain.txt", "0005 Swift on Linux.md"])
        XCTAssertEqual(names("tag/swift"), ["0001 A Hugo post.md", "0002 Swift on Linux.md"], "newest first")
        XCTAssertEqual(names("tag/servers"), ["0001 Swift on Linux.md"])
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [])
        let status = QueryfsBinary.run(["status", fixture.mountPoint])
        XCTAssertTrue(status.stdoutText.contains("bad.md") && status.stdoutText.contains("tags: a dictionary, not a list"), status.stdoutText)

        // Live: a note written in BACKING, a title changed in its front matter.
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed("new.md"), Array("---\ntitle: Newest\ntags: swift\n---\n".utf8))
        XCTAssertTrue(eventually { self.names("tag/swift").contains { $0.hasSuffix(" Newest.md") } }, "\(names("tag/swift"))")
        corpus.write(fixture.backed("heading.md"), Array("---\ntitle: Retitled\n---\n".utf8))
        XCTAssertTrue(eventually { self.names("by-name").contains { $0.hasSuffix(" Retitled.md") } }, "\(names("by-name"))")

        // Through a view: a tag added is the note's attribute; a front-matter tag is not removed.
        XCTAssertEqual(symlink("../../bundles/plain.txt", fixture.mounted("tag/servers/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertTrue(names("tag/servers").contains { $0.hasSuffix(" plain.txt") })
        let entry = try XCTUnwrap(names("tag/swift").first { $0.hasSuffix(" Swift on Linux.md") })
        let before = FileManager.default.contents(atPath: fixture.backed("swift.md"))
        XCTAssertEqual(unlink(fixture.mounted("tag/swift/" + entry)), -1)
        XCTAssertEqual(Glibc.errno, EROFS)
        XCTAssertEqual(FileManager.default.contents(atPath: fixture.backed("swift.md")), before, "the note is as it was")
        XCTAssertTrue(names("tag/swift").contains(entry))
        XCTAssertTrue(eventually { ViewComparison.differences(backing: self.fixture.backing, mountPoint: self.fixture.mountPoint) == [] })
    }
}
