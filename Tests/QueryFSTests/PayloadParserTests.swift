import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// The payload parsers (SPEC §1 "payload"): XML property lists, binary
/// property lists and JSON, into `PayloadValue`.
final class PayloadParserTests: XCTestCase {
    private func xml(_ body: String) throws -> PayloadValue {
        try XMLPropertyListParser.parse(Array(FixtureTestCase.xmlPlist(body).utf8))
    }

    private func json(_ text: String) throws -> PayloadValue {
        try JSONParser.parse(Array(text.utf8))
    }

    private func string(_ value: PayloadValue?, file: StaticString = #filePath, line: UInt = #line) -> String? {
        guard case .string(let text)? = value else {
            XCTFail("not a string: \(String(describing: value))", file: file, line: line)
            return nil
        }
        return text
    }

    // MARK: XML property lists

    func testTheHipstapaperShape() throws {
        let value = try xml("""
            <dict>
              <key>isArchived</key> <false/>
              <key>tags</key>       <array><string>Tag Number 4</string></array>
              <key>webLocation</key><dict><key>relative</key><string>https://example.com/4</string></dict>
              <key>webTitle</key>   <string>Google: The Epic Search for the number: 4</string>
            </dict>
            """)
        XCTAssertEqual(value, .dictionary([
            "isArchived": .bool(false),
            "tags": .array([.string("Tag Number 4")]),
            "webLocation": .dictionary(["relative": .string("https://example.com/4")]),
            "webTitle": .string("Google: The Epic Search for the number: 4"),
        ]))
        XCTAssertEqual(value.value(atKeyPath: "webLocation.relative"), .string("https://example.com/4"))
        XCTAssertEqual(value.value(atKeyPath: "tags.0"), .string("Tag Number 4"))
        XCTAssertNil(value.value(atKeyPath: "tags.1"))
        XCTAssertNil(value.value(atKeyPath: "webLocation.absolute"))
    }

    func testEntities() throws {
        let value = try xml("""
            <dict><key>a&amp;b</key><string>Tom &amp; Jerry &lt;3 &gt; &quot;q&quot; &apos;s&apos; &#x2215; &#X41;&#233;&#128512;</string></dict>
            """)
        XCTAssertEqual(value, .dictionary(["a&b": .string("Tom & Jerry <3 > \"q\" 's' \u{2215} Aé😀")]))
    }

    func testUnknownOrBadEntitiesAreErrors() {
        XCTAssertThrowsError(try xml("<string>&nbsp;</string>"))
        XCTAssertThrowsError(try xml("<string>&#xD800;</string>"))   // a surrogate is not a scalar
        XCTAssertThrowsError(try xml("<string>a & b</string>"))
    }

    func testCDATAAndComments() throws {
        let value = try xml("""
            <!-- a comment before the value -->
            <dict>
              <!-- between entries -->
              <key>code</key><string><![CDATA[if a < b && c > d { }]]></string>
              <key>mixed</key><string>one <![CDATA[<two>]]> three<!-- hidden --> four &amp; five</string>
              <!-- <key>commented</key><string>out</string> -->
            </dict>
            <!-- after -->
            """)
        XCTAssertEqual(value, .dictionary([
            "code": .string("if a < b && c > d { }"),
            "mixed": .string("one <two> three four & five"),
        ]))
    }

    func testEmptyElements() throws {
        XCTAssertEqual(try xml("<dict/>"), .dictionary([:]))
        XCTAssertEqual(try xml("<dict></dict>"), .dictionary([:]))
        XCTAssertEqual(try xml("<array/>"), .array([]))
        XCTAssertEqual(try xml("<dict><key>s</key><string/><key>t</key><string></string><key>a</key><array/><key>d</key><dict/></dict>"),
                       .dictionary(["s": .string(""), "t": .string(""), "a": .array([]), "d": .dictionary([:])]))
    }

    func testNestedArraysAndDictionaries() throws {
        let value = try xml("""
            <dict>
              <key>matrix</key><array><array><integer>1</integer><integer>2</integer></array><array/><array><array><string>deep</string></array></array></array>
              <key>outer</key><dict><key>inner</key><dict><key>list</key><array><dict><key>k</key><true/></dict></array></dict></dict>
            </dict>
            """)
        XCTAssertEqual(value.value(atKeyPath: "matrix"), .array([
            .array([.integer(1), .integer(2)]), .array([]), .array([.array([.string("deep")])]),
        ]))
        XCTAssertEqual(value.value(atKeyPath: "outer.inner.list.0.k"), .bool(true))
        XCTAssertEqual(value.value(atKeyPath: "matrix.2.0.0"), .string("deep"))
    }

    func testScalarTypes() throws {
        let value = try xml("""
            <dict>
              <key>int</key><integer>42</integer>
              <key>negative</key><integer>-17</integer>
              <key>spaced</key><integer> 7 </integer>
              <key>max</key><integer>9223372036854775807</integer>
              <key>real</key><real>3.25</real>
              <key>exp</key><real>-1.5e3</real>
              <key>wholeReal</key><real>2</real>
              <key>yes</key><true/>
              <key>no</key><false/>
              <key>date</key><date>2024-01-02T03:04:05Z</date>
              <key>data</key><data>
                AAEC+vv8
                /f7/
              </data>
              <key>emptyData</key><data></data>
            </dict>
            """)
        XCTAssertEqual(value.value(atKeyPath: "int"), .integer(42))
        XCTAssertEqual(value.value(atKeyPath: "negative"), .integer(-17))
        XCTAssertEqual(value.value(atKeyPath: "spaced"), .integer(7))
        XCTAssertEqual(value.value(atKeyPath: "max"), .integer(.max))
        XCTAssertEqual(value.value(atKeyPath: "real"), .real(3.25))
        XCTAssertEqual(value.value(atKeyPath: "exp"), .real(-1500))
        XCTAssertEqual(value.value(atKeyPath: "wholeReal"), .real(2))
        XCTAssertEqual(value.value(atKeyPath: "yes"), .bool(true))
        XCTAssertEqual(value.value(atKeyPath: "no"), .bool(false))
        XCTAssertEqual(value.value(atKeyPath: "date"), .date(1_704_164_645))
        XCTAssertEqual(value.value(atKeyPath: "data"), .data([0, 1, 2, 250, 251, 252, 253, 254, 255]))
        XCTAssertEqual(value.value(atKeyPath: "emptyData"), .data([]))
    }

    func testNonASCIIAndWhiteSpaceInStringsAreKept() throws {
        XCTAssertEqual(try xml("<string>  Café ☕ 日本語 😀\n  </string>"), .string("  Café ☕ 日本語 😀\n  "))
        // Invalid UTF-8 inside a string becomes U+FFFD; the rest survives.
        let bytes = Array("<plist><string>caf".utf8) + [0xE9] + Array("!</string></plist>".utf8)
        XCTAssertEqual(try XMLPropertyListParser.parse(bytes), .string("caf\u{FFFD}!"))
    }

    func testAPlistWithoutPreambleOrPlistElement() throws {
        XCTAssertEqual(try XMLPropertyListParser.parse(Array("<dict><key>a</key><integer>1</integer></dict>".utf8)),
                       .dictionary(["a": .integer(1)]))
        XCTAssertEqual(try XMLPropertyListParser.parse(Array("\u{FEFF}<?xml version=\"1.0\"?>\n<plist><true/></plist>\n".utf8)),
                       .bool(true))
    }

    func testMalformedXMLIsAnError() {
        let full = FixtureTestCase.xmlPlist("<dict><key>webTitle</key><string>Hello</string></dict>")
        // Every truncation of a valid document is an error, never a crash or a partial value.
        let bytes = Array(full.utf8)
        let end = bytes.lastIndex(of: UInt8(ascii: ">"))!
        for length in 0...end {
            XCTAssertThrowsError(try XMLPropertyListParser.parse(Array(bytes[..<length])), "truncated at \(length)")
        }
        XCTAssertNoThrow(try XMLPropertyListParser.parse(bytes))
        for broken in [
            "<dict><key>a</key></dict>",                        // key without a value
            "<dict><string>a</string></dict>",                  // value without a key
            "<dict><key>a</key><string>b</dict>",               // mismatched end
            "<array><string>a</string>",                         // unterminated
            "<string>a</string><string>b</string>",             // two top-level values
            "<unknown>1</unknown>",
            "<integer>twelve</integer>",
            "<real>x</real>",
            "<date>yesterday</date>",
            "<data>!!!!</data>",
            "<true>yes</true>",
            "<string><![CDATA[open</string>",
            "<string>a<!-- open</string>",
            "not xml at all",
            "",
        ] {
            XCTAssertThrowsError(try xml(broken), broken)
        }
    }

    func testErrorsSayWhere() {
        XCTAssertThrowsError(try XMLPropertyListParser.parse(Array("<dict><key>a</key><integer>x</integer></dict>".utf8))) { error in
            let error = error as? PayloadParseError
            XCTAssertNotNil(error)
            XCTAssertTrue("\(error!)".contains("at byte"), "\(error!)")
        }
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "<array>", count: 10_000) + String(repeating: "</array>", count: 10_000)
        XCTAssertThrowsError(try XMLPropertyListParser.parse(Array(deep.utf8)))
        let deepJSON = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        XCTAssertThrowsError(try json(deepJSON))
    }

    // MARK: Binary property lists

    func testABinaryPlistWrittenByFoundation() throws {
        let plist: [String: Any] = [
            "title": "Café ☕ 日本語 😀",                // non-ASCII: written as UTF-16
            "ascii": "plain",
            "archived": NSNumber(value: true),
            "count": NSNumber(value: 42),
            "negative": NSNumber(value: -7),
            "large": NSNumber(value: Int64(1) << 40),
            "ratio": NSNumber(value: 1.5),
            "date": Date(timeIntervalSince1970: 1_704_164_645),
            "blob": Data([0, 1, 2, 255]),
            "tags": ["one", "two", "three"],
            "nested": ["inner": ["list": [NSNumber(value: 1), ["deep"]] as [Any]] as [String: Any]] as [String: Any],
            "emptyDict": [String: Any](),
            "emptyString": "",
            "webLocation": ["relative": "https://example.com/a?b=c&d"],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let bytes = [UInt8](data)
        XCTAssertEqual(Array(bytes.prefix(8)), Array("bplist00".utf8))
        let value = try BinaryPropertyListParser.parse(bytes)
        XCTAssertEqual(value.value(atKeyPath: "title"), .string("Café ☕ 日本語 😀"))
        XCTAssertEqual(value.value(atKeyPath: "ascii"), .string("plain"))
        XCTAssertEqual(value.value(atKeyPath: "archived"), .bool(true))
        XCTAssertEqual(value.value(atKeyPath: "count"), .integer(42))
        XCTAssertEqual(value.value(atKeyPath: "negative"), .integer(-7))
        XCTAssertEqual(value.value(atKeyPath: "large"), .integer(1 << 40))
        XCTAssertEqual(value.value(atKeyPath: "ratio"), .real(1.5))
        XCTAssertEqual(value.value(atKeyPath: "date"), .date(1_704_164_645))
        XCTAssertEqual(value.value(atKeyPath: "blob"), .data([0, 1, 2, 255]))
        XCTAssertEqual(value.value(atKeyPath: "tags"), .array([.string("one"), .string("two"), .string("three")]))
        XCTAssertEqual(value.value(atKeyPath: "nested.inner.list"), .array([.integer(1), .array([.string("deep")])]))
        XCTAssertEqual(value.value(atKeyPath: "emptyDict"), .dictionary([:]))
        XCTAssertEqual(value.value(atKeyPath: "emptyString"), .string(""))
        XCTAssertEqual(value.value(atKeyPath: "webLocation.relative"), .string("https://example.com/a?b=c&d"))
        // The decoder picks the binary parser by its magic, whatever the file is called.
        XCTAssertEqual(try PayloadDecoder.decode(bytes, fileName: "payload.plist"), value)
    }

    /// `{"title": "Hi", "archived": true}`, assembled by hand.
    static let handMadeBinaryPlist: [UInt8] = {
        var bytes = Array("bplist00".utf8)
        bytes += [0xD2, 0x01, 0x02, 0x03, 0x04]            // 0 @8:  dict of 2, keys 1 2, values 3 4
        bytes += [0x55] + Array("title".utf8)              // 1 @13: ASCII string of 5
        bytes += [0x58] + Array("archived".utf8)           // 2 @19: ASCII string of 8
        bytes += [0x52] + Array("Hi".utf8)                 // 3 @28: ASCII string of 2
        bytes += [0x09]                                    // 4 @31: true
        bytes += [8, 13, 19, 28, 31]                        // offset table @32
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]                   // trailer: offset size 1, reference size 1
        bytes += [0, 0, 0, 0, 0, 0, 0, 5]                   // 5 objects
        bytes += [0, 0, 0, 0, 0, 0, 0, 0]                   // top object 0
        bytes += [0, 0, 0, 0, 0, 0, 0, 32]                  // offset table at 32
        return bytes
    }()

    func testAHandAssembledBinaryPlist() throws {
        XCTAssertEqual(try BinaryPropertyListParser.parse(Self.handMadeBinaryPlist),
                       .dictionary(["title": .string("Hi"), "archived": .bool(true)]))
    }

    func testMalformedBinaryPlistsAreErrors() {
        let good = Self.handMadeBinaryPlist
        for length in 0..<good.count {
            XCTAssertThrowsError(try BinaryPropertyListParser.parse(Array(good.prefix(length))), "truncated at \(length)")
        }
        // An offset pointing outside the objects, a reference to a missing object, a cycle.
        var badOffset = good
        badOffset[32] = 200
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(badOffset))
        var badReference = good
        badReference[11] = 9
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(badReference))
        var cycle = good
        cycle[11] = 0   // the dictionary's first value is the dictionary itself
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(cycle))
        var badTrailer = good
        badTrailer[good.count - 1] = 0xFF
        XCTAssertThrowsError(try BinaryPropertyListParser.parse(badTrailer))
    }

    // MARK: JSON

    func testJSONValues() throws {
        let value = try json("""
            {
              "title": "Caf\\u00e9 \\ud83d\\ude00 \\"quoted\\" \\\\ \\/ \\n\\t",
              "raw": "日本語",
              "archived": true, "isArchived": false, "nothing": null,
              "int": -12, "real": 2.5, "exp": 1e3, "big": 12345678901234567890,
              "tags": ["a", "b", 3, ["nested"]],
              "webLocation": {"relative": "https://example.com"},
              "empty": {}, "emptyArray": []
            }
            """)
        XCTAssertEqual(value.value(atKeyPath: "title"), .string("Café 😀 \"quoted\" \\ / \n\t"))
        XCTAssertEqual(value.value(atKeyPath: "raw"), .string("日本語"))
        XCTAssertEqual(value.value(atKeyPath: "archived"), .bool(true))
        XCTAssertEqual(value.value(atKeyPath: "isArchived"), .bool(false))
        XCTAssertEqual(value.value(atKeyPath: "nothing"), .null)
        XCTAssertEqual(value.value(atKeyPath: "int"), .integer(-12))
        XCTAssertEqual(value.value(atKeyPath: "real"), .real(2.5))
        XCTAssertEqual(value.value(atKeyPath: "exp"), .real(1000))
        XCTAssertEqual(value.value(atKeyPath: "big"), .real(Double("12345678901234567890")!))   // beyond Int64: a real
        XCTAssertEqual(value.value(atKeyPath: "tags"), .array([.string("a"), .string("b"), .integer(3), .array([.string("nested")])]))
        XCTAssertEqual(value.value(atKeyPath: "webLocation.relative"), .string("https://example.com"))
        XCTAssertEqual(value.value(atKeyPath: "empty"), .dictionary([:]))
        XCTAssertEqual(value.value(atKeyPath: "emptyArray"), .array([]))
        // Booleans stay booleans and numbers stay numbers (unlike JSONSerialization on Linux).
        XCTAssertEqual(try json("[true, 1, 0, false]"), .array([.bool(true), .integer(1), .integer(0), .bool(false)]))
    }

    func testJSONWithAByteOrderMark() throws {
        XCTAssertEqual(try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("{\"a\": 1}".utf8)), .dictionary(["a": .integer(1)]))
    }

    func testMalformedJSONIsAnError() {
        for broken in [
            "", "{", "{\"a\": 1", "{\"a\" 1}", "{\"a\": 1,}", "[1, 2,]", "{a: 1}", "{'a': 1}",
            "{\"a\": tru}", "{\"a\": nul}", "{\"a\": \"unterminated}", "{\"a\": \"bad \\q escape\"}",
            "{\"a\": \"\\u12\"}", "{\"a\": \"raw\ncontrol\"}", "{} {}", "{\"a\": 1} x", "{\"a\": -}",
        ] {
            XCTAssertThrowsError(try json(broken), broken.debugDescription)
        }
        let good = Array("{\"title\": \"Hello\", \"tags\": [\"a\"]}".utf8)
        for length in 0..<good.count {
            XCTAssertThrowsError(try JSONParser.parse(Array(good.prefix(length))), "truncated at \(length)")
        }
    }
}
