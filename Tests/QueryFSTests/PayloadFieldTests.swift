import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// Item fields from payloads (SPEC §1): `title` over `webTitle`, `archived`
/// over `isArchived`, `url` over `webLocation.relative`, `tags`; wrong-typed
/// values ignored and reported; the same through JSON, XML and binary plists.
final class PayloadFieldTests: FixtureTestCase {
    enum Format: CaseIterable { case xml, binary, json }

    /// Writes a bundle whose payload holds `dictionary` in `format`.
    private func payloadBundle(_ name: String, _ dictionary: [String: Any], format: Format) throws {
        switch format {
        case .xml:
            let data = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0)
            bundle(name, file: "payload.plist", contents: [UInt8](data))
        case .binary:
            let data = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
            XCTAssertEqual(Array(data.prefix(6)), Array("bplist".utf8))
            bundle(name, file: "payload.plist", contents: [UInt8](data))
        case .json:
            bundle(name, file: "payload.json", contents: Array(Self.json(dictionary).utf8))
        }
    }

    /// Minimal JSON writer that keeps booleans booleans (NSNumber of a Bool on Linux is ambiguous).
    private static func json(_ value: Any) -> String {
        switch value {
        case let flag as Bool: return flag ? "true" : "false"
        case let number as Int: return String(number)
        case let number as Double: return String(number)
        case let text as String:
            let escaped = text.unicodeScalars.map { scalar -> String in
                switch scalar {
                case "\"": return "\\\""
                case "\\": return "\\\\"
                case _ where scalar.value < 0x20: return String(format: "\\u%04x", scalar.value)
                default: return String(scalar)
                }
            }.joined()
            return "\"\(escaped)\""
        case let array as [Any]: return "[" + array.map(json).joined(separator: ",") + "]"
        case let dictionary as [String: Any]:
            return "{" + dictionary.keys.sorted().map { "\(json($0)):\(json(dictionary[$0]!))" }.joined(separator: ",") + "}"
        default: fatalError("unsupported \(value)")
        }
    }

    /// Scans one bundle with `dictionary` as its payload in every format.
    private func eachFormat(_ dictionary: [String: Any], name: String = "item.hpwebsite", _ check: (Item, Format) throws -> Void) throws {
        for format in Format.allCases {
            try payloadBundle(name, dictionary, format: format)
            try check(try scanItem(name), format)
            removeTree(path(name))
        }
    }

    // MARK: title

    func testTitleWinsOverWebTitle() throws {
        try eachFormat(["title": "The title", "webTitle": "The web title"]) { item, format in
            XCTAssertEqual(item.title, "The title", "\(format)")
            XCTAssertEqual(item.problems, [], "\(format)")
        }
    }

    func testWebTitleIsTheFallback() throws {
        try eachFormat(["webTitle": "Google: The Epic Search for the number: 4"]) { item, format in
            XCTAssertEqual(item.title, "Google: The Epic Search for the number: 4", "\(format)")
        }
    }

    func testTheNameWithoutExtIsTheLastFallback() throws {
        try eachFormat(["isArchived": true], name: "7F04827B-83FD.hpwebsite") { item, format in
            XCTAssertEqual(item.title, "7F04827B-83FD", "\(format)")
            XCTAssertEqual(item.problems, [], "\(format)")
        }
    }

    func testATitleOfTheWrongTypeIsIgnoredAndReported() throws {
        try eachFormat(["title": 42, "webTitle": "Web"]) { item, format in
            XCTAssertEqual(item.title, "Web", "\(format)")
            XCTAssertEqual(item.problems.count, 1, "\(format): \(item.problems)")
            XCTAssertTrue(item.problems[0].contains("title"), item.problems[0])
        }
        try eachFormat(["title": ["not", "a", "string"]], name: "fallback.hpwebsite") { item, format in
            XCTAssertEqual(item.title, "fallback", "\(format)")
            XCTAssertEqual(item.problems.count, 1, "\(format): \(item.problems)")
        }
        try eachFormat(["title": 1, "webTitle": 2], name: "both.hpwebsite") { item, format in
            XCTAssertEqual(item.title, "both", "\(format)")
            XCTAssertEqual(item.problems.count, 2, "\(format): \(item.problems)")
        }
    }

    func testNonASCIITitles() throws {
        try eachFormat(["title": "Café ☕ 日本語 😀 — naïve"]) { item, format in
            XCTAssertEqual(item.title, "Café ☕ 日本語 😀 — naïve", "\(format)")
        }
    }

    func testInvalidUTF8InAPayloadTitleBecomesReplacementCharacters() throws {
        let body = Array(Self.xmlPlist("<dict><key>title</key><string>Caf\u{0}</string></dict>").utf8)
        // Replace the NUL placeholder with a Latin-1 "é" (0xE9): not UTF-8.
        bundle("latin1.hpwebsite", file: "payload.plist", contents: body.map { $0 == 0 ? 0xE9 : $0 })
        let item = try scanItem("latin1.hpwebsite")
        XCTAssertEqual(item.title, "Caf\u{FFFD}")
        XCTAssertEqual(try listing("by-name"), ["0001 Caf\u{FFFD}.hpwebsite"])
    }

    // MARK: archived

    func testArchivedWinsOverIsArchived() throws {
        try eachFormat(["archived": false, "isArchived": true]) { item, format in
            XCTAssertFalse(item.archived, "\(format)")
        }
        try eachFormat(["archived": true, "isArchived": false]) { item, format in
            XCTAssertTrue(item.archived, "\(format)")
        }
    }

    func testIsArchivedIsTheFallbackAndAbsentMeansFalse() throws {
        try eachFormat(["isArchived": true]) { item, format in XCTAssertTrue(item.archived, "\(format)") }
        try eachFormat(["webTitle": "x"]) { item, format in
            XCTAssertFalse(item.archived, "\(format)")
            XCTAssertEqual(item.tags, [], "\(format)")
            XCTAssertNil(item.url, "\(format)")
        }
    }

    func testArchivedOfTheWrongTypeIsIgnoredAndReported() throws {
        try eachFormat(["archived": "yes"]) { item, format in
            XCTAssertFalse(item.archived, "\(format)")
            XCTAssertEqual(item.problems.count, 1, "\(format): \(item.problems)")
            XCTAssertTrue(item.problems[0].contains("archived"), item.problems[0])
        }
        // Ignored means absent: isArchived then decides.
        try eachFormat(["archived": "no", "isArchived": true]) { item, format in
            XCTAssertTrue(item.archived, "\(format)")
            XCTAssertEqual(item.problems.count, 1, "\(format): \(item.problems)")
        }
    }

    // MARK: url

    func testURLWinsOverWebLocationRelative() throws {
        try eachFormat(["url": "https://a.example", "webLocation": ["relative": "https://b.example"]]) { item, format in
            XCTAssertEqual(item.url, "https://a.example", "\(format)")
        }
        try eachFormat(["webLocation": ["relative": "https://b.example/?q=1&r=2"]]) { item, format in
            XCTAssertEqual(item.url, "https://b.example/?q=1&r=2", "\(format)")
        }
        try eachFormat(["url": 7, "webLocation": ["relative": "https://b.example"]]) { item, format in
            XCTAssertEqual(item.url, "https://b.example", "\(format)")
            XCTAssertEqual(item.problems.count, 1, "\(format): \(item.problems)")
        }
        try eachFormat(["webLocation": "https://not-a-dictionary.example"]) { item, format in
            XCTAssertNil(item.url, "\(format)")
        }
    }

    // MARK: tags

    func testTags() throws {
        try eachFormat(["tags": ["Work", "work", "rock/metal", "日本"]]) { item, format in
            XCTAssertEqual(item.tags, ["Work", "work", "rock/metal", "日本"], "\(format)")
            XCTAssertEqual(item.problems, [], "\(format)")
        }
        try eachFormat(["tags": [String]()]) { item, format in XCTAssertEqual(item.tags, [], "\(format)") }
    }

    func testATagThatIsNotAStringIsDroppedAndTheOthersKept() throws {
        try eachFormat(["tags": ["keep", 5, "also", ["nested"], true] as [Any]]) { item, format in
            XCTAssertEqual(item.tags, ["keep", "also"], "\(format)")
            // One problem for all of them: 20,000 bad tags are one line in `queryfs status`, not 20,000.
            XCTAssertEqual(item.problems, ["\(format == .json ? "payload.json" : "payload.plist"): tags: 3 tags are not strings; ignored"],
                           "\(format)")
        }
    }

    func testTagsThatAreNotAnArrayAreIgnored() throws {
        try eachFormat(["tags": "single"]) { item, format in
            XCTAssertEqual(item.tags, [], "\(format)")
            XCTAssertEqual(item.problems.count, 1, "\(format): \(item.problems)")
        }
    }

    // MARK: Problems are reported against the item

    func testProblemsNameTheItemAndThePayloadFile() throws {
        try payloadBundle("typed.hpwebsite", ["title": 1, "archived": "x", "tags": ["ok", 2]], format: .json)
        hipstapaper("fine.hpwebsite", title: "Fine")
        let problems = try catalog().problems
        XCTAssertEqual(problems.count, 3)
        XCTAssertTrue(problems.allSatisfy { $0.item == ItemName("typed.hpwebsite") })
        XCTAssertTrue(problems.allSatisfy { $0.problem.hasPrefix("payload.json: ") }, "\(problems)")
    }

    // MARK: payload.KEY.PATH

    func testPayloadKeyPathsAreAvailableAsFields() throws {
        try payloadBundle("deep.hpwebsite", [
            "webLocation": ["relative": "https://example.com"],
            "meta": ["count": 3, "list": ["zero", "one"]] as [String: Any],
        ], format: .xml)
        var sources = FieldSources()
        sources.extraKeyPaths = ["webLocation.relative", "meta.count", "meta.list.1", "meta.missing"]
        let item = try Scanner(sources: sources).scan(directory: backing)[0]
        XCTAssertEqual(item.value(of: .payload("webLocation.relative")), .text("https://example.com"))
        XCTAssertEqual(item.value(of: .payload("meta.count")), .number(3))
        XCTAssertEqual(item.value(of: .payload("meta.list.1")), .text("one"))
        XCTAssertEqual(item.value(of: .payload("meta.missing")), .missing)
        XCTAssertEqual(Field(named: "payload.meta.count"), .payload("meta.count"))
        XCTAssertEqual(item.value(of: .url), .text("https://example.com"))
    }
}
