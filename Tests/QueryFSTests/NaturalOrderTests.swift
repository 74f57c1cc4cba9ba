import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// SPEC §2 "Natural order" of titles, and the `by-name` view built on it.
final class NaturalOrderTests: XCTestCase {
    /// Asserts that `titles` are strictly ascending in natural order, pairwise.
    private func assertAscending(_ titles: [String], file: StaticString = #filePath, line: UInt = #line) {
        for (i, a) in titles.enumerated() {
            for b in titles[(i + 1)...] {
                XCTAssertLessThan(NaturalOrder.compare(a, b), 0, "\(a.debugDescription) < \(b.debugDescription)", file: file, line: line)
                XCTAssertGreaterThan(NaturalOrder.compare(b, a), 0, "\(b.debugDescription) > \(a.debugDescription)", file: file, line: line)
            }
        }
    }

    private func assertEquivalent(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(NaturalOrder.compare(a, b), 0, "\(a.debugDescription) ~ \(b.debugDescription)", file: file, line: line)
    }

    /// The ASCII titles' key, made from their bytes, is the key made scalar by scalar.
    func testTheASCIIKeyIsTheScalarKey() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789 aZ.-_\u{0}\u{1}\u{2}\u{7f}")
        var titles = ["", "0", "00", "007", "a0", "0a", "a", "A10b02", "file 10", "\u{0}", "x\u{1}9"]
        for _ in 0..<2_000 {
            titles.append(String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for title in titles {
            XCTAssertEqual(NaturalOrder.sortKey(title), NaturalOrder.scalarSortKey(title), title.debugDescription)
        }
        XCTAssertEqual(NaturalOrder.sortKey("Café 2"), NaturalOrder.scalarSortKey("Café 2"))
    }

    func testTheSpecExample() {
        assertAscending(["Item 2", "Item 7", "item 07", "Item 10"])
    }

    func testDigitRunsCompareByValueThenByLength() {
        assertAscending(["2", "7", "07", "007", "10", "010", "99", "100"])
        assertAscending(["a9b", "a10b", "a010b", "a11b"])
        assertAscending(["Chapter 1 part 2", "Chapter 1 part 10", "Chapter 2 part 1"])
        // Zero is the smallest value, however many zeros it is written with.
        assertAscending(["0", "00", "000", "1"])
    }

    func testNumbersLongerThanTwentyDigitsCompareByValue() {
        let big = "123456789012345678901234567890"            // 30 digits: beyond UInt64
        let bigger = "123456789012345678901234567891"
        let longer = "1000000000000000000000000000000"         // 31 digits
        assertAscending(["v99999999999999999999", "v" + big, "v" + bigger, "v" + longer])
        // Leading zeros do not make a number bigger, only longer.
        assertAscending(["x 2", "x 000000000000000000000000000002", "x 3"])
        assertAscending(["x 00000000000000000000000000000000000009", "x 10"])
    }

    func testADigitRunSortsBeforeANonDigitRun() {
        // Bytewise, "!" (0x21) and " " (0x20) come before "0"–"9"; here digits come first.
        assertAscending(["1", "!"])
        assertAscending(["0", " "])
        assertAscending(["9", "a"])
        assertAscending(["999 z", "a"])
        assertAscending(["x1", "x!"])
        assertAscending(["Volume 3", "Volume !"])
    }

    func testOtherRunsCompareCaseInsensitively() {
        assertAscending(["apple", "Banana", "cherry", "DATE"])
        assertEquivalent("Hello World", "hello world")
        assertEquivalent("HELLO 7", "hello 7")
        // Lowercased scalars, not a locale collation: "_" (0x5F) sorts after "Z" (0x5A) bytewise,
        // but before "a" (0x61) once "Z" is lowercased to "z" (0x7A).
        assertAscending(["_x", "ax", "Zx"])
    }

    func testAShorterPrefixSortsFirst() {
        assertAscending(["", "a", "ab", "abc", "abc d"])
        assertAscending(["Item", "Item 2", "Item 2 b", "Item 2 bc"])
        assertAscending(["x", "x1", "x1y"])
    }

    func testNonASCIILowercasing() {
        assertEquivalent("Éclair", "éclair")
        assertEquivalent("ÄRGER", "ärger")
        assertEquivalent("ΣΟΦΙΑ", "σοφια")
        assertEquivalent("ДОМ 3", "дом 3")
        // Lowercased scalars compare by value: "z" (U+7A) before "ä" (U+E4).
        assertAscending(["zebra", "Ärger"])
        assertAscending(["Äa", "äB", "ÄC"])
    }

    func testNonASCIIDigitsAreNotDigits() {
        // Only ASCII digits form digit runs: Arabic-Indic three is an other
        // character, so it sorts after 4 (a digit run comes first).
        assertAscending(["4", "٣"])
        // Fullwidth one too.
        assertAscending(["2", "１"])
    }

    func testControlCharactersInTitlesKeepTheirOrder() {
        // The sort key escapes bytes 0x00 and 0x01; their order must survive.
        assertAscending(["a", "a\u{0}", "a\u{0}\u{0}", "a\u{1}", "a\u{2}", "a b"])
        assertAscending(["\u{0}", "\u{1}", "\u{2}"])
    }

    func testTheByNameViewUsesNaturalOrder() {
        let titles = ["Item 10", "item 07", "Item 2", "Item 7", "apple", "Banana", "1 first", "Éclair", "eclair"]
        let items = titles.enumerated().map { makeItem("n\($0.offset).txt", title: $0.element) }
        let ordered = ViewDefinition.byName.select(items).map { items[$0].title }
        XCTAssertEqual(ordered, ["1 first", "apple", "Banana", "eclair", "Item 2", "Item 7", "item 07", "Item 10", "Éclair"])
    }

    func testEquivalentTitlesAreOrderedByNameBytes() {
        // Equal and case-equivalent titles: names ascending bytewise, whatever the insertion order.
        let items = [
            makeItem("c.x", title: "Same"), makeItem("B.x", title: "same"), makeItem("a.x", title: "SAME"),
            makeItem("Z.x", title: "Same"), makeItem("b.x", title: "Same"),
        ]
        XCTAssertEqual(itemNames(.byName, items), ["B.x", "Z.x", "a.x", "b.x", "c.x"])
        XCTAssertEqual(itemNames(.byName, items.reversed()), ["B.x", "Z.x", "a.x", "b.x", "c.x"])
    }

    func testSortKeysAgreeWithCompare() {
        let titles = ["Item 2", "item 07", "", "a\u{0}", "Ä", "x 10", "10", "010", "z"]
        for a in titles {
            for b in titles {
                let byKey = compareBytes(NaturalOrder.sortKey(a), NaturalOrder.sortKey(b))
                XCTAssertEqual(byKey.signum(), NaturalOrder.compare(a, b).signum())
            }
        }
        // An item's stored key is its title's key, also after a title change.
        var item = makeItem("a.txt", title: "Item 7")
        XCTAssertEqual(item.titleSortKey, NaturalOrder.sortKey("Item 7"))
        item.setTitle("Item 10")
        XCTAssertEqual(item.titleSortKey, NaturalOrder.sortKey("Item 10"))
    }
}
