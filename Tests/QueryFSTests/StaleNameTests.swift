import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// A name whose rank went stale (rm -r working through the names it read,
/// a file manager one change behind) means the entry of that title and
/// extension nearest its rank; a name of no entry means nothing, however
/// often it is asked for.
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
        XCTAssertEqual(index(view, "0350 Same.hpwebsite"), 300)    // the nearest of several
        XCTAssertEqual(index(view, "0352 Same.hpwebsite"), 400)
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
