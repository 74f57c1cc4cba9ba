import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

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
            var random = Random(seed: UInt64(seed) &* 7919)
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

    /// Renames that permute names (cycles) and move names onto free ones
    /// (chains, in either direction and in any order): every target is free
    /// when its rename runs, each cycle parks once, and the result is the
    /// names asked for.
    func testRenamesOfChainsAndCyclesApplyInOnePass() {
        var random = Random(seed: 17)
        let record = ItemRecord(Item(name: ItemName("a"), kind: .file))
        func name(_ number: Int) -> [UInt8] {
            let digits = String(number)
            return Array((String(repeating: "0", count: max(0, 4 - digits.count)) + digits + " X").utf8)
        }
        for round in 0..<200 {
            let count = Int.random(in: 1..<60, using: &random)
            // Sources 0..<count; targets: a permutation of some of them and fresh names for the rest.
            var targets = (0..<count).map { $0 }
            targets.shuffle(using: &random)
            var renames: [(from: [UInt8], to: [UInt8], record: ItemRecord)] = []
            for source in 0..<count where source != targets[source] || Bool.random(using: &random) {
                let fresh = Int.random(in: 0..<4, using: &random) == 0
                renames.append((name(source), fresh ? name(1000 + source) : name(targets[source]), record))
            }
            // Names nobody renames onto any more are dropped from the permutation's images.
            let wanted = Set(renames.map(\.to))
            let moved = Set(renames.map(\.from))
            let unmoved = Set((0..<count).map(name)).subtracting(moved)
            guard wanted.count == renames.count, wanted.isDisjoint(with: unmoved) else { continue }
            renames.shuffle(using: &random)
            let operations = EventScript.ordered(renames)
            let expected = unmoved.union(wanted)
            XCTAssertEqual(strictlyApplied(operations, to: (0..<count).map(name), "round \(round)"), expected, "round \(round)")
            let parks = operations.count - renames.count
            XCTAssertGreaterThanOrEqual(parks, 0, "round \(round)")
            XCTAssertLessThanOrEqual(parks, renames.count / 2, "round \(round): at most one park per cycle of two or more")
        }
        // A shift of 1,000 entries down by one rank, listed top first: one pass, no parking.
        let shift = (0..<1000).map { (from: name($0), to: name($0 + 1), record: record) }
        let operations = EventScript.ordered(shift)
        XCTAssertEqual(operations.count, 1000)
        XCTAssertEqual(operations.first, .rename(from: name(999), to: name(1000), record: record))
    }

    /// A catch-up (`HeardNames`): from what watchers heard — a listing, part
    /// of a script made on it — to a listing several batches later, the
    /// operations are never refused, give the later names, and an item
    /// still shown keeps its entry (renamed, not removed and made again).
    func testACatchUpFromWhatWasHeardGivesTheLaterListing() {
        for seed in 1...40 {
            var random = Random(seed: UInt64(seed) &* 104_729)
            var items: [Item] = []
            for number in 0..<Int.random(in: 0..<40, using: &random) { items.append(randomItem("item\(number)", &random)) }
            let index = LiveIndex(items: items)
            let path = ViewDefinition.byName.path
            let first = ViewListing(records: index.view(at: path)?.records ?? [])
            var heard = HeardNames(first)
            var heardNames = Set(names(first))
            // Part of the first batch's script was made before newer work came.
            let batch = LiveIndexTests.randomBatch(&random, names: 50, item: randomItem)
            if let change = index.apply(batch).first(where: { $0.path == path }) {
                let script = EventScript(old: first, new: ViewListing(records: index.view(at: path)?.records ?? []), change: change, bound: 10_000)
                let made = script.operations.prefix(Int.random(in: 0...script.operations.count, using: &random))
                heardNames = strictlyApplied(Array(made), to: Array(heardNames), "seed \(seed) partial")
                heard.apply(made)
            }
            for _ in 0..<Int.random(in: 0..<4, using: &random) { _ = index.apply(LiveIndexTests.randomBatch(&random, names: 50, item: randomItem)) }
            let now = ViewListing(records: index.view(at: path)?.records ?? [])
            let operations = heard.operations(to: now)
            let context = "seed \(seed)"
            XCTAssertEqual(strictlyApplied(operations, to: Array(heardNames), context), Set(names(now)), context)
            let shownSerials = Set((0..<now.count).map { now.records[$0].serial })
            for case .remove(_, let record) in operations {
                XCTAssertFalse(shownSerials.contains(record.serial), "\(context): an item still shown lost its entry")
            }
            heard.apply(operations)
            XCTAssertEqual(heard.operations(to: now), [], "\(context): caught up, nothing is left to make")
        }
    }
}
