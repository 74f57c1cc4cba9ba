import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A recursive collection mounted (issue 31): notes and bundles at any depth
/// of folders are items named by their path, hidden folders are skipped,
/// view entries lead into bundles/ at that path, and items made, changed,
/// moved (with their folder) and removed at depth show live; edits through
/// a view and from the command line reach them, and undo restores bytes.
/// Every expectation is computed here from the files the test wrote.
final class RecursiveNotesMountTests: MountTestCase {
    /// What the test wrote, as the reference: path → (title, tags, mtime).
    private static let notes: [(path: String, text: String, title: String, tags: [String], mtime: Int)] = [
        ("inbox/alpha.md", "---\ntitle: Alpha\ntags: [swift, lang/swift]\n---\nBody\n", "Alpha", ["swift", "lang/swift"], 1_000),
        ("projects/2024/bravo.md", "+++\ntitle = \"Bravo\"\ntags = [\"swift\"]\n+++\n", "Bravo", ["swift"], 2_000),
        ("projects/2024/deep/charlie.md", "Intro\n# Charlie\n", "Charlie", [], 3_000),
        ("readme.txt", "plain\n", "readme", [], 5_000),
    ]

    private static func vault(_ corpus: Corpus) {
        corpus.write(corpus.path + "/.queryfs.toml", Array("recursive = true\n".utf8))
        for folder in ["inbox", "projects", "projects/2024", "projects/2024/deep", "archive", ".obsidian", "inbox/.trash"] {
            mkdir(corpus.path + "/" + folder, 0o755)
        }
        for note in notes { corpus.file(Array(note.path.utf8), contents: Array(note.text.utf8), mtime: note.mtime) }
        corpus.write(corpus.path + "/.obsidian/workspace.md", Array("---\ntitle: Hidden\n---\n".utf8))
        corpus.write(corpus.path + "/inbox/.trash/gone.md", Array("---\ntitle: Trashed\n---\n".utf8))
        corpus.bundle(Array("archive/delta.hpwebsite".utf8), title: "Delta", tags: ["swift"], mtime: 4_000)
    }

    private func names(_ view: String) -> [String] { (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).sorted() }
    private func target(_ view: String, endingWith suffix: String) -> String? {
        guard let entry = names(view).first(where: { $0.hasSuffix(suffix) }) else { return nil }
        return RawFiles.readlink(Array(fixture.mounted(view + "/" + entry).utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    func testItemsAtAnyDepthAreLiveBrowsableAndEditable() throws {
        fixture = MountedFixture(corpus: Self.vault)
        try fixture.mount()
        // The reference: every note and the bundle, by title; hidden folders left out.
        let all = Self.notes.map { ($0.path, $0.title, $0.tags, $0.mtime) } + [("archive/delta.hpwebsite", "Delta", ["swift"], 4_000)]
        let byTitle = all.sorted { $0.1.lowercased() < $1.1.lowercased() }
        let ext = { (path: String) in path.split(separator: ".").last.map { "." + $0 } ?? "" }
        XCTAssertEqual(names("by-name"), byTitle.enumerated().map { String(format: "%04d ", $0.offset + 1) + $0.element.1 + ext($0.element.0) })
        let swift = all.filter { $0.2.contains("swift") }.sorted { $0.3 > $1.3 }
        XCTAssertEqual(names("tag/swift"), swift.enumerated().map { String(format: "%04d ", $0.offset + 1) + $0.element.1 + ext($0.element.0) })
        for item in all {
            XCTAssertEqual(target("by-name", endingWith: " \(item.1)\(ext(item.0))"), "../bundles/" + item.0, "entries lead into bundles/ at the item's path")
        }
        let note = Self.notes[0]
        XCTAssertEqual(RawFiles.read(fixture.mounted("by-name/0001 Alpha.md")), Array(note.text.utf8), "read through the view")
        XCTAssertEqual(names("bundles/projects/2024"), ["bravo.md", "deep"])

        // Live at depth: a note written in a new folder, one retitled, a folder moved, a folder removed.
        let corpus = Corpus(path: fixture.backing)
        mkdir(fixture.backed("projects/2025"), 0o755)
        mkdir(fixture.backed("projects/2025/new"), 0o755)
        corpus.write(fixture.backed("projects/2025/new/echo.md"), Array("---\ntitle: Echo\ntags: [swift]\n---\n".utf8))
        XCTAssertTrue(eventually { self.names("tag/swift").contains { $0.hasSuffix(" Echo.md") } }, "\(names("tag/swift"))")
        XCTAssertEqual(target("tag/swift", endingWith: " Echo.md"), "../../bundles/projects/2025/new/echo.md")
        corpus.write(fixture.backed("projects/2024/bravo.md"), Array("+++\ntitle = \"Bravo Two\"\ntags = [\"swift\"]\n+++\n".utf8))
        XCTAssertTrue(eventually { self.names("by-name").contains { $0.hasSuffix(" Bravo Two.md") } }, "\(names("by-name"))")
        XCTAssertEqual(rename(fixture.backed("projects/2024"), fixture.backed("projects/y2024")), 0)
        XCTAssertTrue(eventually { self.target("by-name", endingWith: " Charlie.md") == "../bundles/projects/y2024/deep/charlie.md" },
                      "\(String(describing: target("by-name", endingWith: " Charlie.md")))")
        XCTAssertEqual(RawFiles.read(fixture.mounted("by-name/" + names("by-name").first { $0.hasSuffix(" Charlie.md") }!)),
                       Array(Self.notes[2].text.utf8), "a moved note reads through its new path")
        XCTAssertEqual(remove(fixture.backed("projects/y2024/deep/charlie.md")), 0)
        XCTAssertEqual(rmdir(fixture.backed("projects/y2024/deep")), 0)
        XCTAssertTrue(eventually { !self.names("by-name").contains { $0.hasSuffix(" Charlie.md") } }, "\(names("by-name"))")
        XCTAssertTrue(names("by-name").contains { $0.hasSuffix(" Bravo Two.md") }, "the rest of the folder stays")

        // Edits: a tag linked in through a view, one from the command line by path, each one line of the
        // note as git sees it; undo gives the bytes back.
        let git = { (arguments: [String]) in Program.run(["/usr/bin/env", "git", "-C", self.fixture.backing, "-c", "user.name=t", "-c", "user.email=t@t"] + arguments) }
        XCTAssertEqual(git(["init", "-q"]).status, 0)
        XCTAssertEqual(git(["add", "-A"]).status, 0)
        XCTAssertEqual(git(["commit", "-qm", "notes"]).status, 0)
        let alpha = fixture.backed("inbox/alpha.md")
        let before = RawFiles.read(alpha)
        XCTAssertEqual(mkdir(fixture.mounted("tag/reading"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/inbox/alpha.md", fixture.mounted("tag/reading/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(names("tag/reading"), ["0001 Alpha.md"])
        XCTAssertEqual(git(["diff", "--numstat"]).stdoutText, "1\t1\tinbox/alpha.md\n", "one line changed: the flow list")
        let cli = QueryfsBinary.run(["tag", fixture.backing, "projects/y2024/bravo.md", "--add", "cli"])
        XCTAssertEqual(cli.status, 0, cli.stderrText)
        XCTAssertTrue(eventually { self.names("tag/cli") == ["0001 Bravo Two.md"] }, "\(names("tag/cli"))")
        XCTAssertEqual(RawFiles.read(fixture.backed("projects/y2024/bravo.md"))?.text, "+++\ntitle = \"Bravo Two\"\ntags = [\"swift\", \"cli\"]\n+++\n")
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertTrue(eventually { self.names("tag").contains("cli") == false }, "\(names("tag"))")
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertTrue(eventually { self.names("tag/reading").isEmpty }, "\(names("tag/reading"))")
        XCTAssertEqual(RawFiles.read(alpha), before, "undone, byte for byte")
        XCTAssertEqual(git(["diff", "--numstat", "--", "inbox"]).stdoutText, "", "nothing left changed")
    }

    /// Nested tags (`lang/swift`) are nested folders: `tag/lang/swift/`, whose
    /// items are in `tag/lang/` too, beside `tag/lang/`'s own entries.
    /// `recursive` switched in a live mount's configuration is refused in
    /// one log line (remount to apply) and the mount goes on as it was;
    /// switched back, the file reloads again (found from outside: "reloaded",
    /// and views that disagreed with a scan until a remount).
    func testSwitchingRecursiveAsksForARemount() throws {
        fixture = MountedFixture(corpus: Self.vault)
        try fixture.mount(["--log", fixture.root + "/mount.log"])
        let before = names("by-name")
        XCTAssertEqual(before.count, 5)
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed(".queryfs.toml"), Array("recursive = false\n[views]\nflat = \"tag:swift\"\n".utf8))
        let log = { (try? String(contentsOfFile: self.fixture.root + "/mount.log", encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually { log().contains("makes the collection flat (items at the top only), which a mount applies when it starts") }, log())
        XCTAssertEqual(names("by-name"), before, "the mount goes on as it was")
        XCTAssertNil(RawFiles.list(fixture.mounted("flat")), "nothing of that edit applies")
        corpus.write(fixture.backed(".queryfs.toml"), Array("recursive = true\n[views]\nflat = \"tag:swift\"\n".utf8))
        XCTAssertTrue(eventually { RawFiles.list(self.fixture.mounted("flat")) != nil }, "back as mounted: reloaded")
        // Remounted, the switch applies.
        corpus.write(fixture.backed(".queryfs.toml"), Array("recursive = false\n".utf8))
        fixture.unmount()
        try fixture.mount()
        XCTAssertTrue(names("by-name").contains("0004 readme.txt"), "\(names("by-name"))")
        XCTAssertFalse(names("by-name").contains { $0.hasSuffix(" Alpha.md") }, "flat: no note below the top")
    }

    /// A link made in place of the configuration (a dotfile manager's) is
    /// read at once (found from outside: written by no one, it was never seen).
    func testALinkMadeInPlaceOfTheConfigurationIsRead() throws {
        fixture = MountedFixture(corpus: Self.vault)
        try fixture.mount(["--log", fixture.root + "/mount.log"])
        let elsewhere = fixture.root + "/dotfiles.toml"
        Corpus(path: fixture.backing).write(elsewhere, Array("recursive = true\n[views]\nlinked = \"tag:swift\"\n".utf8))
        XCTAssertEqual(unlink(fixture.backed(".queryfs.toml")), 0)
        XCTAssertEqual(symlink(elsewhere, fixture.backed(".queryfs.toml")), 0)
        XCTAssertTrue(eventually { RawFiles.list(self.fixture.mounted("linked")) != nil },
                      (try? String(contentsOfFile: fixture.root + "/mount.log", encoding: .utf8)) ?? "")
        let log = (try? String(contentsOfFile: fixture.root + "/mount.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains(": 1 view, 0 saved queries"), log)
    }

    func testNestedTagsAreNestedFolders() throws {
        fixture = MountedFixture(corpus: Self.vault)
        try fixture.mount()
        XCTAssertEqual(names("tag/lang"), ["0001 Alpha.md", "swift"])
        XCTAssertEqual(names("tag/lang/swift"), ["0001 Alpha.md"])
        XCTAssertEqual(target("tag/lang/swift", endingWith: " Alpha.md"), "../../../bundles/inbox/alpha.md")
        XCTAssertFalse(names("tag").contains { $0.contains("swift") && $0 != "swift" }, "no flattened name: \(names("tag"))")
        let views = QueryfsBinary.run(["views", fixture.mountPoint]).stdoutText
        XCTAssertTrue(views.contains("tag/lang\t1\n") && views.contains("tag/lang/swift\t1\n"), views)
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "tag/lang/swift", "--no-index"]).stdoutText, "0001 Alpha.md\n")
        // mkdir in a tag's folder makes a nested tag; a link into it tags the note with it.
        XCTAssertEqual(mkdir(fixture.mounted("tag/lang/rust"), 0o755), 0)
        XCTAssertEqual(names("tag/lang"), ["0001 Alpha.md", "rust", "swift"])
        XCTAssertEqual(symlink("../../../bundles/projects/2024/bravo.md", fixture.mounted("tag/lang/rust/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertTrue(RawFiles.read(fixture.backed("projects/2024/bravo.md"))?.text.contains("\"lang/rust\"") ?? false)
        XCTAssertEqual(names("tag/lang/rust"), ["0001 Bravo.md"])
        XCTAssertEqual(rmdir(fixture.mounted("tag/lang/rust")), -1, "not while a note carries it")
        // rm in a tag's folder: the note leaves it, with the tags nested under it.
        let alpha = try XCTUnwrap(names("tag/lang").first { $0.hasSuffix(" Alpha.md") })
        XCTAssertEqual(unlink(fixture.mounted("tag/lang/" + alpha)), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("inbox/alpha.md"))?.text, "---\ntitle: Alpha\ntags: [swift]\n---\nBody\n")
        // The folder of a nested tag it left stays, empty, until rmdir (as an
        // emptied tag folder does): `rm -r` read it and goes into it next.
        XCTAssertTrue(eventually { self.names("tag/lang") == ["0001 Bravo.md", "rust", "swift"] }, "\(names("tag/lang"))")
        XCTAssertEqual(names("tag/lang/swift"), [])
        XCTAssertEqual(rmdir(fixture.mounted("tag/lang/swift")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(names("tag/lang"), ["0001 Bravo.md", "rust"])
        // `rm -r tag/lang`: every note leaves it and the tags under it, and the folders go
        // (found from outside: "cannot remove 'tag/a/b'", and the folder left).
        let removed = Program.run(["rm", "-r", fixture.mounted("tag/lang")])
        XCTAssertEqual(removed.status, 0, removed.stderrText)
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/lang")))
        XCTAssertFalse(RawFiles.read(fixture.backed("projects/2024/bravo.md"))?.text.contains("lang/") ?? true)
    }
}
