import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
import QueryFSTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Input a careless or hostile user can give — names, payloads, queries,
/// configurations — that once crashed or stalled queryfs. Each seen case is
/// here, and each limit at its edge: never a trap, never an endless wait.
final class HostileInputTests: FixtureTestCase {
    private let now = Timestamp(seconds: 1_700_000_000)

    private func queryError(_ text: String) -> QueryError? {
        do {
            _ = try Query(parsing: text, now: now)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Numbers out of range

    func testAgesSizesAndDatesOutOfRangeAreParseErrorsAtTheirColumn() {
        for text in ["modified>1e300d", "modified>infd", "modified>1e15d", "created<99999999999999999999y", "modified>1e20y"] {
            let error = queryError(text)
            XCTAssertNotNil(error, text)
            XCTAssertEqual(error?.position, text.firstIndex(where: { "<>".contains($0) }).map { text.distance(from: text.startIndex, to: $0) + 1 }, text)
        }
        XCTAssertTrue(queryError("modified>1e15d")?.message.contains("out of range") == true)
        XCTAssertTrue(queryError("tag:a size>" + String(repeating: "9", count: 400))?.message.contains("out of range") == true)
        XCTAssertEqual(queryError("tag:a size>" + String(repeating: "9", count: 400))?.position, 11)
        XCTAssertNotNil(queryError("modified>nand"), "NaN is no age")
        // At the edge: a million years is an age, a little more is not.
        XCTAssertNil(queryError("modified>1000000y"))
        XCTAssertNotNil(queryError("modified>1000001y"))
        XCTAssertNil(queryError("size<9223372036854775807"))
    }

    func testPayloadDatesOutsideTimeSortAtTheEndsAndNaNDatesAreMissing() throws {
        for (name, seconds) in [("inf", Double.infinity), ("minus-inf", -.infinity), ("nan", Double.nan), ("huge", 1e300),
                                ("tiny", -1e300), ("plain", 1_000_000)] {
            var builder = BinaryPlistBuilder()
            let key = builder.string("d")
            let date = builder.date(seconds)
            let top = builder.dictionary([(key, date)])
            bundle("\(name).b", file: "payload.plist", contents: builder.bytes(top: top))
        }
        let catalog = try Catalog.load(backing: backing, sources: sources(["d"]))
        let query = try Query(parsing: "sort:-payload.d", now: now)
        let order = catalog.entries(of: query.view(at: ["q"])).map { catalog.items[$0.itemIndex].name.description }
        // Descending: a NaN date is no date, and missing values come first (last ascending).
        XCTAssertEqual(order, ["nan.b", "huge.b", "inf.b", "plain.b", "minus-inf.b", "tiny.b"])
        let filtered = try Query(parsing: "payload.d>1990-01-01", now: now)
        XCTAssertEqual(Set(catalog.entries(of: filtered.view(at: ["q"])).map { catalog.items[$0.itemIndex].name.description }),
                       ["huge.b", "inf.b"])
    }

    private func sources(_ keys: Set<String>) -> FieldSources {
        var sources = FieldSources()
        sources.extraKeyPaths = keys
        return sources
    }

    /// A NaN in a view sorted on it: the next change to that item used to
    /// hit a force unwrap in the live index (its binary search lost it).
    func testANaNPayloadNumberHasAPlaceInTheLiveIndex() throws {
        func item(_ name: String, _ value: Double, modified: Int64) -> Item {
            Item(name: ItemName(name), kind: .bundle, modified: Timestamp(seconds: modified), payloadValues: ["n": .real(value)])
        }
        var items = [item("a", .nan, modified: 1), item("b", 1, modified: 2), item("c", .nan, modified: 3), item("d", -.infinity, modified: 4)]
        for index in 0..<40 { items.append(item("x\(index)", Double(index % 7), modified: Int64(10 + index))) }
        let index = LiveIndex(items: items)
        let query = try Query(parsing: "sort:payload.n,-modified", now: now)
        _ = index.queryView("sort:payload.n,-modified", query)
        for round in 0..<20 {
            let changed = item(round % 2 == 0 ? "a" : "c", round % 3 == 0 ? .nan : Double(round), modified: Int64(100 + round))
            index.apply([changed.name: changed])
            let live = index.view(at: ["query", "sort:payload.n,-modified"])!.records.map(\.name)
            let fresh = query.view(at: ["q"]).select(index.items).map { index.items[$0].name }
            XCTAssertEqual(live, fresh, "round \(round)")
        }
        XCTAssertEqual(index.view(at: ["query", "sort:payload.n,-modified"])!.records.first?.name, ItemName("d"))
    }

    // MARK: Depth

    func testNestingInQueriesIsBounded() {
        XCTAssertTrue(queryError(String(repeating: "-", count: 130_000) + "archived")?.message.contains("nested too deeply") == true)
        XCTAssertTrue(queryError(String(repeating: "(", count: 60_000) + "archived")?.message.contains("nested too deeply") == true)
        XCTAssertEqual(queryError(String(repeating: "(", count: 60_000) + "archived")?.position, QueryParser.maximumNesting)
        let deepest = String(repeating: "(", count: QueryParser.maximumNesting) + "archived" + String(repeating: ")", count: QueryParser.maximumNesting)
        XCTAssertNil(queryError(deepest))
        XCTAssertNotNil(queryError("(" + deepest + ")"))
        XCTAssertNil(queryError(String(repeating: "-", count: QueryParser.maximumNesting) + "archived"))
    }

    func testDeeplyNestedBinaryPlistsAreErrors() {
        var builder = BinaryPlistBuilder()
        var inner = builder.array([])
        for _ in 0..<200_000 { inner = builder.array([inner]) }
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(builder.bytes(top: inner))) { error in
            XCTAssertTrue("\(error)".contains("nested too deeply"), "\(error)")
        }
        var edge = BinaryPlistBuilder()
        var top = edge.array([])
        for _ in 0..<(BinaryPropertyListParser.maximumDepth - 1) { top = edge.array([top]) }
        XCTAssertNoThrow(try BinaryPropertyListParser.parse(edge.bytes(top: top)))
        top = edge.array([top])
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(edge.bytes(top: top)))
    }

    /// Payloads are parsed on the scan's worker threads: the deepest payload
    /// each parser accepts must fit their stacks.
    func testTheDeepestAcceptedPayloadsParseOnScanThreads() throws {
        let depth = 500
        bundle("xml.b", plistBody: String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth))
        bundle("json.b", file: "payload.json", contents: Array(("{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8))
        var builder = BinaryPlistBuilder()
        var top = builder.array([])
        for _ in 0..<depth { top = builder.array([top]) }
        bundle("binary.b", file: "payload.plist", contents: builder.bytes(top: top))
        for index in 0..<200 { hipstapaper("filler-\(index).b", title: "Filler \(index)") }
        let catalog = try Catalog.load(backing: backing)
        XCTAssertEqual(catalog.items.count, 203)
    }

    /// 40 levels of arrays that each hold the next one twice: 2⁴⁰ objects
    /// from a few hundred bytes. Refused, and quickly.
    func testSharedContainersCannotExpandWithoutBound() {
        var builder = BinaryPlistBuilder()
        var inner = builder.string("leaf")
        for _ in 0..<40 { inner = builder.array([inner, inner]) }
        let bytes = builder.bytes(top: inner)
        XCTAssertLessThan(bytes.count, 1_000)
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(bytes)) { error in
            XCTAssertTrue("\(error)".contains("objects"), "\(error)")
        }
        // Sharing that stays small is fine: 10 levels, 2,047 objects.
        var small = BinaryPlistBuilder()
        var node = small.string("leaf")
        for _ in 0..<10 { node = small.array([node, node]) }
        XCTAssertNoThrow(try BinaryPropertyListParser.parse(small.bytes(top: node)))
    }

    // MARK: Work per input

    /// Each entity once copied the text decoded so far: 250,000 took 25 s.
    /// Ten times the entities must cost about ten times the time, not a hundred.
    func testEntitiesDecodeInLinearTime() throws {
        func seconds(_ count: Int) throws -> Double {
            let text = "<string>" + String(repeating: "&amp;", count: count) + "</string>"
            let start = Date()
            let value = try XMLPropertyListParser.parse(Array(text.utf8))
            XCTAssertEqual(value, .string(String(repeating: "&", count: count)))
            return Date().timeIntervalSince(start)
        }
        _ = try seconds(1_000)
        let small = max(try seconds(25_000), 0.001)
        let large = try seconds(250_000)
        XCTAssertLessThan(large / small, 40, "25,000 entities: \(small) s, 250,000: \(large) s")
    }

    func testManyTagsOnOneItemAreCappedAndReported() throws {
        let tags = (0..<20_000).map { "tag\($0)" }
        hipstapaper("many.b", title: "Many", tags: tags + ["tag1", "tag2"])
        hipstapaper("few.b", title: "Few", tags: ["tag5"])
        let catalog = try Catalog.load(backing: backing)
        let many = try XCTUnwrap(catalog.items.first { $0.name == ItemName("many.b") })
        XCTAssertEqual(many.tags.count, TagLimit.maximum)
        XCTAssertEqual(many.tags.first, "tag0")
        XCTAssertTrue(many.problems.contains { $0.contains("20000 tags") }, "\(many.problems)")
        // The live index places a change of that item in its 1,024 folders at once.
        let index = LiveIndex(items: catalog.items)
        XCTAssertEqual(index.tagFolders.count, TagLimit.maximum)
        var changed = many
        changed.tags.removeFirst()
        let changes = index.apply([many.name: changed])
        XCTAssertEqual(changes.filter { $0.kind == .vanished }.map(\.pathString), ["tag/tag0"])
        XCTAssertEqual(index.view(at: ["tag", "tag5"])?.count, 2)
    }

    // MARK: Files that are not files

    func testAFIFONamedLikeTheConfigurationIsAnErrorNotAWait() {
        XCTAssertEqual(mkfifo(path(Configuration.fileName), 0o644), 0)
        XCTAssertThrowsError(try Configuration.load(backing: backing)) { error in
            XCTAssertTrue("\(error)".contains("not a regular file"), "\(error)")
        }
    }

    func testAFIFONamedLikeAPayloadIsAProblemNotAWait() throws {
        makeDirectory("fifo.b")
        XCTAssertEqual(mkfifo(path("fifo.b/payload.plist"), 0o644), 0)
        hipstapaper("good.b", title: "Good")
        XCTAssertEqual(mkfifo(path("plain-fifo"), 0o644), 0)
        let catalog = try Catalog.load(backing: backing)
        XCTAssertEqual(Set(catalog.items.map(\.name.description)), ["fifo.b", "good.b", "plain-fifo"])
        // A FIFO payload is not read at all (the scan wants regular files).
        XCTAssertTrue(catalog.items.first { $0.name == ItemName("fifo.b") }!.problems.contains { $0.contains("payload.plist is not a regular file (a FIFO)") })
        // Read directly, it is an error at once, not a wait.
        XCTAssertThrowsError(try path("fifo.b").withCString { _ in
            try "payload.plist".withCString { name in
                let fd = open(path("fifo.b"), O_RDONLY | O_DIRECTORY)
                defer { close(fd) }
                return try DirectoryReader.readFile(name, in: fd, expectedSize: 10, limit: 100)
            }
        })
    }

    // MARK: Configuration

    func testDeeplyNestedTOMLIsAnErrorWithItsPlace() {
        let text = "queries = " + String(repeating: "[", count: 1_000_000)
        XCTAssertThrowsError(try Configuration(parsing: text, file: "c.toml", now: now)) { error in
            let failure = error as? ConfigurationError
            XCTAssertEqual(failure?.line, 1, "\(error)")
            XCTAssertGreaterThan(failure?.column ?? 0, 10, "\(error)")
        }
    }

    /// Found by fuzzing: toml++ asserts (in release builds, assumes) that a
    /// table header starts with a key and that an array element does not
    /// start with `}` or a line separator; these reached undefined behaviour.
    func testWhatTomlPlusPlusAssumesAwayIsRefusedBeforeItReadsTheText() {
        for (text, line, column) in [("\n[\u{04}=", 2, 2), ("[?[[[[", 1, 2), ("[[ ?]]", 1, 4), ("a = 1\n[ \t%x]", 2, 4),
                                     ("queries = [\"\"\"a\n-b\"\"\",  }\n", 2, 9), ("a = [ }", 1, 7), ("a = {b = [\n}]}", 2, 1),
                                     ("a = [1,\u{2028}]", 1, 8), ("a = [\u{85}]", 1, 6), ("x = \"\u{2029}\"", 1, 6)] {
            XCTAssertThrowsError(try Configuration(parsing: text, file: "c.toml", now: now), text.debugDescription) { error in
                XCTAssertEqual((error as? ConfigurationError)?.line, line, "\(text.debugDescription): \(error)")
                XCTAssertEqual((error as? ConfigurationError)?.column, column, "\(text.debugDescription): \(error)")
            }
        }
        XCTAssertNoThrow(try Configuration(parsing: "[ views ]\n[\"fields\"]\n", file: "c.toml", now: now))
        // Found by the front-matter fuzzer (it aborted the process): a date-time whose time is not a digit.
        for (text, column) in [("e = 4046-01-02T--0s:04:05Z", 5), ("[a]\nx = [1979-05-27tZ]", 6)] {
            XCTAssertThrowsError(try Configuration(parsing: text, file: "c.toml", now: now), text.debugDescription) { error in
                XCTAssertEqual((error as? ConfigurationError)?.column, column, "\(text.debugDescription): \(error)")
                XCTAssertTrue("\(error)".contains("a date-time whose time does not start with a digit"), "\(error)")
            }
        }
        XCTAssertNoThrow(try Configuration(parsing: "ignore = [\"2024-01-02Tx\"]\n# 2024-01-02T-\n", file: "c.toml", now: now))
        // Inside strings a '[' is text, not a header.
        XCTAssertNoThrow(try Configuration(parsing: "ignore = [\"\"\"\n[?\"\"\"]\n", file: "c.toml", now: now))
    }

    func testTOMLWithANULOrInvalidUTF8IsRefusedWithItsPlace() {
        XCTAssertThrowsError(try Configuration(parsing: "ignore = []\nqueries = [\"a\u{0}b\"]", file: "c.toml", now: now)) { error in
            XCTAssertEqual((error as? ConfigurationError)?.line, 2)
            XCTAssertEqual((error as? ConfigurationError)?.column, 14)
        }
        XCTAssertThrowsError(try Configuration.text(of: Array("a = 1\nb = \"x".utf8) + [0xFF] + Array("\"".utf8), file: "c.toml")) { error in
            XCTAssertEqual((error as? ConfigurationError)?.line, 2)
            XCTAssertEqual((error as? ConfigurationError)?.column, 7)
        }
    }
}
