import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// SPEC §3 "Entries of a view": `<rank> <title>.<ext>`, sanitizing, rank
/// width, the 255-byte cut.
final class EntryNamingTests: XCTestCase {
    private func entry(_ name: String, title: String?, rank: Int = 1, count: Int = 1) -> String {
        String(decoding: EntryNaming.entryName(rank: rank, count: count, item: makeItem(name, title: title)), as: UTF8.self)
    }

    private func entryBytes(_ name: [UInt8], title: String?, rank: Int = 1, count: Int = 1) -> [UInt8] {
        let item = Item(name: ItemName(name), kind: .bundle, title: title)
        return EntryNaming.entryName(rank: rank, count: count, item: item)
    }

    // MARK: Shape

    func testNameIsRankSpaceTitleDotExt() {
        XCTAssertEqual(entry("7F04827B.hpwebsite", title: "Google: The Epic Search for the number: 4"),
                       "0001 Google: The Epic Search for the number: 4.hpwebsite")
        XCTAssertEqual(entry("notes", title: "My notes"), "0001 My notes")            // no ext: no dot
        XCTAssertEqual(entry("report.pdf", title: nil), "0001 report.pdf")            // title from name
        XCTAssertEqual(entry("archive.tar.gz", title: nil), "0001 archive.tar.gz")
        XCTAssertEqual(entry("a.", title: nil), "0001 a.")                          // empty ext: name kept whole
        XCTAssertEqual(entry("photo.JPG", title: "Beach"), "0001 Beach.JPG")          // ext kept as is
    }

    // MARK: Rank

    func testRankWidthIsFourOrTheDigitsOfTheCount() {
        XCTAssertEqual(EntryNaming.rankWidth(count: 0), 4)
        XCTAssertEqual(EntryNaming.rankWidth(count: 1), 4)
        XCTAssertEqual(EntryNaming.rankWidth(count: 9999), 4)
        XCTAssertEqual(EntryNaming.rankWidth(count: 10000), 5)
        XCTAssertEqual(EntryNaming.rankWidth(count: 12345), 5)
        XCTAssertEqual(EntryNaming.rankWidth(count: 99999), 5)
        XCTAssertEqual(EntryNaming.rankWidth(count: 100000), 6)
        XCTAssertEqual(EntryNaming.rankWidth(count: 1_234_567), 7)
    }

    func testRanksAreZeroPaddedToTheWidth() {
        XCTAssertEqual(entry("a.txt", title: "A", rank: 1, count: 3), "0001 A.txt")
        XCTAssertEqual(entry("a.txt", title: "A", rank: 42, count: 9999), "0042 A.txt")
        XCTAssertEqual(entry("a.txt", title: "A", rank: 9999, count: 9999), "9999 A.txt")
        XCTAssertEqual(entry("a.txt", title: "A", rank: 7, count: 12345), "00007 A.txt")
        XCTAssertEqual(entry("a.txt", title: "A", rank: 12345, count: 12345), "12345 A.txt")
        XCTAssertEqual(entry("a.txt", title: "A", rank: 3, count: 1_000_000), "0000003 A.txt")
    }

    func testAViewOf12345ItemsHasFiveDigitRanksFromOne() {
        let items = (0..<12345).map { makeItem("item\($0).txt", title: "T", modified: Int64($0)) }
        let entries = ViewDefinition.byModified.entries(of: items)
        XCTAssertEqual(entries.count, 12345)
        XCTAssertEqual(entries.first?.nameString, "00001 T.txt")
        XCTAssertEqual(entries[9].nameString, "00010 T.txt")
        XCTAssertEqual(entries.last?.nameString, "12345 T.txt")
        XCTAssertEqual(entries.first.map { items[$0.itemIndex].name }, ItemName("item12344.txt"))  // newest first
        // Every rank once, in order: plain `ls` (byte order) lists the view in its order.
        let names = entries.map(\.nameString)
        XCTAssertEqual(names, names.sorted { compareBytes(Array($0.utf8), Array($1.utf8)) < 0 })
        XCTAssertEqual(Set(names.map { $0.prefix(5) }).count, 12345)
    }

    func testAViewOf9999ItemsKeepsFourDigitRanks() {
        let items = (0..<9999).map { makeItem("i\($0)", title: "T", modified: Int64($0)) }
        let entries = ViewDefinition.byModified.entries(of: items)
        XCTAssertEqual(entries.first?.nameString, "0001 T")
        XCTAssertEqual(entries.last?.nameString, "9999 T")
    }

    // MARK: Sanitizing

    func testSlashBecomesDivisionSlash() {
        XCTAssertEqual(EntryNaming.sanitize("AC/DC"), "AC\u{2215}DC")
        XCTAssertEqual(EntryNaming.sanitize("/a//b/"), "\u{2215}a\u{2215}\u{2215}b\u{2215}")
        XCTAssertEqual(entry("x.hpwebsite", title: "either/or"), "0001 either∕or.hpwebsite")
    }

    func testEveryControlCharacterBecomesASpace() {
        for value in Array(0x00...0x1F) + [0x7F] {
            let control = String(Unicode.Scalar(UInt8(value)))
            XCTAssertEqual(EntryNaming.sanitize("a\(control)b"), "a b", "U+\(String(value, radix: 16))")
        }
        XCTAssertEqual(entry("x.txt", title: "line one\nline two\ttab\u{7F}del\u{0}nul"), "0001 line one line two tab del nul.txt")
        // Not control characters: C1 range, printable ASCII.
        XCTAssertEqual(EntryNaming.sanitize("a\u{80}b~"), "a\u{80}b~")
    }

    func testLeadingAndTrailingWhiteSpaceIsTrimmed() {
        XCTAssertEqual(EntryNaming.sanitize("  padded  "), "padded")
        XCTAssertEqual(EntryNaming.sanitize("\t\n title \r\n"), "title")   // control characters trimmed once spaces
        XCTAssertEqual(EntryNaming.sanitize("\u{00A0}\u{3000}wide\u{2003}"), "wide")  // Unicode white space
        XCTAssertEqual(EntryNaming.sanitize("inner  space"), "inner  space")         // inside: kept
        XCTAssertEqual(entry("x.txt", title: "  Hello  "), "0001 Hello.txt")
    }

    func testAnEmptyTitleFallsBackToTheNameWithoutExt() {
        XCTAssertEqual(entry("doc.hpwebsite", title: ""), "0001 doc.hpwebsite")
        XCTAssertEqual(entry("doc.hpwebsite", title: "   "), "0001 doc.hpwebsite")
        XCTAssertEqual(entry("doc.hpwebsite", title: "\n\t\u{0}"), "0001 doc.hpwebsite")
        XCTAssertEqual(entry("archive.tar.gz", title: " "), "0001 archive.tar.gz")
        XCTAssertEqual(entry("noext", title: ""), "0001 noext")
    }

    func testInvalidUTF8InANameDerivedTitleBecomesReplacementCharacters() {
        // "caf\xE9" (Latin-1) and a lone 0xFF: not UTF-8.
        let name: [UInt8] = Array("caf".utf8) + [0xE9, 0x20, 0xFF] + Array(".txt".utf8)
        let bytes = entryBytes(name, title: nil)
        XCTAssertEqual(Array(String(decoding: bytes, as: UTF8.self).utf8), bytes, "entry names are valid UTF-8")
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 caf\u{FFFD} \u{FFFD}.txt")
        // The item keeps its exact bytes; only the entry name is repaired.
        let item = Item(name: ItemName(name), kind: .file)
        XCTAssertEqual(item.name.bytes, name)
        XCTAssertEqual(item.title, "caf\u{FFFD} \u{FFFD}")
    }

    func testInvalidUTF8InTheExtensionBecomesReplacementCharacters() {
        let bytes = entryBytes(Array("a.".utf8) + [0xC3], title: "T")  // truncated two-byte sequence
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 T.\u{FFFD}")
        XCTAssertEqual(Array(String(decoding: bytes, as: UTF8.self).utf8), bytes)
    }

    func testSanitizingRulesCombine() {
        XCTAssertEqual(EntryNaming.sanitize(" \t/ a\u{1}b / \n"), "∕ a b ∕")
        XCTAssertEqual(EntryNaming.sanitize("/"), "∕")   // a slash alone is not empty
        XCTAssertEqual(EntryNaming.sanitize(""), "")
    }

    // MARK: The 255-byte cut

    /// Asserts the bytes are valid UTF-8 and at most 255 long.
    private func assertValidName(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertLessThanOrEqual(bytes.count, 255, file: file, line: line)
        XCTAssertEqual(Array(String(decoding: bytes, as: UTF8.self).utf8), bytes, "valid UTF-8", file: file, line: line)
    }

    func testALongASCIITitleIsCutTo255Bytes() {
        let bytes = entryBytes(Array("x.hpwebsite".utf8), title: String(repeating: "a", count: 400))
        assertValidName(bytes)
        XCTAssertEqual(bytes.count, 255)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 " + String(repeating: "a", count: 255 - 5 - 10) + ".hpwebsite")
    }

    func testATitleThatFitsExactlyIsNotCut() {
        let title = String(repeating: "b", count: 255 - 5 - 4)
        let bytes = entryBytes(Array("x.txt".utf8), title: title)
        XCTAssertEqual(bytes.count, 255)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 \(title).txt")
    }

    func testTwoByteCharactersAreCutAtWholeScalars() {
        // "0001 " (5) + title + ".txt" (4): 246 bytes of room, 123 "é".
        let bytes = entryBytes(Array("x.txt".utf8), title: String(repeating: "é", count: 200))
        assertValidName(bytes)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 " + String(repeating: "é", count: 123) + ".txt")
        // Odd room: 245 bytes (".txts" is 5) → 122 "é" (244 bytes), the longest whole prefix.
        let odd = entryBytes(Array("x.txts".utf8), title: String(repeating: "é", count: 200))
        assertValidName(odd)
        XCTAssertEqual(String(decoding: odd, as: UTF8.self), "0001 " + String(repeating: "é", count: 122) + ".txts")
        XCTAssertEqual(odd.count, 254)
    }

    func testThreeAndFourByteCharactersAreCutAtWholeScalars() {
        for (scalar, size) in [("€", 3), ("😀", 4), ("𝄞", 4)] {
            for ext in ["txt", "hpwebsite", "a", ""] {
                let name = ext.isEmpty ? "x" : "x.\(ext)"
                let bytes = entryBytes(Array(name.utf8), title: "Start " + String(repeating: scalar, count: 100))
                assertValidName(bytes)
                let suffix = ext.isEmpty ? 0 : ext.utf8.count + 1
                let room = 255 - 5 - suffix - "Start ".utf8.count
                let expected = "0001 Start " + String(repeating: scalar, count: room / size) + (ext.isEmpty ? "" : ".\(ext)")
                XCTAssertEqual(String(decoding: bytes, as: UTF8.self), expected, "\(scalar) .\(ext)")
                // Longest prefix: one more scalar would not fit.
                XCTAssertGreaterThan(bytes.count + size, 255)
            }
        }
    }

    func testACombiningSequenceMayBeCutBetweenScalars() {
        // Whole Unicode scalars, not whole grapheme clusters: "e" + U+0301 may lose its accent.
        let title = String(repeating: "a", count: 245) + "e\u{301}"   // room is 246 with ".txt"
        let bytes = entryBytes(Array("x.txt".utf8), title: title)
        assertValidName(bytes)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 " + String(repeating: "a", count: 245) + "e.txt")
    }

    func testTheRankWidthCountsAgainstThe255Bytes() {
        let item = makeItem("x.txt", title: String(repeating: "é", count: 200))
        let bytes = EntryNaming.entryName(rank: 123_456, count: 123_456, item: item)
        assertValidName(bytes)
        // "123456 " (7) + ".txt" (4): 244 bytes of room, 122 "é".
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "123456 " + String(repeating: "é", count: 122) + ".txt")
    }

    func testTheExtensionIsKeptWholeWhileAnEmptyTitleWouldFit() {
        // A 249-byte ext: "0001 " + "" + "." + 249 = 255 fits with an empty title.
        let ext = String(repeating: "e", count: 249)
        let bytes = entryBytes(Array("t.\(ext)".utf8), title: "Title")
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 .\(ext)")
        XCTAssertEqual(bytes.count, 255)
        // One byte less of ext: one byte of title fits.
        let shorter = String(repeating: "e", count: 248)
        XCTAssertEqual(String(decoding: entryBytes(Array("t.\(shorter)".utf8), title: "Title"), as: UTF8.self), "0001 T.\(shorter)")
    }

    func testTheExtensionIsCutOnlyWhenEvenAnEmptyTitleCannotFit() {
        // Name "a." + 253 × "x" = 255 bytes: "0001 ." + 253 would be 259.
        let ext = String(repeating: "x", count: 253)
        let bytes = entryBytes(Array("a.\(ext)".utf8), title: "Title")
        assertValidName(bytes)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "0001 ." + String(repeating: "x", count: 249))
        // Multi-byte ext: "a." + 126 × "é" (254 bytes): the ext is cut at a whole
        // "é" to 249 bytes ("." + 124 "é"); the one byte left over then takes the
        // longest title prefix that fits — one ASCII character, or nothing.
        let accented = String(repeating: "é", count: 126)
        let cut = entryBytes(Array("a.\(accented)".utf8), title: "Title")
        assertValidName(cut)
        XCTAssertEqual(String(decoding: cut, as: UTF8.self), "0001 T." + String(repeating: "é", count: 124))
        let wide = entryBytes(Array("a.\(accented)".utf8), title: "Élan")
        assertValidName(wide)
        XCTAssertEqual(String(decoding: wide, as: UTF8.self), "0001 ." + String(repeating: "é", count: 124))
        XCTAssertEqual(wide.count, 254)
    }

    func testEveryEntryOfAViewIsAValidNameOfAtMost255Bytes() {
        let long = String(repeating: "ü€😀/\u{1}", count: 100)
        let items = (0..<30).map { index in
            makeItem("item\(index)." + String(repeating: "é", count: index * 4), title: String(long.dropFirst(index)))
        }
        for entry in ViewDefinition.byName.entries(of: items) {
            assertValidName(entry.name)
            XCTAssertFalse(entry.name.contains(UInt8(ascii: "/")))
            XCTAssertFalse(entry.name.contains { $0 < 0x20 || $0 == 0x7F })
        }
    }
}
