import XCTest
import QueryFSTestSupport
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// Foundation has a `Predicate` too.
private typealias Filter = QueryFSEngine.Predicate

/// The query language: every construct, precedence, errors with their
/// column, and the compact and long forms agreeing.
final class QueryParserTests: XCTestCase {
    private let now = Timestamp(seconds: 1_700_000_000)
    private let day: Int64 = 86_400

    private func parse(_ text: String) throws -> Query { try Query(parsing: text, now: now) }

    private func filter(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Filter? {
        do { return try parse(text).filter } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
            return nil
        }
    }

    private func error(_ text: String) -> QueryError? {
        thrown(QueryError.self) { _ = try parse(text) }
    }

    // MARK: Constructs

    func testEmptyQuerySelectsEverythingNewestFirst() throws {
        XCTAssertEqual(try parse(""), Query(filter: .all, order: .newestModifiedFirst))
        XCTAssertEqual(try parse("   "), Query(filter: .all, order: .newestModifiedFirst))
    }

    func testComparisonsOnEveryOperator() {
        XCTAssertEqual(filter("title=Swift"), .compare(.title, .equal, .text("Swift")))
        XCTAssertEqual(filter("title!=Swift"), .compare(.title, .notEqual, .text("Swift")))
        XCTAssertEqual(filter("size<10"), .compare(.size, .less, .number(10)))
        XCTAssertEqual(filter("size<=10"), .compare(.size, .lessOrEqual, .number(10)))
        XCTAssertEqual(filter("size>10"), .compare(.size, .greater, .number(10)))
        XCTAssertEqual(filter("size>=10"), .compare(.size, .greaterOrEqual, .number(10)))
        XCTAssertEqual(filter("title:swift"), .contains(.title, .text("swift")))
        XCTAssertEqual(filter("title~*Swift*"), .glob(.title, "*Swift*"))
        XCTAssertEqual(filter("title contains swift"), .contains(.title, .text("swift")))
        XCTAssertEqual(filter("name matches 'x*'"), .glob(.name, "'x*'"))
        XCTAssertEqual(filter("title = \"Two words\""), .compare(.title, .equal, .text("Two words")))
        XCTAssertEqual(filter("title=\"a \\\"quoted\\\" word\""), .compare(.title, .equal, .text("a \"quoted\" word")))
    }

    func testTagsBooleansAndPayloadPaths() {
        XCTAssertEqual(filter("tag:swift"), .contains(.tags, .text("swift")))
        XCTAssertEqual(filter("tags=swift"), .contains(.tags, .text("swift")))
        XCTAssertEqual(filter("tag!=swift"), .not(.contains(.tags, .text("swift"))))
        XCTAssertEqual(filter("tag~sw*"), .glob(.tags, "sw*"))
        XCTAssertEqual(filter("archived"), .compare(.archived, .equal, .bool(true)))
        XCTAssertEqual(filter("archived=no"), .compare(.archived, .equal, .bool(false)))
        XCTAssertEqual(filter("payload.starred"), .compare(.payload("starred"), .equal, .bool(true)))
        XCTAssertEqual(filter("payload.webLocation.relative:example.com"), .contains(.payload("webLocation.relative"), .text("example.com")))
        XCTAssertEqual(filter("payload.rating>=4"), .compare(.payload("rating"), .greaterOrEqual, .number(4)))
    }

    /// `1` and `0` against a payload are numbers (a rating, a count), and
    /// still true and false against a payload's boolean.
    func testOneAndZeroMatchPayloadNumbersAndBooleans() {
        let rated = Item(name: ItemName("a.md"), kind: .file, payloadValues: ["rating": .integer(1), "count": .integer(2),
                                                                            "done": .bool(true), "open": .bool(false)])
        for (query, holds) in [("payload.rating=1", true), ("payload.rating>0", true), ("payload.count>1", true),
                               ("payload.rating>1", false), ("payload.count=0", false), ("payload.rating", true),
                               ("payload.done=1", true), ("payload.done>0", true), ("payload.open=0", true),
                               ("payload.open=1", false), ("payload.done=yes", true), ("payload.open=false", true)] {
            XCTAssertEqual(filter(query)?.matches(rated), holds, query)
        }
        XCTAssertEqual(filter("payload.rating=1"), .compare(.payload("rating"), .equal, .number(1)))
        // Quoted, a payload value is text (a zip code, a version string, "true" as a word).
        let texts = Item(name: ItemName("b.md"), kind: .file, payloadValues: ["zip": .string("01234"), "word": .string("true"), "one": .string("1")])
        for (query, holds) in [("payload.zip=\"01234\"", true), ("payload.word=\"true\"", true), ("payload.one=\"1\"", true),
                               ("payload.one!=\"1\"", false), ("payload.zip=01234", false)] {
            XCTAssertEqual(filter(query)?.matches(texts), holds, query)
        }
        XCTAssertEqual(filter("payload.rating=\"1\"")?.matches(rated), false, "the text 1 is not the number 1")
    }

    func testDatesAgesAndSizes() {
        XCTAssertEqual(filter("modified>7d"), .compare(.modified, .greater, .date(Timestamp(seconds: now.seconds - 7 * day))))
        XCTAssertEqual(filter("created<12h"), .compare(.created, .less, .date(Timestamp(seconds: now.seconds - 12 * 3600))))
        XCTAssertEqual(filter("modified>2w"), .compare(.modified, .greater, .date(Timestamp(seconds: now.seconds - 14 * day))))
        XCTAssertEqual(filter("modified>=2024-01-02"), .compare(.modified, .greaterOrEqual, .date(Timestamp(seconds: 1_704_153_600))))
        XCTAssertEqual(filter("modified<2024-01-02T00:00:10Z"), .compare(.modified, .less, .date(Timestamp(seconds: 1_704_153_610))))
        XCTAssertEqual(filter("size>10MB"), .compare(.size, .greater, .number(10_000_000)))
        XCTAssertEqual(filter("size>10MiB"), .compare(.size, .greater, .number(10 * 1_048_576)))
        XCTAssertEqual(filter("size<=1.5kb"), .compare(.size, .lessOrEqual, .number(1500)))
        // Days past their month's end are no dates (they were counted on into the next month).
        for impossible in ["2024-02-30", "2023-02-29", "2024-04-31", "2100-02-29"] {
            XCTAssertNotNil(error("modified>\(impossible)"), impossible)
        }
        XCTAssertNotNil(filter("modified>2024-02-29"))
        // Against a payload too (it was compared as text), unless quoted.
        XCTAssertNotNil(error("payload.d>2023-02-29"))
        XCTAssertEqual(filter("payload.d>\"2023-02-29\""), .compare(.payload("d"), .greater, .text("2023-02-29")))
        XCTAssertNotNil(filter("modified>2000-02-29"))
    }

    func testNegationAndGrouping() {
        let swift = Filter.contains(.tags, .text("swift"))
        let archived = Filter.compare(.archived, .equal, .bool(true))
        XCTAssertEqual(filter("-archived"), .not(archived))
        XCTAssertEqual(filter("!archived"), .not(archived))
        XCTAssertEqual(filter("not archived"), .not(archived))
        XCTAssertEqual(filter("tag:swift -archived"), .and([swift, .not(archived)]))
        XCTAssertEqual(filter("-(tag:swift or archived)"), .not(.or([swift, archived])))
    }

    func testAndBindsTighterThanOr() {
        let a = Filter.contains(.tags, .text("a")), b = Filter.contains(.tags, .text("b")), c = Filter.contains(.tags, .text("c"))
        XCTAssertEqual(filter("tag:a or tag:b tag:c"), .or([a, .and([b, c])]))
        XCTAssertEqual(filter("tag:a | tag:b & tag:c"), .or([a, .and([b, c])]))
        XCTAssertEqual(filter("tag:a and tag:b or tag:c"), .or([.and([a, b]), c]))
        XCTAssertEqual(filter("(tag:a or tag:b) tag:c"), .and([.or([a, b]), c]))
        XCTAssertEqual(filter("not tag:a and tag:b"), .and([.not(a), b]))
    }

    func testSortClauses() throws {
        XCTAssertEqual(try parse("sort:-modified,title").order,
                       Ordering([.init(.modified, ascending: false), .init(.title, ascending: true)]))
        XCTAssertEqual(try parse("tag:x sort:+size").order, Ordering([.init(.size, ascending: true)]))
        XCTAssertEqual(try parse("sort by modified desc, title").order,
                       Ordering([.init(.modified, ascending: false), .init(.title, ascending: true)]))
        XCTAssertEqual(try parse("order by payload.rating desc tag:x").order, Ordering([.init(.payload("rating"), ascending: false)]))
        XCTAssertEqual(try parse("order by payload.rating desc tag:x").filter, .contains(.tags, .text("x")))
        // `order` and `sort` are still field-like words elsewhere: a keyword must be whole.
        XCTAssertEqual(try parse("title:order").filter, .contains(.title, .text("order")))
    }

    // MARK: Errors point at their column

    func testErrorsCarryTheirPosition() {
        XCTAssertEqual(error("tag:swift colour=red")?.position, 10)
        XCTAssertEqual(error("tag:swift colour=red")?.message.hasPrefix("unknown field 'colour'"), true)
        XCTAssertEqual(error("(tag:a or tag:b")?.position, 0)
        XCTAssertEqual(error("tag:a)")?.position, 5)
        XCTAssertEqual(error("modified>yesterday")?.position, 9)
        XCTAssertEqual(error("size>10 parsecs")?.position, 8)  // `parsecs` is no field
        XCTAssertEqual(error("size>ten")?.position, 5)
        XCTAssertEqual(error("title")?.position, 5)  // a text field alone needs a comparison
        XCTAssertEqual(error("title=")?.position, 6)
        XCTAssertEqual(error("title=\"open")?.position, 6)
        XCTAssertEqual(error("tag:a or")?.position, 8)
        XCTAssertEqual(error("tag<a")?.position, 3)
        XCTAssertEqual(error("sort:-")?.position, 6)
        XCTAssertEqual(error("sort:title sort:size")?.position, 11)
        XCTAssertEqual(error("archived=maybe")?.position, 9)
        XCTAssertEqual(error("=x")?.position, 0)
    }

    func testErrorsPointWithACaret() {
        let failure = QueryError("unknown field 'colour'", at: 4)
        XCTAssertEqual(failure.pointing(into: "tag colour"), "tag colour\n    ^ unknown field 'colour'")
        XCTAssertEqual(failure.description, "column 5: unknown field 'colour'")
    }

    /// A query with ages says its shortest, so a live view knows how often to count them again.
    func testQueriesKnowTheirShortestAge() throws {
        XCTAssertEqual(try Query(parsing: "modified>7d or created>2h", now: now).shortestAge, 7_200)
        XCTAssertEqual(try Query(parsing: "modified>7d", now: now).view(at: ["v"]).shortestAge, 7 * 86_400)
        XCTAssertNil(try Query(parsing: "modified>2024-05-01 tag:a size>7", now: now).shortestAge)
        XCTAssertNil(try Query(parsing: "title:7d", now: now).shortestAge, "text that looks like an age is text")
    }

    // MARK: Compact and long forms agree

    func testCompactAndLongFormsSelectAndOrderTheSame() throws {
        let items: [Item] = (0..<60).map { number in
            let tags: [String] = number % 4 == 0 ? ["swift"] : number % 5 == 0 ? ["rust", "swift"] : []
            let modified = Timestamp(seconds: now.seconds - Int64(number) * day / 2)
            return Item(name: ItemName("i\(number).hpwebsite"), kind: .bundle, title: "Item \(number % 17)",
                        archived: number % 3 == 0, tags: tags, modified: modified, size: UInt64(number * 100_000))
        }
        let pairs = [
            ("tag:swift -archived modified>7d sort:-modified", "tags contains swift and not archived and modified > 7d sort by modified desc"),
            ("tag:rust | size>=3MB sort:title,-size", "(tags contains rust) or (size >= 3MB) order by title asc, size desc"),
            ("-(archived tag:swift) title~Item?1*", "not (archived and tags contains swift) and title matches Item?1*"),
            ("modified<2d size<1MB", "modified < 2d and size < 1MB order by modified desc"),
        ]
        for (compact, long) in pairs {
            let a = try parse(compact), b = try parse(long)
            XCTAssertEqual(a.order, b.order, compact)
            let selectedA: [ItemName] = items.filter { a.filter.matches($0) }.sorted { a.order.precedes($0, $1) }.map { $0.name }
            let selectedB: [ItemName] = items.filter { b.filter.matches($0) }.sorted { b.order.precedes($0, $1) }.map { $0.name }
            XCTAssertEqual(selectedA, selectedB, compact)
            XCTAssertFalse(selectedA.isEmpty, compact)
        }
    }

    /// Random queries built from the same parts in both forms select and order alike.
    func testRandomQueriesInBothFormsAgree() throws {
        let items: [Item] = (0..<40).map { number in
            let modified = Timestamp(seconds: now.seconds - Int64(number) * 3600)
            return Item(name: ItemName("n\(number)"), kind: .file, title: "T\(number % 7)", archived: number % 2 == 0,
                        tags: number % 3 == 0 ? ["a"] : ["b"], modified: modified, size: UInt64(number * 10))
        }
        let parts: [(compact: String, long: String)] = [
            ("tag:a", "tags contains a"), ("-archived", "not archived"), ("archived", "archived = true"),
            ("size>100", "size > 100"), ("modified>10h", "modified > 10h"), ("title~T[1-3]", "title matches T[1-3]"),
        ]
        var generator = seededGenerator()
        for _ in 0..<200 {
            let chosen = (0..<Int.random(in: 1...4, using: &generator)).map { _ in parts.randomElement(using: &generator)! }
            let useOr = Bool.random(using: &generator)
            let compact = chosen.map(\.compact).joined(separator: useOr ? " | " : " ")
            let long = chosen.map { "(\($0.long))" }.joined(separator: useOr ? " or " : " and ")
            let a = try parse(compact), b = try parse(long)
            let selectedA: [ItemName] = items.filter { a.filter.matches($0) }.map { $0.name }
            let selectedB: [ItemName] = items.filter { b.filter.matches($0) }.map { $0.name }
            XCTAssertEqual(selectedA, selectedB, "\(compact) vs \(long)")
        }
    }
}
