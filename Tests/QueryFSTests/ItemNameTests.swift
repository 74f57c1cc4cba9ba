import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// SPEC §1 `name` and `ext`, and the title that falls back to the name.
final class ItemNameTests: XCTestCase {
    func testExtIsWhatFollowsTheLastDot() {
        XCTAssertEqual(ItemName("7F04827B-83FD-4C31-9E27-5B243E4851D0.hpwebsite").ext, "hpwebsite")
        XCTAssertEqual(ItemName("report.pdf").ext, "pdf")
        XCTAssertEqual(ItemName("archive.tar.gz").ext, "gz")
        XCTAssertEqual(ItemName("archive.tar.gz").stem, "archive.tar")
        XCTAssertEqual(ItemName("a.b.c.d").ext, "d")
        XCTAssertEqual(ItemName("v1.2 notes").ext, "2 notes")     // whatever follows the last dot
    }

    func testNoDotMeansNoExt() {
        XCTAssertEqual(ItemName("README").ext, "")
        XCTAssertEqual(ItemName("README").stem, "README")
    }

    func testADotThatIsTheFirstCharacterDoesNotStartAnExt() {
        XCTAssertEqual(ItemName(".hidden").ext, "")
        XCTAssertEqual(ItemName(".hidden").stem, ".hidden")
        XCTAssertEqual(ItemName(".config.json").ext, "json")      // a later dot still does
        XCTAssertTrue(ItemName(".hidden").isHidden)
        XCTAssertTrue(ItemName(".DS_Store").isHidden)
        XCTAssertTrue(ItemName(".").isHidden)
        XCTAssertFalse(ItemName("visible.").isHidden)
        XCTAssertFalse(ItemName("a.b").isHidden)
    }

    func testANameEndingInADotHasAnEmptyExtAndKeepsItsDot() {
        // `a.`: ext is empty, so there is no `.ext` to remove from the title.
        XCTAssertEqual(ItemName("a.").ext, "")
        XCTAssertEqual(ItemName("a.").stem, "a.")
        XCTAssertEqual(makeItem("a.").title, "a.")
        XCTAssertEqual(ItemName("a..").ext, "")
        XCTAssertEqual(ItemName("a..").stem, "a..")
    }

    func testTitleFallsBackToTheNameWithoutExt() {
        XCTAssertEqual(makeItem("archive.tar.gz").title, "archive.tar")
        XCTAssertEqual(makeItem("notes.txt", kind: .file).title, "notes")
        XCTAssertEqual(makeItem("README", kind: .file).title, "README")
        XCTAssertEqual(makeItem("x.hpwebsite", title: "Payload title").title, "Payload title")
    }

    func testNamesAreBytes() {
        let bytes: [UInt8] = [0x66, 0xFF, 0xFE, 0x2E, 0x62, 0x69, 0x6E]  // "f\xFF\xFE.bin"
        let name = ItemName(bytes)
        XCTAssertEqual(name.bytes, bytes)
        XCTAssertEqual(Array(name.extensionBytes), Array("bin".utf8))
        XCTAssertEqual(Array(name.stemBytes), [0x66, 0xFF, 0xFE])
        XCTAssertEqual(name.stem, "f\u{FFFD}\u{FFFD}")
        // Two names that display alike are still different names.
        XCTAssertNotEqual(ItemName([0x66, 0xFF]), ItemName([0x66, 0xFE]))
        XCTAssertEqual(ItemName([0x66, 0xFF]).description, ItemName([0x66, 0xFE]).description)
    }

    func testNamesOrderBytewise() {
        let names: [[UInt8]] = [[0x41], [0x61], [0x61, 0x00], [0x61, 0x62], [0xC3, 0xA9], [0xFF]]
        for (i, a) in names.enumerated() {
            for b in names[(i + 1)...] {
                XCTAssertLessThan(ItemName(a), ItemName(b))
                XCTAssertFalse(ItemName(b) < ItemName(a))
            }
        }
        XCTAssertLessThan(ItemName("B"), ItemName("a"))   // uppercase first: bytes, not case-folded
        XCTAssertLessThan(ItemName("a"), ItemName("ab"))  // prefix first
    }
}
