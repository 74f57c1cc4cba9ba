import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// An item replaced under its own name — by an editor's save through a
/// rename, `git checkout`, `rm -r X; cp -a saved X`, or the mount's own
/// atomic rewrite after `ln -s` — is the new file under `bundles/` from then
/// on: never the old, deleted one the kernel's node still led to (found
/// from outside: reads there were stale for 40 s, and a write that
/// returned 0 went into the deleted file, never reaching BACKING).
final class ReplacedItemMountTests: MountTestCase {
    private func names(_ view: String) -> [String] { (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).sorted() }

    /// Appends `text` through the mount as a shell's `>>` does.
    private func append(_ text: String, to path: String) -> Int32 {
        let fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return write(fd, text, text.utf8.count) == text.utf8.count ? 0 : errno
    }

    func testAWriteAfterTheMountsOwnEditReachesTheNewFile() throws {
        fixture = MountedFixture { corpus in
            corpus.file(Array("top.md".utf8), contents: Array("---\ntitle: Top note\ntags: [x]\n---\nbody\n".utf8), mtime: 1_000)
        }
        try fixture.mount()
        XCTAssertNotNil(RawFiles.read(fixture.mounted("bundles/top.md")), "the kernel holds the node, its descriptor open")
        XCTAssertEqual(mkdir(fixture.mounted("tag/y"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/top.md", fixture.mounted("tag/y/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(append("my new line\n", to: fixture.mounted("bundles/top.md")), 0)
        let expected = "---\ntitle: Top note\ntags: [x, \"y\"]\n---\nbody\nmy new line\n"  // YAML 1.1 reads a plain y as true
        XCTAssertEqual(RawFiles.read(fixture.backed("top.md"))?.text, expected, "the tag and the line, both in BACKING")
        XCTAssertEqual(RawFiles.read(fixture.mounted("bundles/top.md"))?.text, expected)
        let entry = try XCTUnwrap(names("tag/y").first)
        XCTAssertEqual(RawFiles.read(fixture.mounted("tag/y/" + entry))?.text, expected, "through the view's link too")
    }

    func testAnItemReplacedInBackingIsTheNewOneUnderBundles() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("A.hpwebsite", title: "Alpha", tags: ["t"], mtime: 1_000)
            corpus.file(Array("note.md".utf8), contents: Array("# Note One\n".utf8), mtime: 1_000)
        }
        try fixture.mount()
        let payload = try XCTUnwrap(RawFiles.read(fixture.mounted("bundles/A.hpwebsite/payload.plist")))
        XCTAssertEqual(RawFiles.read(fixture.mounted("bundles/note.md"))?.text, "# Note One\n")
        _ = RawFiles.list(fixture.mounted("bundles/A.hpwebsite"))

        // The bundle removed and made again from a copy; the note saved by rename.
        let saved = fixture.root + "/A.saved"
        XCTAssertEqual(Program.run(["cp", "-a", fixture.backed("A.hpwebsite"), saved]).status, 0)
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.backed("A.hpwebsite")))
        XCTAssertEqual(Program.run(["cp", "-a", saved, fixture.backed("A.hpwebsite")]).status, 0)
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed(".note.md.new"), Array("# Note Two\n".utf8))
        XCTAssertEqual(rename(fixture.backed(".note.md.new"), fixture.backed("note.md")), 0)

        XCTAssertTrue(eventually { self.names("by-name").contains { $0.hasSuffix(" Note Two.md") } }, "\(names("by-name"))")
        XCTAssertEqual(RawFiles.read(fixture.mounted("bundles/note.md"))?.text, "# Note Two\n")
        XCTAssertTrue(eventually { RawFiles.list(self.fixture.mounted("bundles/A.hpwebsite"))?.map(\.text).contains("payload.plist") == true },
                      "\(RawFiles.list(fixture.mounted("bundles/A.hpwebsite"))?.map(\.text) ?? [])")
        XCTAssertEqual(RawFiles.read(fixture.mounted("bundles/A.hpwebsite/payload.plist")), payload)
        let entry = try XCTUnwrap(names("tag/t").first)
        XCTAssertEqual(RawFiles.read(fixture.mounted("tag/t/" + entry + "/payload.plist")), payload)
        // And a write through the mount lands in BACKING's file.
        XCTAssertEqual(append("tail\n", to: fixture.mounted("bundles/note.md")), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("note.md"))?.text, "# Note Two\ntail\n")
    }

    /// A file saved through the mount by rename (an editor's temp file moved
    /// over it), then replaced in BACKING the same way: bundles/ serves
    /// BACKING's new file, not the one the mount's rename left (found from
    /// outside: the old, deleted file for good, and `queryfs tag` through
    /// bundles/ then lost every edit made in BACKING meanwhile).
    func testAFileSavedByRenameThroughTheMountFollowsItsReplacementInBacking() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("A.hpwebsite", title: "Alpha", tags: ["t"], mtime: 1_000)
            corpus.file(Array("note.md".utf8), contents: Array("# One\n".utf8), mtime: 1_000)
        }
        try fixture.mount()
        let corpus = Corpus(path: fixture.backing)
        for file in ["A.hpwebsite/payload.plist", "note.md"] {
            let mounted = fixture.mounted("bundles/" + file)
            var original = try XCTUnwrap(RawFiles.read(mounted), file)
            // Saved through the mount: a temp file beside it, renamed over it.
            XCTAssertEqual(RawFiles.write(mounted + ".tmp", original + Array("<!-- mount -->\n".utf8)), 0, file)
            XCTAssertEqual(rename(mounted + ".tmp", mounted), 0, String(cString: strerror(Glibc.errno)))
            original += Array("<!-- mount -->\n".utf8)
            XCTAssertEqual(RawFiles.read(mounted), original, file)
            // Then saved in BACKING the same way.
            let replacement = original + Array("<!-- backing -->\n".utf8)
            corpus.write(fixture.backed(file) + ".tmp", replacement)
            XCTAssertEqual(rename(fixture.backed(file) + ".tmp", fixture.backed(file)), 0)
            XCTAssertTrue(eventually { RawFiles.read(mounted) == replacement }, "\(file): still \(RawFiles.read(mounted)?.text ?? "unreadable")")
            var status = stat()
            XCTAssertEqual(stat(mounted, &status), 0)
            XCTAssertEqual(status.st_nlink, 1, "\(file): the deleted file's node (no links)")
            // A write through the mount lands in BACKING's file.
            XCTAssertEqual(append("tail\n", to: mounted), 0)
            XCTAssertEqual(RawFiles.read(fixture.backed(file)), replacement + Array("tail\n".utf8), file)
        }
    }
}
