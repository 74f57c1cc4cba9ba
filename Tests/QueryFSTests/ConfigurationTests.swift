import XCTest
@testable import QueryFS

/// `.queryfs.toml`: the TOML subset it is read with, and the configuration
/// it holds, with every error at its file, line and column.
final class ConfigurationTests: XCTestCase {
    private let now = Timestamp(seconds: 1_700_000_000)

    private func configuration(_ text: String) throws -> Configuration {
        try Configuration(parsing: text, file: ".queryfs.toml", now: now)
    }

    private func failure(_ text: String) -> ConfigurationError? {
        thrown(ConfigurationError.self) { _ = try configuration(text) }
    }

    func testTheSubsetOfTOML() throws {
        let document = try TOMLDocument(parsing: """
            # a comment
            top = "value"   # trailing comment
            flag = true
            count = 1_000
            list = [
              "a", 'b\\c',   # literal strings keep backslashes
              "tab\\tquote\\"",
            ]
            [views]
            "reading/today" = "tag:today"
            bare-key_2 = 'x'
            """)
        XCTAssertEqual(document.tables[""]?["top"]?.value, .string("value"))
        XCTAssertEqual(document.tables[""]?["flag"]?.value, .bool(true))
        XCTAssertEqual(document.tables[""]?["count"]?.value, .integer(1000))
        XCTAssertEqual(document.tables[""]?["list"]?.value, .array([.string("a"), .string("b\\c"), .string("tab\tquote\"")]))
        XCTAssertEqual(document.tables["views"]?["reading/today"], TOMLEntry(value: .string("tag:today"), line: 10, column: 19))
        XCTAssertEqual(document.tables["views"]?["bare-key_2"]?.value, .string("x"))
    }

    func testTOMLUnicodeEscapes() throws {
        XCTAssertEqual(try TOMLDocument(parsing: #"a = "\u00e9\U0001F600\b""#).tables[""]?["a"]?.value, .string("é😀\u{08}"))
        XCTAssertThrowsError(try TOMLDocument(parsing: #"a = "\u00g9""#))
        XCTAssertThrowsError(try TOMLDocument(parsing: #"a = "\uD800""#), "a surrogate is not a scalar")
    }

    func testTOMLErrorsSayWhere() {
        func error(_ text: String) -> TOMLError? {
            thrown(TOMLError.self) { _ = try TOMLDocument(parsing: text) }
        }
        XCTAssertEqual(error("a = \"open")?.line, 1)
        XCTAssertEqual(error("a = \"open")?.column, 5)
        XCTAssertEqual(error("a = 1\nb = nope")?.line, 2)
        XCTAssertEqual(error("a = 1\nb = nope")?.column, 5)
        XCTAssertEqual(error("a = 1\na = 2")?.message, "key 'a' is defined twice")
        XCTAssertEqual(error("[x]\n[x]")?.line, 2)
        XCTAssertEqual(error("a = [1, 2")?.message, "the array is never closed")
        XCTAssertEqual(error("a = 1 b")?.column, 7)
        XCTAssertEqual(error("a.b = 1")?.column, 2)
        XCTAssertEqual(error("a = { b = 1 }")?.column, 5)
        XCTAssertEqual(error("a = \"\\q\"")?.message, "unknown escape '\\q'")
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
                       ".queryfs.toml:2:12: view 'x': unknown field 'colour' (fields: name, ext, title, archived, tags, url, modified, created, size, tag, payload.KEY)")
        XCTAssertEqual(failure("[views]\nby-name = \"tag:a\"")?.line, 2)
        XCTAssertEqual(failure("[views]\n\"a//b\" = \"tag:a\"")?.message, "'a//b' is not a view path ('' cannot be a folder name)")
        XCTAssertEqual(failure("[views]\na = \"tag:x\"\n\"a/b\" = \"tag:y\"")?.message, "'a' is a view and also holds 'a/b'")
        XCTAssertEqual(failure("[views]\na = 3")?.message, "a view is a query in quotes")
        XCTAssertEqual(failure("[fields]\ncolour = [\"c\"]")?.line, 2)
        XCTAssertEqual(failure("[other]\n")?.message, "unknown table [other] (tables: [views], [fields])")
        XCTAssertEqual(failure("ignor = []")?.message, "unknown setting 'ignor' (settings: ignore, queries, [views], [fields])")
        XCTAssertEqual(failure("ignore = [1]")?.message, "'ignore' takes strings")
        XCTAssertEqual(failure("[views]\nx = \"tag:a\nb")?.description, ".queryfs.toml:2:5: the string is never closed")
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
        let awkward = "title:\"quoted\" back\\slash \u{01}bell\u{7F} é"
        let text = SavedQueriesText.replacing(in: "", with: [awkward])
        XCTAssertEqual(try? TOMLDocument(parsing: text).tables[""]?["queries"]?.value, .array([.string(awkward)]))
    }
}
