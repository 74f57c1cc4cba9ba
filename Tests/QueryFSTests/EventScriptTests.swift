import XCTest
@testable import QueryFS

/// The event replay's operations (issue 15): applied in order to the old
/// listing they give the new one, and none is refused on the way — no
/// remove or rename of a name that is not there, no create or rename onto
/// a name still in use — whatever the batch did to the view.
final class EventScriptTests: XCTestCase {
    private typealias Random = LiveIndexTests.Random

    /// Applies `operations` as the kernel would, failing on any it would refuse.
    private func strictlyApplied(_ operations: [EventScript.Operation], to names: [[UInt8]], _ context: String) -> Set<[UInt8]> {
        var present = Set(names)
        for operation in operations {
            switch operation {
            case .remove(let name, _):
                XCTAssertNotNil(present.remove(name), "\(context): remove of a missing name")
            case .rename(let from, let to, _):
                XCTAssertNotNil(present.remove(from), "\(context): rename of a missing name")
                XCTAssertTrue(present.insert(to).inserted, "\(context): rename onto a name in use")
            case .create(let name, _):
                XCTAssertTrue(present.insert(name).inserted, "\(context): create of a name in use")
            case .touch(let name, _):
                XCTAssertTrue(present.contains(name), "\(context): touch of a missing name")
            }
        }
        return present
    }

    /// Few titles and times: equal titles make entries trade names (rename cycles).
    private func randomItem(_ name: String, _ random: inout Random) -> Item {
        Item(name: ItemName(name + ".hpwebsite"), kind: .bundle, title: "Title \(Int.random(in: 0..<6, using: &random))",
             archived: Bool.random(using: &random),
             tags: (0..<Int.random(in: 0..<3, using: &random)).map { _ in LiveIndexTests.tagPool.randomElement(using: &random)! },
             modified: Timestamp(seconds: Int64.random(in: 0..<20, using: &random)),
             created: Timestamp(seconds: Int64.random(in: 0..<20, using: &random)))
    }

    private func names(_ listing: ViewListing) -> [[UInt8]] { (0..<listing.count).map(listing.name(at:)) }

    func testScriptsTurnEveryOldListingIntoTheNewOne() {
        for seed in 1...60 {
            var random = Random(state: UInt64(seed) &* 7919)
            var items: [Item] = []
            for number in 0..<Int.random(in: 0..<40, using: &random) { items.append(randomItem("item\(number)", &random)) }
            let index = LiveIndex(items: items)
            for step in 0..<25 {
                var before: [[String]: ViewListing] = [:]
                for view in index.views { before[view.definition.path] = ViewListing(records: view.records) }
                let batch = LiveIndexTests.randomBatch(&random, names: 50, item: randomItem)
                for change in index.apply(batch) {
                    let old = before[change.path] ?? ViewListing(records: [])
                    let new = ViewListing(records: index.view(at: change.path)?.records ?? [])
                    let context = "seed \(seed) step \(step) \(change.pathString)"
                    let script = EventScript(old: old, new: new, change: change, bound: 10_000)
                    XCTAssertFalse(script.overBound)
                    XCTAssertEqual(strictlyApplied(script.operations, to: names(old), context), Set(names(new)), context)
                    // Over a bound of 2, only entries that came, left, moved or changed have operations.
                    let bounded = EventScript(old: old, new: new, change: change, bound: 2)
                    if bounded.overBound {
                        XCTAssertLessThanOrEqual(bounded.operations.count,
                                                 change.diff.deletions.count + change.diff.insertions.count + change.diff.moves.count + change.diff.updates.count + 1,
                                                 context)
                    }
                }
            }
        }
    }

    func testEntriesTradingNamesGoThroughAParkingName() {
        let record = { (name: String) in ItemRecord(Item(name: ItemName(name), kind: .file)) }
        let renames: [(from: [UInt8], to: [UInt8], record: ItemRecord)] = [
            (Array("0001 X".utf8), Array("0002 X".utf8), record("a")),
            (Array("0002 X".utf8), Array("0001 X".utf8), record("b")),
        ]
        let operations = EventScript.ordered(renames)
        XCTAssertEqual(operations.count, 3)
        XCTAssertEqual(strictlyApplied(operations, to: [Array("0001 X".utf8), Array("0002 X".utf8)], "swap"),
                       [Array("0001 X".utf8), Array("0002 X".utf8)])
        // A chain goes from its free end: no parking.
        let chain = EventScript.ordered([
            (Array("0001 X".utf8), Array("0002 X".utf8), record("a")),
            (Array("0002 X".utf8), Array("0003 X".utf8), record("b")),
        ])
        XCTAssertEqual(chain, [.rename(from: Array("0002 X".utf8), to: Array("0003 X".utf8), record: record("b")),
                               .rename(from: Array("0001 X".utf8), to: Array("0002 X".utf8), record: record("a"))])
    }
}
