import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// A name whose rank went stale (rm -r working through the names it read,
/// a file manager one change behind) means the entry of that title and
/// extension nearest its rank, when no other entry has it; a name of no
/// entry means nothing, however often it is asked for.
final class StaleNameTests: XCTestCase {
    private func listing(_ titles: [String]) -> ViewListing {
        ViewListing(records: RecordList(titles.enumerated().map { index, title in
            ItemRecord(Item(name: ItemName("i\(index).hpwebsite"), kind: .bundle, title: title))
        }))
    }

    private func index(_ listing: ViewListing, _ name: String) -> Int? {
        Array(name.utf8).withUnsafeBufferPointer { listing.index(ofEntryMeaning: $0) }
    }

    func testStaleRanksFindTheNearestEntryOfTheSameTitle() {
        let titles = (0..<5000).map { $0 % 100 == 0 ? "Same" : "Title \($0)" }
        let view = listing(titles)
        XCTAssertEqual(index(view, "0002 Title 1.hpwebsite"), 1)   // exact
        XCTAssertEqual(index(view, "0001 Title 1.hpwebsite"), 1)   // one rank off
        XCTAssertEqual(index(view, "0001 Title 4321.hpwebsite"), 4321)  // 4,320 ranks off (rm -r far along)
        // A title several share: the one `prefer` picks out, never merely the
        // nearest (an editor's save went into another note of the same title).
        XCTAssertNil(index(view, "0350 Same.hpwebsite"))
        let preferred = Array("0352 Same.hpwebsite".utf8).withUnsafeBufferPointer {
            view.index(ofEntryMeaning: $0, prefer: { $0.name == ItemName("i400.hpwebsite") })
        }
        XCTAssertEqual(preferred, 400)
        XCTAssertEqual(Array("0350 Same.hpwebsite".utf8).withUnsafeBufferPointer {
            view.index(ofEntryMeaning: $0, mayBeShared: { _ in false })
        }, 300, "a title no other item has: the nearest, without a search of the rest")
        XCTAssertNil(index(view, "0001 Title 1.other"))
        XCTAssertNil(index(view, "0001 Nothing.hpwebsite"))
        XCTAssertNil(index(view, "0001 Nothing.hpwebsite"))  // remembered
        XCTAssertNil(index(view, "001 Title 1.hpwebsite"))   // not in entry form
    }

    func testLongTitlesCutTo255BytesStillResolve() {
        let long = String(repeating: "é", count: 200)
        let view = listing(["a", long])
        let name = view.name(at: 1)
        XCTAssertEqual(name.count <= 255, true)
        var stale = name
        stale.replaceSubrange(0..<4, with: Array("0001".utf8))
        XCTAssertEqual(stale.withUnsafeBufferPointer { view.index(ofEntryMeaning: $0) }, 1)
    }
}
