import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection

/// Edits written back into front matter (issue 31): as small as the edit,
/// the rest of the note byte for byte, and refused where the result would
/// not read back as meant.
final class FrontMatterEditorTests: XCTestCase {
    private func tags(_ note: String, _ tags: [String], name: String = "n.md") throws -> String {
        String(decoding: try FrontMatterEditor.settingTags(tags, in: Array(note.utf8), name: ItemName(name)), as: UTF8.self)
    }

    private func set(_ note: String, _ key: String, _ value: PayloadValue) throws -> String {
        String(decoding: try FrontMatterEditor.setting(key, to: value, in: Array(note.utf8), name: ItemName("n.md")), as: UTF8.self)
    }

    func testABlockListKeepsItsStyleCommentsAndBody() throws {
        let note = "---\n# a comment\ntitle: \"Block: list\"\ntags:\n  - alpha\n  - beta   # trailing\nstatus: draft\n---\nBody stays\n"
        XCTAssertEqual(try tags(note, ["alpha", "beta", "gamma"]),
                       "---\n# a comment\ntitle: \"Block: list\"\ntags:\n  - alpha\n  - beta   # trailing\n  - gamma\nstatus: draft\n---\nBody stays\n")
        XCTAssertEqual(try tags(note, ["beta"]), "---\n# a comment\ntitle: \"Block: list\"\ntags:\n  - beta   # trailing\nstatus: draft\n---\nBody stays\n")
        XCTAssertEqual(try tags(note, []), "---\n# a comment\ntitle: \"Block: list\"\ntags: []\nstatus: draft\n---\nBody stays\n")
    }

    func testAFlowListAndAStringKeepTheirStyle() throws {
        XCTAssertEqual(try tags("---\ntags: [alpha, \"quoted\"]\n---\nB\n", ["alpha", "quoted", "lang/swift"]),
                       "---\ntags: [alpha, \"quoted\", lang/swift]\n---\nB\n")
        XCTAssertEqual(try tags("---\ntags: [alpha, beta, gamma]\n---\n", ["alpha", "gamma"]), "---\ntags: [alpha, gamma]\n---\n")
        XCTAssertEqual(try tags("---\ntags: [alpha, beta]\n---\n", ["beta"]), "---\ntags: [beta]\n---\n")
        XCTAssertEqual(try tags("---\ntags: []\n---\n", ["a"]), "---\ntags: [a]\n---\n")
        XCTAssertEqual(try tags("---\ntags: alpha, beta\n---\n# Str\n", ["beta", "new"]), "---\ntags: beta, new\n---\n# Str\n")
        XCTAssertEqual(try tags("---\ntags: \"#alpha #beta\"\n---\n", ["alpha", "beta", "gamma"]), "---\ntags: \"#alpha #beta #gamma\"\n---\n")
        XCTAssertEqual(try tags("---\ntags:\n---\n", ["a"]), "---\ntags: [a]\n---\n")
    }

    func testTagsThatNeedQuotesGetThem() throws {
        XCTAssertEqual(try tags("---\ntags: [a]\n---\n", ["a", "true"]), "---\ntags: [a, \"true\"]\n---\n")
        XCTAssertEqual(try tags("---\ntags: [a]\n---\n", ["a", "x:y"]), "---\ntags: [a, x:y]\n---\n")
        XCTAssertEqual(try tags("---\ntags:\n  - a\n---\n", ["a", "@home"]), "---\ntags:\n  - a\n  - \"@home\"\n---\n")
        // What a note cannot hold as one tag (it reads a comma or a space as a separator, drops a leading #): refused.
        XCTAssertThrowsError(try tags("---\ntags: [a]\n---\n", ["a", "x, y"]))
        XCTAssertThrowsError(try tags("---\ntags: [a]\n---\n", ["a", "#hash"]))
        XCTAssertEqual(try tags("---\ntitle: T\n---\n", ["2024"]).contains("\"2024\""), true)
    }

    /// What YAML reads as a line break or does not print (C1 controls,
    /// U+2028, U+2029) is written escaped in double quotes: raw, the
    /// read-back check refused the edit (found from outside).
    func testLineSeparatorsAndC1ControlsAreWrittenEscaped() throws {
        for (title, written) in [("A\u{2028}B", "A\\u2028B"), ("A\u{85}B", "A\\u0085B"), ("A\u{9B}B", "A\\u009bB"), ("A\u{2029}B", "A\\u2029B")] {
            XCTAssertEqual(try set("---\ntitle: N\n---\n", "title", .string(title)), "---\ntitle: \"\(written)\"\n---\n")
        }
        XCTAssertEqual(try set("+++\ntitle = \"N\"\n+++\n", "title", .string("A\u{2028}B")), "+++\ntitle = \"A\\u2028B\"\n+++\n")
    }

    func testNewBlocksAndKeys() throws {
        XCTAssertEqual(try tags("# No front matter\nbody\n", ["new"]), "---\ntags:\n  - new\n---\n# No front matter\nbody\n")
        XCTAssertEqual(try tags("---\ntitle: T\n---\n", ["new"]), "---\ntitle: T\ntags:\n  - new\n---\n")
        XCTAssertEqual(try tags("---\r\ntitle: T\r\n---\r\nbody\r\n", ["new"]), "---\r\ntitle: T\r\ntags:\r\n  - new\r\n---\r\nbody\r\n", "the note's line breaks")
        XCTAssertThrowsError(try tags("no front matter\n", ["new"], name: "n.txt"), "a text note gets no block made")
    }

    func testTOMLArraysAndValues() throws {
        let note = "+++\ntitle = \"Toml\"\ntags = [\"alpha\"]\n[extra]\nx = 1\n+++\nbody\n"
        XCTAssertEqual(try tags(note, ["alpha", "new"]), "+++\ntitle = \"Toml\"\ntags = [\"alpha\", \"new\"]\n[extra]\nx = 1\n+++\nbody\n")
        XCTAssertEqual(try tags(note, ["new"]), "+++\ntitle = \"Toml\"\ntags = [\"new\"]\n[extra]\nx = 1\n+++\nbody\n")
        XCTAssertEqual(try set(note, "title", .string("Re \"titled\"")), "+++\ntitle = \"Re \\\"titled\\\"\"\ntags = [\"alpha\"]\n[extra]\nx = 1\n+++\nbody\n")
        XCTAssertEqual(try set(note, "archived", .bool(true)), "+++\ntitle = \"Toml\"\ntags = [\"alpha\"]\narchived = true\n[extra]\nx = 1\n+++\nbody\n",
                       "a new key goes after the top-level keys: after a table header it would belong to the table")
        XCTAssertEqual(try set("+++\ntitle = \"T\"\n\n# the extras\n[extra]\n+++\n", "n", .integer(1)),
                       "+++\ntitle = \"T\"\nn = 1\n\n# the extras\n[extra]\n+++\n", "the comment above a table stays the table's")
        XCTAssertEqual(try set("+++\ntitle = \"T\"\n+++\n", "n", .integer(1)), "+++\ntitle = \"T\"\nn = 1\n+++\n")
        XCTAssertEqual(try set("+++\n+++\nB\n", "n", .integer(1)), "+++\nn = 1\n+++\nB\n")
    }

    /// A TOML number (or date) takes a new value in place, as a string or a
    /// boolean does (found from outside: `set payload.rating=4` was refused
    /// on `rating = 3`, also on a key the command itself had written).
    func testATOMLNumberTakesANewValue() throws {
        let note = "+++\ntitle = \"T\"\nrating = 3 # stars\nratio = -1.5e3\nbig = 1_000\nhex = 0x1F\nwhen = 2024-05-01T10:00:00Z\n[extra]\nrating = 9\n+++\nbody\n"
        XCTAssertEqual(try set(note, "rating", .integer(4)), note.replacingOccurrences(of: "rating = 3 #", with: "rating = 4 #"))
        XCTAssertEqual(try set(note, "ratio", .real(2.5)), note.replacingOccurrences(of: "-1.5e3", with: "2.5"))
        XCTAssertEqual(try set(note, "big", .integer(7)), note.replacingOccurrences(of: "1_000", with: "7"))
        XCTAssertEqual(try set(note, "hex", .string("text")), note.replacingOccurrences(of: "0x1F", with: "\"text\""))
        XCTAssertEqual(try set(note, "when", .integer(1)), note.replacingOccurrences(of: "2024-05-01T10:00:00Z", with: "1"))
        XCTAssertEqual(try set(set(note, "rating", .integer(4)), "rating", .integer(5)), note.replacingOccurrences(of: "rating = 3 #", with: "rating = 5 #"))
        // A key that is no bare key is written quoted, and found again so.
        let unicode = try set("+++\ntitle = \"T\"\n+++\n", "ünï c", .integer(1))
        XCTAssertEqual(unicode, "+++\ntitle = \"T\"\n\"ünï c\" = 1\n+++\n")
        XCTAssertEqual(try set(unicode, "ünï c", .integer(2)), "+++\ntitle = \"T\"\n\"ünï c\" = 2\n+++\n")
        // A date with a blank before its time is two words: the edit is refused, the note as it was.
        XCTAssertThrowsError(try set("+++\nwhen = 2024-05-01 10:00:00\n+++\n", "when", .integer(1)))
    }

    /// A TOML array over several lines, with comments and a trailing comma
    /// (Hugo's own style), takes an edit line by line (found from outside: refused).
    func testATOMLArrayOverLinesTakesEdits() throws {
        let note = "+++\ntitle = \"m\"\ntags = [\n  \"alpha\", # first\n  \"beta\",\n]\n+++\nB\n"
        XCTAssertEqual(try tags(note, ["alpha", "beta", "new"]), "+++\ntitle = \"m\"\ntags = [\n  \"alpha\", # first\n  \"beta\",\n  \"new\",\n]\n+++\nB\n",
                       "a line of its own, as the others")
        XCTAssertEqual(try tags("+++\ntags = [\n    \"a\"\n  ]\n+++\n", ["a", "b"]), "+++\ntags = [\n    \"a\",\n    \"b\"\n  ]\n+++\n")
        XCTAssertEqual(try tags("---\r\ntags: [\r\n  a,\r\n  b,\r\n]\r\n---\r\n", ["a", "b", "c"]), "---\r\ntags: [\r\n  a,\r\n  b,\r\n  c,\r\n]\r\n---\r\n")
        XCTAssertEqual(try tags(note, ["alpha"]), "+++\ntitle = \"m\"\ntags = [\n  \"alpha\", # first\n]\n+++\nB\n")
        XCTAssertEqual(try tags(note, ["beta"]), "+++\ntitle = \"m\"\ntags = [\n  \"beta\",\n]\n+++\nB\n")
        XCTAssertEqual(try tags("+++\ntags = [\n  \"only\",\n]\n+++\n", []), "+++\ntags = [\n]\n+++\n")
        XCTAssertEqual(try tags("+++\ntags = [\"alpha\",\n  \"beta\"]\n+++\n", ["alpha", "beta", "c"]), "+++\ntags = [\"alpha\",\n  \"beta\", \"c\"]\n+++\n")
        // One string of tags is no array: said so.
        XCTAssertThrowsError(try tags("+++\ntags = \"alpha, beta\"\n+++\n", ["alpha", "beta", "new"])) { error in
            XCTAssertTrue("\(error)".contains("not a TOML array of strings"), "\(error)")
        }
    }

    func testTitleAndArchivedInYAML() throws {
        XCTAssertEqual(try set("---\ntitle: Old # note\ntags: [a]\n---\n", "title", .string("New: one")), "---\ntitle: \"New: one\" # note\ntags: [a]\n---\n")
        XCTAssertEqual(try set("---\ntags: [a]\n---\n# Heading\n", "title", .string("Given")), "---\ntags: [a]\ntitle: Given\n---\n# Heading\n")
        XCTAssertEqual(try set("---\narchived: false\n---\n", "archived", .bool(true)), "---\narchived: true\n---\n")
    }

    func testWhatCannotBeWrittenInPlaceIsRefused() {
        XCTAssertThrowsError(try tags("---\ntags: {a: 1}\n---\n", ["b"]))
        XCTAssertThrowsError(try tags("---\nbase: &b [a]\ntags: *b\n---\n", ["a", "c"]))
        XCTAssertThrowsError(try tags("---\ntags:\n  - [nested]\n  - a\n---\n", ["a", "c"]))
        XCTAssertThrowsError(try set("---\ntitle: |\n  multi\n---\n", "title", .string("x")))
        // A plain value the reader takes for a number, a boolean or a date is
        // no text of tags (it is ignored, with a problem): refused, not written over.
        for value in ["42", "2.5", "yes", "2024-05-01"] {
            XCTAssertThrowsError(try tags("---\ntags: \(value)\n---\n", [value, "new"]), value)
            XCTAssertEqual(try tags("---\ntags: \(value)\n---\n", []), "---\ntags: \(value)\n---\n", "no tags to take: untouched")
        }
        // Quoted, it is text: one tag, extended in its own style.
        XCTAssertEqual(try tags("---\ntags: \"42\"\n---\n", ["42", "new"]), "---\ntags: \"42, new\"\n---\n")
    }

    /// A block opened and never closed within the head (or closed only past
    /// 64 KiB) is the note's own, unreadable: no block is made in front of
    /// it (that would leave its keys as body text), and the reader says why.
    func testABlockNeverClosedIsNeitherEditedNorHidden() {
        let open = "---\ntitle: Unterminated\ntags: [u]\nbody without a closing fence\n"
        XCTAssertThrowsError(try tags(open, ["u", "good"])) { error in
            XCTAssertTrue("\(error)".contains("not closed"), "\(error)")
        }
        XCTAssertThrowsError(try set(open, "title", .string("x")))
        XCTAssertThrowsError(try tags("+++\ntitle = \"T\"\n", ["good"]))
        let long = "---\ntitle: Huge\npad: \"" + String(repeating: "x", count: FrontMatter.Limits.headBytes) + "\"\n---\nbody\n"
        XCTAssertThrowsError(try tags(long, ["good"]))
        XCTAssertEqual(FrontMatter.parse(Array(open.utf8)).problems, ["front matter: the block that --- opens is never closed; read as text"])
        XCTAssertEqual(FrontMatter.parse(Array(long.utf8.prefix(FrontMatter.Limits.headBytes))).problems,
                       ["front matter: longer than 64 KiB; ignored"])
        // A first line that only starts like a fence opens nothing.
        XCTAssertEqual(FrontMatter.parse(Array("----\n# Rule\n".utf8)).problems, [])
        XCTAssertEqual(try tags("----\n# Rule\n", ["new"]), "---\ntags:\n  - new\n---\n----\n# Rule\n")
    }
}
