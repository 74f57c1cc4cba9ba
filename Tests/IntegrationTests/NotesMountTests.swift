import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A folder of Markdown notes mounted (issue 31): titles and tags from
/// front matter (YAML and TOML) and headings, live as notes are written,
/// and edits through views written back into the front matter, line by
/// line, undone byte for byte.
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

        // Through a view: a tag linked in and one removed are written into the note's front matter,
        // one line each, the rest byte for byte; a rename retitles; undo gives the bytes back.
        let swiftNote = fixture.backed("swift.md")
        let before = try XCTUnwrap(RawFiles.read(swiftNote))
        XCTAssertEqual(symlink("../../bundles/swift.md", fixture.mounted("tag/reading/x")), -1, "no such tag folder yet")
        XCTAssertEqual(mkdir(fixture.mounted("tag/reading"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/swift.md", fixture.mounted("tag/reading/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(swiftNote)?.text, "---\ntitle: Swift on Linux\ntags: [swift, servers, reading]\n---\nBody\n")
        let entry = try XCTUnwrap(names("tag/servers").first { $0.hasSuffix(" Swift on Linux.md") })
        XCTAssertEqual(unlink(fixture.mounted("tag/servers/" + entry)), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(swiftNote)?.text, "---\ntitle: Swift on Linux\ntags: [swift, reading]\n---\nBody\n")
        XCTAssertEqual(names("tag/servers"), [], "emptied by rm, the folder stays until rmdir")
        XCTAssertEqual(rmdir(fixture.mounted("tag/servers")), 0)
        let ranked = try XCTUnwrap(names("by-name").first { $0.hasSuffix(" Swift on Linux.md") })
        XCTAssertEqual(rename(fixture.mounted("by-name/" + ranked), fixture.mounted("by-name/Swift: the sequel.md")), 0)
        XCTAssertEqual(RawFiles.read(swiftNote)?.text, "---\ntitle: \"Swift: the sequel\"\ntags: [swift, reading]\n---\nBody\n")
        for _ in 0..<3 { XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0) }
        XCTAssertEqual(RawFiles.read(swiftNote), before, "undone, byte for byte")
        XCTAssertTrue(eventually { self.names("tag/reading").isEmpty })
        XCTAssertEqual(rmdir(fixture.mounted("tag/reading")), 0)
        // A plain file that is no note takes tags in its attribute.
        XCTAssertEqual(symlink("../../bundles/plain.txt", fixture.mounted("tag/servers2")), -1)
        XCTAssertEqual(mkdir(fixture.mounted("tag/servers2"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/plain.txt", fixture.mounted("tag/servers2/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("plain.txt"))?.text, "no front matter\n", "a text note gets no block made")
        // A front matter that cannot take the edit refuses it whole (EROFS), and the note stays:
        // in the attribute, the tag would be one the note's own editor never shows.
        let badBefore = RawFiles.read(fixture.backed("bad.md"))
        XCTAssertEqual(symlink("../../bundles/bad.md", fixture.mounted("tag/servers2/y")), -1, "a map of tags")
        XCTAssertEqual(Glibc.errno, EROFS)
        XCTAssertEqual(RawFiles.read(fixture.backed("bad.md")), badBefore)
        XCTAssertNil(WriteChecks.tagAttribute(fixture.backed("bad.md")))
        XCTAssertTrue(eventually { ViewComparison.differences(backing: self.fixture.backing, mountPoint: self.fixture.mountPoint) == [] })
    }

    /// `mv tag/OLD tag/NEW` renames the tag in every note's front matter
    /// (YAML flow and block lists, TOML); and renaming a folder that holds only nested tags
    /// renames them (`a/b` under `a` → `z/b`). Found from outside: notes
    /// lost OLD and never got NEW, and the nested rename changed nothing
    /// on disk while the view showed it done.
    func testRenamingATagFolderRenamesTheTagInEveryNote() throws {
        fixture = MountedFixture { corpus in
            corpus.file(Array("flow.md".utf8), contents: Array("---\ntags: [p, q]\n---\nBody\n".utf8), mtime: 1_000)
            corpus.file(Array("block.md".utf8), contents: Array("---\ntags:\n  - q\n  - p # mine\n---\n".utf8), mtime: 2_000)
            corpus.file(Array("toml.md".utf8), contents: Array("+++\ntags = [\"p\"]\n+++\n".utf8), mtime: 4_000)
            corpus.file(Array("nested.md".utf8), contents: Array("---\ntags: [a/b, a/c]\n---\n".utf8), mtime: 5_000)
        }
        try fixture.mount()
        XCTAssertEqual(rename(fixture.mounted("tag/p"), fixture.mounted("tag/pp")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("flow.md"))?.text, "---\ntags: [pp, q]\n---\nBody\n")
        XCTAssertEqual(RawFiles.read(fixture.backed("block.md"))?.text, "---\ntags:\n  - q\n  - pp # mine\n---\n")
        XCTAssertEqual(RawFiles.read(fixture.backed("toml.md"))?.text, "+++\ntags = [\"pp\"]\n+++\n")
        XCTAssertTrue(eventually { self.names("tag/pp").count == 3 }, "\(names("tag/pp"))")

        XCTAssertEqual(rename(fixture.mounted("tag/a"), fixture.mounted("tag/z")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("nested.md"))?.text, "---\ntags: [z/b, z/c]\n---\n")
        XCTAssertTrue(eventually { self.names("tag/z/b").count == 1 && RawFiles.list(self.fixture.mounted("tag/a")) == nil },
                      "\(names("tag/z/b")) \(String(describing: RawFiles.list(self.fixture.mounted("tag/a"))))")
        XCTAssertTrue(eventually { ViewComparison.differences(backing: self.fixture.backing, mountPoint: self.fixture.mountPoint) == [] })
        // Each rename is one action: one undo takes it back in every note, byte for byte.
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("nested.md"))?.text, "---\ntags: [a/b, a/c]\n---\n")
        XCTAssertEqual(RawFiles.read(fixture.backed("flow.md"))?.text, "---\ntags: [pp, q]\n---\nBody\n", "the rename before stays")
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("flow.md"))?.text, "---\ntags: [p, q]\n---\nBody\n")
        XCTAssertEqual(RawFiles.read(fixture.backed("block.md"))?.text, "---\ntags:\n  - q\n  - p # mine\n---\n")
        XCTAssertEqual(RawFiles.read(fixture.backed("toml.md"))?.text, "+++\ntags = [\"p\"]\n+++\n")
    }

    /// Copying an entry into a tag folder where its item already shows
    /// (`cp -P`, GIO's copy, Nautilus's "Replace") changes nothing: the
    /// name is taken (a stale rank still names the entry), so the program
    /// unlinks it and links again, and the link takes the `rm` back. Found
    /// from outside: the note's nested tag `rock/metal` was lost.
    func testReplacingAnEntryByItselfChangesNothing() throws {
        let jazz = "---\ntitle: Jazz\ntags: [rock/metal, recipes]\n---\nbody\n"
        fixture = MountedFixture { corpus in
            corpus.file(Array("jazz.md".utf8), contents: Array(jazz.utf8), mtime: 1_000)
            corpus.file(Array("aaa.md".utf8), contents: Array("---\ntitle: Other\ntags: [rock]\n---\n".utf8), mtime: 2_000)
        }
        try fixture.mount()
        XCTAssertEqual(names("tag/rock"), ["0001 Other.md", "0002 Jazz.md", "metal"])
        let copy = Program.run(["cp", "-P", fixture.mounted("by-name/0001 Jazz.md"), fixture.mounted("tag/rock/")])
        XCTAssertEqual(copy.status, 0, copy.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("jazz.md"))?.text, jazz)
        XCTAssertTrue(eventually { ViewComparison.differences(backing: self.fixture.backing, mountPoint: self.fixture.mountPoint) == [] })
        // A link long after an rm joins as any link does.
        XCTAssertEqual(unlink(fixture.mounted("tag/rock/0002 Jazz.md")), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("jazz.md"))?.text, "---\ntitle: Jazz\ntags: [recipes]\n---\nbody\n")
    }

    /// Mounts notes given as (name, text, mtime).
    private func mountNotes(_ notes: [(name: String, text: String, mtime: Int)]) throws {
        fixture = MountedFixture { corpus in
            for note in notes { corpus.file(Array(note.name.utf8), contents: Array(note.text.utf8), mtime: note.mtime) }
        }
        try fixture.mount()
    }

    /// An editor that opened a note from a view saves it again after its
    /// first save moved the note's rank: it looks the name up first, and
    /// found nothing (found from outside: mousepad, "No such file or
    /// directory" on the second save). Another process's look still fails.
    func testAnEditorThatOpenedANoteFromAViewSavesItAgain() throws {
        try mountNotes([
            ("jazz.md", "---\ntitle: Jazz\ntags: [work]\n---\nbody\n", 1_000),
            ("aaa.md", "---\ntitle: Other\ntags: [work]\n---\n", 2_000),
        ])
        XCTAssertEqual(names("tag/work"), ["0001 Other.md", "0002 Jazz.md"])
        let opened = fixture.mounted("tag/work/0002 Jazz.md")
        let editor = """
            import os, sys, time
            path = sys.argv[1]; folder = os.path.dirname(path)
            open(path).read()
            with open(path, "a") as note: note.write("more\\n")
            for _ in range(300):
                if os.path.basename(path) not in os.listdir(folder): break
                time.sleep(0.01)
            os.lstat(path); os.stat(path)
            with open(path, "a") as note: note.write("again\\n")
            print("saved twice")
            """
        let run = Program.run(["python3", "-c", editor, opened])
        XCTAssertEqual(run.stdoutText, "saved twice\n", run.stderrText)
        XCTAssertEqual(names("tag/work"), ["0001 Jazz.md", "0002 Other.md"])
        XCTAssertNotEqual(Program.run(["stat", opened]).status, 0, "another process's look at the old name finds nothing")
        XCTAssertEqual(RawFiles.read(fixture.backed("jazz.md"))?.text, "---\ntitle: Jazz\ntags: [work]\n---\nbody\nmore\nagain\n")
    }

    /// Two notes of one title: a stale name means the one the process opened,
    /// never merely the nearest (found from outside: an editor's second save
    /// through the name it had opened wrote into the other note); for a
    /// process that opened neither, it means none.
    func testAStaleNameOfASharedTitleNeverLeadsToTheOtherNote() throws {
        try mountNotes([
            ("a.md", "---\ntitle: Dup\ntags: [work]\n---\nbody of A\n", 1_000),
            ("b.md", "---\ntitle: Dup\ntags: [work]\n---\nbody of B\n", 2_000),
            ("c.md", "---\ntitle: Other\ntags: [work]\n---\n", 3_000),
            ("d.md", "---\ntitle: More\ntags: [work]\n---\n", 4_000),
        ])
        XCTAssertEqual(names("tag/work"), ["0001 More.md", "0002 Other.md", "0003 Dup.md", "0004 Dup.md"])
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("tag/work/0003 Dup.md")), "../../bundles/b.md")
        let editor = """
            import os, sys, time
            path = sys.argv[1]; folder = os.path.dirname(path)
            with open(path, "a") as note: note.write("edit 1\\n")
            for _ in range(300):
                if os.listdir(folder)[0] == "0001 Dup.md": break
                time.sleep(0.01)
            with open(path, "a") as note: note.write("edit 2\\n")
            print("saved")
            """
        let run = Program.run(["python3", "-c", editor, fixture.mounted("tag/work/0003 Dup.md")])
        XCTAssertEqual(run.stdoutText, "saved\n", run.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("b.md"))?.text, "---\ntitle: Dup\ntags: [work]\n---\nbody of B\nedit 1\nedit 2\n")
        XCTAssertEqual(RawFiles.read(fixture.backed("a.md"))?.text, "---\ntitle: Dup\ntags: [work]\n---\nbody of A\n")
        // Another process's write through a stale name of the shared title is refused, not sent to either.
        let other = Program.run(["sh", "-c", "echo x >> \"$0\"", fixture.mounted("tag/work/0003 Dup.md")])
        XCTAssertNotEqual(other.status, 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("a.md"))?.text, "---\ntitle: Dup\ntags: [work]\n---\nbody of A\n")
    }

    /// A program that pasted an entry into a tag folder looks the name up
    /// next, its rank moved by the paste: found for it, not for others
    /// (found from outside: Nautilus said "Error while copying" after a
    /// paste that tagged the note).
    func testAProgramFindsTheEntryItPastedUnderItsName() throws {
        try mountNotes([
            ("d.md", "# Delta\n\nno front matter\n", 1_000),
            ("g.md", "---\ntitle: Gamma\ntags: [health]\n---\n", 2_000),
        ])
        let pasted = fixture.mounted("tag/health/0002 Delta.md")
        let paste = """
            import os, sys
            os.symlink("../../bundles/d.md", sys.argv[1])
            os.lstat(sys.argv[1])
            # A second paste of it is no "Replace?": the name is not taken for making one.
            os.symlink("../../bundles/d.md", sys.argv[1])
            print("pasted")
            """
        let run = Program.run(["python3", "-c", paste, pasted])
        XCTAssertEqual(run.stdoutText, "pasted\n", run.stderrText)
        XCTAssertEqual(names("tag/health"), ["0001 Delta.md", "0002 Gamma.md"])
        XCTAssertNotEqual(Program.run(["stat", pasted]).status, 0, "another process's look finds nothing")
    }

    /// `ln -sfn TARGET ENTRY` (a link onto an entry of the same item: a
    /// temporary name linked, then renamed onto the entry) succeeds and
    /// changes nothing, in a parent tag's folder too (found from outside:
    /// exit 1, "No such file or directory", and the item gained `lang`).
    func testLinkingAnEntryOntoItselfChangesNothing() throws {
        let jazz = "---\ntitle: Jazz\ntags: [lang/rust, recipes]\n---\nbody\n"
        fixture = MountedFixture { corpus in
            corpus.file(Array("jazz.md".utf8), contents: Array(jazz.utf8), mtime: 1_000)
        }
        try fixture.mount()
        let entry = fixture.mounted("tag/lang/0001 Jazz.md")
        let target = try XCTUnwrap(RawFiles.linkTarget(entry))
        let link = Program.run(["ln", "-sfn", target, entry])
        XCTAssertEqual(link.status, 0, link.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("jazz.md"))?.text, jazz)
        XCTAssertEqual(names("tag/lang"), ["0001 Jazz.md", "rust"])
    }

    /// A move between tag folders keeps a one-item block list a block list:
    /// the new tag is added before the old one goes (found from outside:
    /// `tags:\n  - alpha` became `tags: [beta]`).
    func testAMoveKeepsAOneItemBlockList() throws {
        fixture = MountedFixture { corpus in
            corpus.file(Array("one.md".utf8), contents: Array("---\ntitle: One\ntags:\n  - alpha\n---\nbody\n".utf8), mtime: 1_000)
        }
        try fixture.mount()
        XCTAssertEqual(mkdir(fixture.mounted("tag/beta"), 0o755), 0)
        XCTAssertEqual(rename(fixture.mounted("tag/alpha/0001 One.md"), fixture.mounted("tag/beta/0001 One.md")), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("one.md"))?.text, "---\ntitle: One\ntags:\n  - beta\n---\nbody\n")
    }

    /// A name given by a rename leads to the entry until the entry is
    /// renamed again, and `rm` of it works while it does (found from
    /// outside: `Alpha.md` still opened after a second rename to `Gamma.md`,
    /// and `rm Alpha.md` said ENOENT).
    func testANameGivenByARenameIsForgottenAtTheNextRename() throws {
        fixture = MountedFixture { corpus in
            corpus.file(Array("a.md".utf8), contents: Array("---\ntitle: Old\ntags: [book]\n---\n".utf8), mtime: 1_000)
            corpus.file(Array("b.md".utf8), contents: Array("---\ntitle: Keep\ntags: [book]\n---\n".utf8), mtime: 2_000)
        }
        try fixture.mount()
        XCTAssertEqual(rename(fixture.mounted("tag/book/0002 Old.md"), fixture.mounted("tag/book/Alpha.md")), 0)
        XCTAssertEqual(rename(fixture.mounted("tag/book/0001 Alpha.md"), fixture.mounted("tag/book/Gamma.md")), 0)
        var status = stat()
        XCTAssertTrue(eventually { lstat(self.fixture.mounted("tag/book/Alpha.md"), &status) != 0 }, "the first given name still leads to the entry")
        XCTAssertEqual(lstat(fixture.mounted("tag/book/Gamma.md"), &status), 0)
        XCTAssertEqual(unlink(fixture.mounted("tag/book/Gamma.md")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("a.md"))?.text, "---\ntitle: Gamma\ntags: []\n---\n")
    }

    /// A nested tag's folder is renamed as a top one is: within its parent
    /// tag, and out of it (found from outside: ENOENT, and a new folder
    /// made in tag/lang could not be named).
    func testANestedTagFolderIsRenamed() throws {
        fixture = MountedFixture { corpus in
            corpus.file(Array("n.md".utf8), contents: Array("---\ntags: [lang/rust, lang/tmp, x]\n---\n".utf8), mtime: 1_000)
        }
        try fixture.mount()
        XCTAssertEqual(mkdir(fixture.mounted("tag/lang/empty"), 0o755), 0)
        XCTAssertEqual(rename(fixture.mounted("tag/lang/empty"), fixture.mounted("tag/lang/named")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(rename(fixture.mounted("tag/lang/tmp"), fixture.mounted("tag/lang/kept")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("n.md"))?.text, "---\ntags: [lang/rust, lang/kept, x]\n---\n")
        XCTAssertEqual(rename(fixture.mounted("tag/lang/kept"), fixture.mounted("tag/top")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("n.md"))?.text, "---\ntags: [lang/rust, top, x]\n---\n")
        XCTAssertTrue(eventually { self.names("tag/lang") == ["0001 n.md", "named", "rust"] }, "\(names("tag/lang"))")
        // And a top-level one into another tag's folder (found from outside: EPERM).
        XCTAssertEqual(rename(fixture.mounted("tag/x"), fixture.mounted("tag/lang/x")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertEqual(RawFiles.read(fixture.backed("n.md"))?.text, "---\ntags: [lang/rust, top, lang/x]\n---\n")
    }

    /// A tag rename one item cannot take is no rename at all: the items
    /// renamed before it are renamed back, the folder keeps its name, and
    /// mv fails (found from outside: some items renamed, a ghost folder).
    func testATagRenameOneItemCannotTakeChangesNothing() throws {
        // Tags as one TOML string: no array, which is all a TOML edit writes.
        let toml = "+++\ntitle = \"Zulu\"\ntags = \"alpha\"\n+++\n"
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha item", tags: ["alpha"], mtime: 2_000)
            corpus.file(Array("z.md".utf8), contents: Array(toml.utf8), mtime: 1_000)
        }
        try fixture.mount()
        let payload = RawFiles.read(fixture.backed("a.hpwebsite/payload.plist"))
        XCTAssertEqual(names("tag/alpha").count, 2)
        XCTAssertEqual(rename(fixture.mounted("tag/alpha"), fixture.mounted("tag/beta")), -1, "one note's list cannot be changed")
        XCTAssertEqual(RawFiles.read(fixture.backed("a.hpwebsite/payload.plist")), payload, "renamed back")
        XCTAssertEqual(RawFiles.read(fixture.backed("z.md"))?.text, toml)
        XCTAssertTrue(eventually { self.names("tag/alpha").count == 2 && RawFiles.list(self.fixture.mounted("tag/beta")) == nil },
                      "\(names("tag/alpha")) \(String(describing: RawFiles.list(self.fixture.mounted("tag/beta"))))")
        // Taken back as undos: no action is left for `queryfs undo` to make again
        // (found from outside: it took the failed rename for the last action).
        let undo = QueryfsBinary.run(["undo", fixture.backing])
        XCTAssertTrue(undo.stderrText.contains("nothing to undo"), undo.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("a.hpwebsite/payload.plist")), payload)
    }

    /// A note whose block is never closed (or closed only past 64 KiB) is
    /// reported, and an edit is refused: a block made in front of it would
    /// turn the note's own keys into body text.
    func testANoteWhoseBlockIsNeverClosedIsNotGivenASecondOne() throws {
        let open = "---\ntitle: Unterminated\ntags: [u]\n"
        let huge = "---\ntitle: Huge\ntags: [t]\npad: \"" + String(repeating: "x", count: 70_000) + "\"\n---\nbody\n"
        fixture = MountedFixture { corpus in
            corpus.file(Array("open.md".utf8), contents: Array(open.utf8), mtime: 1_000)
            corpus.file(Array("huge.md".utf8), contents: Array(huge.utf8), mtime: 2_000)
        }
        try fixture.mount()
        let status = QueryfsBinary.run(["status", fixture.mountPoint]).stdoutText
        XCTAssertTrue(status.contains("never closed") && status.contains("longer than 64 KiB"), status)
        XCTAssertEqual(mkdir(fixture.mounted("tag/good"), 0o755), 0)
        for note in ["open.md", "huge.md"] {
            XCTAssertEqual(symlink("../../bundles/" + note, fixture.mounted("tag/good/" + note)), -1, note)
            XCTAssertEqual(Glibc.errno, EROFS, note)
            XCTAssertNil(WriteChecks.tagAttribute(fixture.backed(note)), note)
        }
        XCTAssertEqual(RawFiles.read(fixture.backed("open.md"))?.text, open)
        XCTAssertEqual(RawFiles.read(fixture.backed("huge.md"))?.text, huge)
        let command = QueryfsBinary.run(["tag", fixture.backing, "open.md", "--add", "good"])
        XCTAssertNotEqual(command.status, 0)
        XCTAssertEqual(command.stderrLines.count, 1, command.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("open.md"))?.text, open)
    }

    /// A title set through a view is journaled as a change of `title`:
    /// listed by `history`, and undone field by field once the note changed
    /// since (byte for byte would undo that change too).
    func testARetitledNoteIsJournaledAndUndone() throws {
        fixture = MountedFixture(corpus: Self.notes)
        try fixture.mount()
        let ranked = try XCTUnwrap(names("by-name").first { $0.hasSuffix(" A Hugo post.md") })
        XCTAssertEqual(rename(fixture.mounted("by-name/" + ranked), fixture.mounted("by-name/Hugo New.md")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertTrue(QueryfsBinary.run(["history", fixture.backing]).stdoutText.contains("Hugo New"))
        let note = fixture.backed("hugo.md")
        var bytes = try XCTUnwrap(RawFiles.read(note))
        bytes += Array("more\n".utf8)
        Corpus(path: fixture.backing).write(note, bytes)
        let undone = QueryfsBinary.run(["undo", fixture.backing])
        XCTAssertEqual(undone.status, 0, undone.stderrText)
        XCTAssertEqual(RawFiles.read(note)?.text, "+++\ntitle = \"A Hugo post\"\ntags = [\"swift\"]\n+++\nmore\n", "the title back, the later line kept")
    }
}
