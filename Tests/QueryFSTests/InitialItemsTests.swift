import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection

/// `InitialItems.compactRead`: the items a start read, moved to fresh memory
/// through the index file's encoding, come back exactly as they were, in
/// their order with their stamps; one the encoding cannot carry back (a
/// payload value nested deeper than the index keeps) makes the start read
/// the names again rather than lose anything.
final class InitialItemsTests: XCTestCase {
    private func item(_ number: Int, payload: [String: PayloadValue] = [:]) -> Item {
        Item(name: ItemName(Array("notes/n\(number).md".utf8)), kind: .file, title: "Note \(number)", archived: number % 2 == 0,
             tags: ["a/b", "t\(number)"], url: number % 3 == 0 ? nil : "https://example.com/\(number)",
             modified: Timestamp(seconds: 1_000 + Int64(number), nanoseconds: 5), created: Timestamp(seconds: 900, nanoseconds: 0),
             size: UInt64(number), payloadValues: payload, problems: number == 1 ? ["front matter: a problem"] : [])
    }

    func testCompactedItemsAreTheItemsRead() {
        var start = InitialItems(capacity: 3)
        let read = [item(1, payload: ["status": .string("draft"), "rating": .integer(4), "list": .array([.bool(true), .null])]),
                    item(2), item(3, payload: ["when": .date(1_700_000_000.5)])]
        for (offset, item) in read.enumerated() { start.add(item, stamp: UInt64(10 + offset)) }
        start.compactRead { _ in
            XCTFail("read again though the encoding carries everything")
            return []
        }
        XCTAssertEqual(start.records.map(\.item), read)
        XCTAssertEqual(start.records.map(\.stamp), [10, 11, 12])
        XCTAssertEqual(start.records.map(\.serial), [1, 2, 3])
    }

    func testAnItemTheEncodingCannotCarryIsReadAgain() {
        var deep = PayloadValue.string("bottom")
        for _ in 0..<300 { deep = .array([deep]) }
        var start = InitialItems(capacity: 2)
        start.add(item(1, payload: ["deep": deep]), stamp: 3)
        start.add(item(2), stamp: 4)
        var asked: [ItemName] = []
        start.compactRead { names in
            asked = names
            return [(self.item(1), 5), (self.item(2), 6)]
        }
        XCTAssertEqual(asked.map(\.description), ["notes/n1.md", "notes/n2.md"])
        XCTAssertEqual(start.records.map(\.item), [item(1), item(2)])
        XCTAssertEqual(start.records.map(\.stamp), [5, 6])
        XCTAssertEqual(start.records.map(\.serial), [1, 2])
    }
}
