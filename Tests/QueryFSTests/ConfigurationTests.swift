import XCTest
import Foundation
import Logging
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// `.queryfs.toml`: TOML 1.0 as TOMLKit reads it, and the configuration
/// it holds, with every error at its file, line and column.
final class ConfigurationTests: XCTestCase {
    private let now = Timestamp(seconds: 1_700_000_000)

    private func configuration(_ text: String) throws -> Configuration {
        try Configuration(parsing: text, file: ".queryfs.toml", now: now)
    }

    private func failure(_ text: String) -> ConfigurationError? {
        thrown(ConfigurationError.self) { _ = try configuration(text) }
    }

    /// All of TOML 1.0 (TOMLKit reads it): multi-line and literal strings,
    /// inline tables, dotted keys, comments inside arrays.
    func testAllOfTOMLIsAccepted() throws {
        let config = try configuration(#"""
            # a comment
            ignore = [
              "*.tmp",   # temporary files
              'Drafts\*',
            ]
            queries = ["""tag:a
            -archived""", '''payload.x="q"''']
            fields = { title = ["headline", "title"] }
            views.later = "tag:later"
            views."reading/today" = "tag:today"   # quoted key
            views.bare-key_2 = 'tag:x'
            """#)
        XCTAssertEqual(config.ignore, ["*.tmp", "Drafts\\*"])
        XCTAssertEqual(config.savedQueries, ["tag:a\n-archived", "payload.x=\"q\""])
        XCTAssertEqual(config.sources.title, ["headline", "title"])
        XCTAssertEqual(config.views.map(\.path), [["later"], ["reading", "today"], ["bare-key_2"]], "in the order written")
    }

    func testTOMLErrorsSayWhere() {
        func place(_ text: String) -> [Int]? { failure(text).map { [$0.line, $0.column] } }
        XCTAssertEqual(place("a = \"open")?.first, 1)
        XCTAssertEqual(place("ignore = []\nb = nope")?.first, 2)
        XCTAssertEqual(place("ignore = []\nignore = []")?.first, 2)
        XCTAssertEqual(place("[views]\n[views]")?.first, 2)
        XCTAssertEqual(place("ignore = [\"a\", 2\n")?.first, 1)
        XCTAssertEqual(failure("a = 1 b")?.description.hasPrefix(".queryfs.toml:1:"), true)
        XCTAssertNotNil(failure("a = \"\\q\""))
    }

    func testViewsFieldsAndIgnore() throws {
        let config = try configuration("""
            ignore = ["*.tmp", "Drafts*"]
            [fields]
            title = ["headline", "title"]
            tags = "keywords"
            [views]
            "reading/today" = "tag:today -archived"
            "reading/later" = "tag:later sort:title"
            swift = "tag:swift"
            """)
        XCTAssertEqual(config.views.map(\.path), [["reading", "today"], ["reading", "later"], ["swift"]])
        XCTAssertEqual(config.views[1].query.order, Ordering([.init(.title, ascending: true)]))
        XCTAssertEqual(config.sources.title, ["headline", "title"])
        XCTAssertEqual(config.sources.tags, ["keywords"])
        XCTAssertEqual(config.sources.url, FieldSources().url)
        XCTAssertTrue(config.ignores("notes.tmp"))
        XCTAssertTrue(config.ignores("Drafts 2024"))
        XCTAssertFalse(config.ignores("A.hpwebsite"))
        XCTAssertEqual(config.viewDefinitions.map(\.pathString), ["reading/today", "reading/later", "swift"])
    }

    func testConfigurationErrorsSayFileLineAndColumn() {
        XCTAssertEqual(failure("[views]\nx = \"tag:a colour=red\"")?.description,
                       ".queryfs.toml:2:12: view 'x': unknown field 'colour' (fields: name, ext, title, archived, tags, url, modified, created, size, conflict, tag, payload.KEY)")
        XCTAssertEqual(failure("[views]\nby-name = \"tag:a\"")?.line, 2)
        XCTAssertEqual(failure("[views]\n\"a//b\" = \"tag:a\"")?.message, "'a//b' is not a view path ('' cannot be a folder name)")
        XCTAssertEqual(failure("[views]\na = \"tag:x\"\n\"a/b\" = \"tag:y\"")?.message, "'a' is a view and also holds 'a/b'")
        XCTAssertEqual(failure("[views]\na = 3")?.message, "a view is a query in quotes")
        for hidden in [".queryfs", ".Trash-0", ".Trash", ".mine/x"] {
            XCTAssertTrue(failure("[views]\n\"\(hidden)\" = \"tag:a\"")?.message.contains("hidden names at the top of the mount are its own") == true, hidden)
        }
        XCTAssertNil(failure("[views]\n\"reading/.later\" = \"tag:a\""), "hidden below the top: a view's own")
        XCTAssertEqual(failure("[fields]\ncolour = [\"c\"]")?.line, 2)
        XCTAssertEqual(failure("[other]\n")?.message, "unknown table [other] (tables: [views], [fields], [conflicts])")
        XCTAssertEqual(failure("ignor = []")?.message, "unknown setting 'ignor' (settings: format, ignore, recursive, payload, sidecars, inline-tags, queries, desktop-entries, [views], [fields], [conflicts])")
        XCTAssertEqual(failure("ignore = [1]")?.message, "'ignore' takes strings")
        XCTAssertEqual(failure("[views]\nx = \"tag:a\nb")?.line, 2, "an unclosed string")
        XCTAssertEqual(failure("[views]\nx = \"tag:a\nb")?.message, "a string not closed on its line (its closing \" is missing)")
        XCTAssertNil(failure("[views]\nx = \"tag:\\\"a b\\\"\"\ny = 'tag:b'\n"), "escaped quotes, and literal strings side by side")
    }

    func testSavedQueries() throws {
        XCTAssertEqual(try configuration("queries = [\"tag:a\", \"-archived sort:title\"]").savedQueries, ["tag:a", "-archived sort:title"])
        XCTAssertEqual(try configuration("queries = [\"payload.kind=x\"]").savedQueryKeyPaths, ["kind"])
        XCTAssertEqual(failure("queries = [\"tag:a\", \"(tag:b\"]")?.description.hasPrefix(".queryfs.toml:1:11: saved query '(tag:b': "), true)
        XCTAssertEqual(try configuration("queries = \"tag:a\"").savedQueries, ["tag:a"], "one string is a list of one")
        XCTAssertEqual(failure("queries = [1]")?.message, "'queries' takes strings")
    }

    /// mkdir/rmdir under query/ rewrite the `queries` setting and nothing else.
    func testSavedQueriesRewriteOnlyTheirSetting() {
        XCTAssertEqual(SavedQueriesText.replacing(in: "", with: ["tag:a"]), "queries = [\"tag:a\"]\n")
        XCTAssertEqual(SavedQueriesText.replacing(in: "# views\n[views]\nx = \"tag:x\"\n", with: ["a"]),
                       "queries = [\"a\"]\n# views\n[views]\nx = \"tag:x\"\n")
        XCTAssertEqual(SavedQueriesText.replacing(in: "ignore = []\nqueries = [\"a\"]  # mine\n[views]\n", with: ["a", "b"]),
                       "ignore = []\nqueries = [\"a\", \"b\"]\n[views]\n")
        XCTAssertEqual(SavedQueriesText.replacing(in: "queries = [\n  \"a ]\",\n  \"b\",\n]\nignore = []\n", with: []),
                       "queries = []\nignore = []\n")
        XCTAssertEqual(SavedQueriesText.replacing(in: "[views]\nqueries = \"tag:q\"\n", with: ["a"]),
                       "queries = [\"a\"]\n[views]\nqueries = \"tag:q\"\n", "a view named queries is not the setting")
        let awkward = "title:\"quo\\\"ted back\\\\slash \u{01}bell\u{7F} é\""
        let text = SavedQueriesText.replacing(in: "", with: [awkward])
        XCTAssertEqual(try? configuration(text).savedQueries, [awkward])
    }

    /// Two reloaders of one BACKING (two mounts) saving queries at once keep
    /// every query: the rewrite is locked across them (found from outside:
    /// 40 saved at once through two mounts kept 26).
    func testQueriesSavedAtOnceByTwoMountsAreAllKept() throws {
        let backing = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: backing) }
        let logger = Logger(label: "test")
        let reloaders = (0..<2).map { _ in ConfigurationReloader(backing: backing, file: nil, loaded: Configuration(), logger: logger) }
        DispatchQueue.concurrentPerform(iterations: 40) { number in
            do { try reloaders[number % 2].save("tag:q\(number)") } catch { XCTFail("\(error)") }
        }
        let text = try String(contentsOfFile: backing + "/.queryfs.toml", encoding: .utf8)
        let saved = try Configuration(parsing: text, file: "t", now: .now).savedQueries
        XCTAssertEqual(Set(saved), Set((0..<40).map { "tag:q\($0)" }))
    }
}
