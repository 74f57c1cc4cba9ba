import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import QueryFSEngine
@testable import QueryFSCollection

/// Notes' front matter (issue 31, first step): YAML read by libyaml, TOML
/// by toml++, what notes mean by their keys, and every hostile block bounded.
final class FrontMatterTests: XCTestCase {
    private func parse(_ text: String) -> FrontMatter.Parsed { FrontMatter.parse(Array(text.utf8)) }
    private func tags(_ parsed: FrontMatter.Parsed) -> [String] {
        guard case .array(let elements)? = parsed.payload["tags"] else { return [] }
        return elements.compactMap { if case .string(let tag) = $0 { tag } else { nil } }
    }

    func testYAMLKeysBecomeThePayload() {
        let note = parse("""
            ---
            title: "Reading: Swift on Linux"
            tags:
              - swift
              - linux/servers
            aliases: [Swift notes, SoL]
            date: 2024-03-05
            archived: false
            status: draft
            rating: 4
            ---
            # Not the title

            Body.
            """)
        XCTAssertEqual(note.problems, [])
        XCTAssertEqual(note.payload["title"], .string("Reading: Swift on Linux"))
        XCTAssertEqual(tags(note), ["swift", "linux/servers"], "a nested tag stays one tag")
        XCTAssertEqual(note.payload["aliases"], .array([.string("Swift notes"), .string("SoL")]))
        XCTAssertEqual(note.payload["created"], .date(1_709_596_800), "date is the creation")
        XCTAssertEqual(note.payload["archived"], .bool(false))
        XCTAssertEqual(note.payload["status"], .string("draft"))
        XCTAssertEqual(note.payload["rating"], .integer(4))
    }

    /// A top-level key given twice: the last is read (as Yams reads it),
    /// and the note is told, once per key; nested maps are not checked.
    func testAKeyGivenTwiceIsReported() {
        let parsed = FrontMatter.parse(Array("---\ntags: [a]\ntitle: T\ntags: [b]\ntags: [c]\nm: {x: 1, y: 2}\n---\nbody\n".utf8))
        XCTAssertEqual(parsed.payload["tags"], .array([.string("c")]))
        XCTAssertEqual(parsed.problems, ["front matter: tags is given more than once; the last is read"])
        XCTAssertEqual(FrontMatter.parse(Array("---\ntags: [a]\ntitle: T\n---\n".utf8)).problems, [])
    }

    func testTagsMayBeOneStringOfWordsOrCommasWithHashes() {
        XCTAssertEqual(tags(parse("---\ntags: \"swift, linux servers, #rust\"\n---\n")), ["swift", "linux servers", "rust"])
        // Unquoted, ` #rust` is a YAML comment: libyaml says so, and so does this.
        XCTAssertEqual(tags(parse("---\ntags: swift, linux servers, #rust\n---\n")), ["swift", "linux servers"])
        XCTAssertEqual(tags(parse("---\ntags: \"#swift #linux  a/b\"\n---\n")), ["swift", "linux", "a/b"])
        XCTAssertEqual(tags(parse("---\ntags: [2024, swift]\n---\n")), ["2024", "swift"])
        XCTAssertEqual(tags(parse("---\ntags:\n---\n")), [])
    }

    func testTOMLFrontMatter() {
        let note = parse("""
            +++
            title = "Hugo post"
            tags = ["go", "web"]
            date = 2023-01-02T03:04:05Z
            [params]
            draft = true
            +++
            Body
            """)
        XCTAssertEqual(note.problems, [])
        XCTAssertEqual(note.payload["title"], .string("Hugo post"))
        XCTAssertEqual(tags(note), ["go", "web"])
        XCTAssertEqual(note.payload["created"], .date(1_672_628_645))
        XCTAssertEqual(note.payload["params"], .dictionary(["draft": .bool(true)]))
    }

    /// Every kind of TOML value, and a parse error, read 20,000 times: the
    /// heap in use must not grow with them (TOMLKit's own types leaked every
    /// table, key list and value they read: about 1 KB a note, 20 MB here).
    func testTOMLFrontMatterLeaksNothing() {
        let note = Array("""
            +++
            title = "Leak check"
            tags = ["a", "b/c"]
            rating = 4
            score = 1.5
            draft = false
            day = 2024-03-05
            at = 10:11:12
            local = 2024-03-05T10:11:12
            offset = 2024-03-05T10:11:12+02:30
            nested = { inner = [1, { deep = "x" }] }
            [[list]]
            name = "one"
            +++
            Body
            """.utf8)
        let broken = Array("+++\ntitle = \n+++\n".utf8)
        let parsed = FrontMatter.parse(note)
        XCTAssertEqual(parsed.problems, [])
        XCTAssertEqual(parsed.payload["created"], nil)
        XCTAssertEqual(parsed.payload["nested"], .dictionary(["inner": .array([.integer(1), .dictionary(["deep": .string("x")])])]))
        XCTAssertEqual(parsed.payload["offset"], .date(1_709_624_472))
        XCTAssertEqual(parsed.payload["at"], .string("10:11:12"))
        XCTAssertEqual(FrontMatter.parse(broken).problems.count, 1)
        // Resident after freed memory is returned (Swift's Glibc module has no mallinfo2).
        func inUse() -> Int {
            MemoryTrim.returnFreedMemory()
            let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            return (statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        for _ in 0..<1_000 { _ = FrontMatter.parse(note); _ = FrontMatter.parse(broken) }
        let before = inUse()
        for _ in 0..<10_000 { _ = FrontMatter.parse(note); _ = FrontMatter.parse(broken) }
        // Measured: 0.13-0.2 MB of noise; with the parsed root left undeleted, 1.3 MB (TOMLKit's own types leak more).
        XCTAssertLessThan(inUse() - before, 640 << 10, "memory grew with every TOML note read")
    }

    /// Tags split as bytes and titles found line by line over bytes (both
    /// for speed) say what splitting Characters and validating every line
    /// said before, for random strings of the characters that matter.
    func testByteWiseTagsAndHeadingsAgreeWithTheCharacterWiseReading() {
        func referenceWords(_ text: String, key: String) -> [String] {
            let separators: Set<Character> = key == "tags" && !text.contains(",") ? [" ", "\t"] : [","]
            return text.split(whereSeparator: { separators.contains($0) })
                .map { String($0).trimming(" \t") }
                .map { key == "tags" && $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }
                .filter { !$0.isEmpty }
        }
        func referenceHeading(_ body: String) -> String? {
            var inFence = false
            for line in Array(body.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
                let text = String(decoding: line, as: UTF8.self)
                let stripped = text.trimming(" \t\r")
                if stripped.hasPrefix("```") || stripped.hasPrefix("~~~") { inFence.toggle() }
                guard !inFence, text.hasPrefix("# ") else { continue }
                var title = String(text.dropFirst(2)).trimming(" \t\r")
                let withoutHashes = title.reversed().drop { $0 == "#" }
                if withoutHashes.count < title.count, withoutHashes.first == " " { title = String(withoutHashes.reversed()).trimming(" \t") }
                if !title.isEmpty { return title }
            }
            return nil
        }
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "b/c", " ", ",", "#", "\t", "é", "日本", "x#y"]
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let quoted = JSON.string(text)
            for key in ["tags", "aliases"] {
                let parsed = FrontMatter.parse(Array("---\n\(key): \(quoted)\n---\n".utf8))
                let expected = referenceWords(text, key: key)
                XCTAssertEqual(parsed.payload[key], expected.isEmpty && text.isEmpty ? .array([]) : .array(expected.map(PayloadValue.string)),
                               "\(key): \(quoted)")
            }
        }
        let lines = ["# Title", "```", "~~~", "  ```", "text", "#no", "# ", "# Hash ##", "# é ", "\t# not", "# a #", "", "\r"]
        for _ in 0..<2_000 {
            let body = (0..<Int.random(in: 0...6, using: &generator)).map { _ in lines.randomElement(using: &generator)! }.joined(separator: "\n")
            XCTAssertEqual(FrontMatter.parse(Array(body.utf8)).payload["title"], referenceHeading(body).map(PayloadValue.string), body)
        }
    }

    func testWithoutATitleTheFirstHeadingIsTheTitle() {
        XCTAssertEqual(parse("Intro\n\n# The heading #\n\n# Second\n").payload["title"], .string("The heading"))
        XCTAssertEqual(parse("```\n# not a heading\n```\n## Level two\n# Real\n").payload["title"], .string("Real"))
        XCTAssertEqual(parse("---\ntags: [a]\n---\n# From the body\n").payload["title"], .string("From the body"))
        XCTAssertNil(parse("no heading at all\n").payload["title"])
        XCTAssertEqual(parse("\u{FEFF}---\r\ntitle: CRLF and a BOM\r\n---\r\nx").payload["title"], .string("CRLF and a BOM"))
    }

    /// Every hostile block is one problem, never a trap, a hang or a blow-up.
    func testHostileBlocksAreBoundedAndSaidOnce() {
        // Billion laughs: each alias stands for ten of the one before.
        var laughs = "---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        for level in 1...9 {
            let previous = level == 1 ? "a" : "a\(level - 1)"
            laughs += "a\(level): &a\(level) [" + Array(repeating: "*\(previous)", count: 10).joined(separator: ",") + "]\n"
        }
        laughs += "---\n"
        let started = Date()
        let bomb = parse(laughs)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertEqual(bomb.payload, [:])
        XCTAssertEqual(bomb.problems.count, 1)
        XCTAssertTrue(bomb.problems[0].contains("more than 20000 values"), "\(bomb.problems)")

        let deep = parse("---\nx: " + String(repeating: "[", count: 50_000) + "\n---\n")
        XCTAssertEqual(deep.problems.count, 1)
        XCTAssertTrue(deep.problems[0].contains("nested deeper than 64"), "\(deep.problems)")

        let huge = FrontMatter.parse(Array(("---\ntitle: " + String(repeating: "x", count: 100_000)).utf8.prefix(FrontMatter.Limits.headBytes)))
        XCTAssertTrue(huge.problems.first?.contains("longer than 64 KiB") == true, "\(huge.problems)")

        let mapTags = parse("---\ntags: {a: 1}\n---\n")
        XCTAssertEqual(tags(mapTags), [])
        XCTAssertTrue(mapTags.problems.first?.contains("tags: a dictionary, not a list") == true, "\(mapTags.problems)")

        let notUTF8 = FrontMatter.parse(Array("---\ntitle: ".utf8) + [0xFF, 0xFE] + Array("\n---\n".utf8))
        XCTAssertEqual(notUTF8.problems, ["front matter: not UTF-8; ignored"])

        let broken = parse("---\ntitle: [unclosed\n---\n")
        XCTAssertTrue(broken.problems.first?.hasPrefix("front matter: not YAML:") == true, "\(broken.problems)")

        let list = parse("---\n- a\n- b\n---\n")
        XCTAssertTrue(list.problems.first?.contains("not a map of keys") == true, "\(list.problems)")

        // Found by fuzzing: toml++ aborted the process on this date-time.
        let abort = parse("+++\ne = 4046-01-02T--0s:04:05Z\nRange[Z\n+++\nbody\n")
        XCTAssertTrue(abort.problems.first?.contains("a date-time whose time does not start with a digit") == true, "\(abort.problems)")

        let badTOML = parse("+++\ntitle = \n+++\n")
        XCTAssertTrue(badTOML.problems.first?.hasPrefix("front matter: not TOML:") == true, "\(badTOML.problems)")
    }

    /// A folder of notes scanned: fields from front matter, the heading, the
    /// attribute; a bad note is reported and the others are read.
    func testTheScanReadsNotesAndTheirTags() throws {
        let backing = TemporaryBacking()
        backing.write(backing.path + "/one.md", "---\ntitle: One\ntags: [swift]\ncreated: 2020-01-01\n---\nbody\n")
        backing.write(backing.path + "/two.markdown", "# Two from a heading\n")
        backing.write(backing.path + "/bad.md", "---\ntags: {a: b}\n---\n")
        backing.write(backing.path + "/data.csv", "---\ntitle: not a note\n---\n")
        let catalog = try Catalog.load(backing: backing.path)
        let items = Dictionary(uniqueKeysWithValues: catalog.items.map { ($0.name.description, $0) })
        XCTAssertEqual(items["one.md"]?.title, "One")
        XCTAssertEqual(items["one.md"]?.tags, ["swift"])
        XCTAssertEqual(items["one.md"]?.created, Timestamp(seconds: 1_577_836_800))
        XCTAssertEqual(items["two.markdown"]?.title, "Two from a heading")
        XCTAssertEqual(items["bad.md"]?.problems.count, 1)
        XCTAssertNotEqual(items["data.csv"]?.title, "not a note", "only notes are read for front matter")
    }

    /// A mistake is reported at its line in the note (the fence is line 1).
    func testMistakesAreReportedAtTheirLineInTheNote() {
        let yaml = FrontMatter.parse(Array("---\ntitle: ok\ntags: [a\n---\n".utf8))
        XCTAssertEqual(yaml.problems.count, 1)
        XCTAssertTrue(yaml.problems[0].contains("at line 4"), "\(yaml.problems)")  // where libyaml gave up: the closing fence
        let toml = FrontMatter.parse(Array("+++\ntitle = \"ok\"\ntags = = 1\n+++\n".utf8))
        XCTAssertEqual(toml.problems.count, 1)
        XCTAssertTrue(toml.problems[0].contains("(line 3)"), "\(toml.problems)")
    }

    func testObsidianDateTimesWithoutSecondsAreDates() {
        let note = FrontMatter.parse(Array("---\ncreated: 2024-06-04T13:33\nupdated: \"2024-06-05 08:00\"\n---\n".utf8))
        XCTAssertEqual(note.payload["created"], .date(1_717_507_980))
        XCTAssertEqual(note.payload["updated"], .date(1_717_574_400))
    }

    func testInlineTagsWhereAsked() {
        let text = """
            ---
            tags: [fm]
            ---
            # Heading is no tag
            See #reading and #lang/swift, not page#anchor, not #2024, `#code`, ## also no.
            ```
            #fenced
            ```
            #fm again and #écriture
            """
        XCTAssertEqual(FrontMatterEditor.tags(FrontMatter.parse(Array(text.utf8))), ["fm"], "off unless asked")
        XCTAssertEqual(FrontMatterEditor.tags(FrontMatter.parse(Array(text.utf8), inlineTags: true)), ["fm", "reading", "lang/swift", "écriture"])
    }
}
