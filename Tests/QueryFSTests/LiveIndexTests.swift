import XCTest
import QueryFSTestSupport
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// Property tests of the live index: after any batch of changes every view
/// equals a fresh evaluation, and each reported diff turns the old listing
/// into the new one.
final class LiveIndexTests: XCTestCase {
    typealias Random = SplitMix64

    static let tagPool = ["a", "b", "B", "c/d", "c∕d", " . ", "e"]

    func randomItem(_ name: String, _ random: inout Random) -> Item {
        Item(
            name: ItemName(name + ".hpwebsite"), kind: .bundle,
            title: "Title \(Int.random(in: 0..<20, using: &random))",
            archived: Bool.random(using: &random),
            tags: (0..<Int.random(in: 0..<3, using: &random)).map { _ in Self.tagPool.randomElement(using: &random)! },
            modified: Timestamp(seconds: Int64.random(in: 0..<50, using: &random)),
            created: Timestamp(seconds: Int64.random(in: 0..<50, using: &random)))
    }

    /// 1 to 6 changes to items named item0…item(names-1): a quarter of them
    /// deletions, the rest new states made by `item`.
    static func randomBatch(_ random: inout Random, names: Int, item: (String, inout Random) -> Item) -> [ItemName: Item?] {
        var batch: [ItemName: Item?] = [:]
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let name = "item\(Int.random(in: 0..<names, using: &random))"
            if Int.random(in: 0..<4, using: &random) == 0 {
                batch[ItemName(name + ".hpwebsite")] = Item?.none
            } else {
                let state = item(name, &random)
                batch[state.name] = state
            }
        }
        return batch
    }

    func listing(_ index: LiveIndex) -> [String: [ItemName]] {
        var result: [String: [ItemName]] = [:]
        for view in index.views { result[view.definition.pathString] = view.records.map(\.name) }
        return result
    }

    func testViewsAndDiffsFollowRandomBatches() {
        for seed in 1...40 {
            var random = Random(seed: UInt64(seed))
            var current: [ItemName: Item] = [:]
            for number in 0..<Int.random(in: 0..<30, using: &random) {
                let item = randomItem("item\(number)", &random)
                current[item.name] = item
            }
            let index = LiveIndex(items: Array(current.values))
            for _ in 0..<25 {
                let before = listing(index)
                let batch = Self.randomBatch(&random, names: 40, item: randomItem)
                for (name, state) in batch { current[name] = state }
                let changes = index.apply(batch)
                let after = listing(index)

                // Views equal a fresh evaluation of the new state.
                let fresh = Catalog(items: Array(current.values))
                let expected = Dictionary(uniqueKeysWithValues: fresh.views.map { view in
                    (view.pathString, view.select(fresh.items).map { fresh.items[$0].name })
                })
                XCTAssertEqual(after, expected, "seed \(seed)")

                // Each diff turns the old listing into the new one.
                for change in changes {
                    let old = before[change.pathString] ?? []
                    let new = after[change.pathString] ?? []
                    XCTAssertEqual(change.oldCount, old.count)
                    XCTAssertEqual(change.newCount, new.count)
                    let applied = change.diff.apply(to: old, newCount: new.count) { new[$0] }
                    XCTAssertEqual(applied, new, "seed \(seed) view \(change.pathString) diff \(change.diff)")
                }
                // Views not reported did not change.
                let reported = Set(changes.map(\.pathString))
                for (path, names) in after where !reported.contains(path) {
                    XCTAssertEqual(before[path], names, "seed \(seed): \(path) changed without a report")
                }
            }
        }
    }

    func testGenericDiffOfRandomListings() {
        var random = Random(seed: 99)
        for _ in 0..<500 {
            let old = Array(Set((0..<Int.random(in: 0..<20, using: &random)).map { _ in Int.random(in: 0..<30, using: &random) })).shuffled(using: &random)
            let new = Array(Set((0..<Int.random(in: 0..<20, using: &random)).map { _ in Int.random(in: 0..<30, using: &random) })).shuffled(using: &random)
            let diff = ListDiff.between(old: old, new: new)
            XCTAssertEqual(diff.apply(to: old, newCount: new.count) { new[$0] }, new, "\(old) → \(new): \(diff)")
        }
    }

    /// A lone query view (evaluated record by record) and one of a burst
    /// (evaluated over the cache of every item) hold the same records in
    /// the same order as a fresh evaluation.
    func testQueryViewsAgreeEvaluatedAloneOrInABurst() throws {
        var random = Random(seed: 7)
        let items = (0..<300).map { randomItem("item\($0)", &random) }
        for text in ["tag:a", "-tag:b sort:title", "title~*1* sort:-modified", "sort:size,name", "archived"] {
            let query = try Query(parsing: text, now: .now)
            let expected = query.view(at: ["query", text]).select(items).map { items[$0].name }
            let alone = LiveIndex(items: items)
            XCTAssertEqual(alone.queryView(text, query).records.map(\.name), expected, "alone: \(text)")
            XCTAssertNil(alone.evaluationCacheExpiry, "a lone query makes no cache")
            let burst = LiveIndex(items: items)
            _ = burst.queryView("tag:e", try Query(parsing: "tag:e", now: .now))
            XCTAssertEqual(burst.queryView(text, query).records.map(\.name), expected, "in a burst: \(text)")
            XCTAssertNotNil(burst.evaluationCacheExpiry, "the second query of a burst makes the cache")
        }
    }

    func testSingleChangesGiveTheSimplestDiff() {
        let items = (0..<5).map { Item(name: ItemName("i\($0)"), kind: .file, modified: Timestamp(seconds: Int64($0))) }
        let index = LiveIndex(items: items)
        // by-modified is newest first: i4 i3 i2 i1 i0. Touch i0: it moves from 4 to 0.
        var touched = items[0]
        touched.modified = Timestamp(seconds: 100)
        let change = index.apply([touched.name: touched]).first { $0.pathString == "by-modified" }!
        XCTAssertEqual(change.diff, ListDiff(moves: [.init(from: 4, to: 0)]))
        // A new item at the top is one insertion; the shifted ones are not moves.
        let fresh = Item(name: ItemName("new"), kind: .file, modified: Timestamp(seconds: 200))
        let insert = index.apply([fresh.name: fresh]).first { $0.pathString == "by-modified" }!
        XCTAssertEqual(insert.diff, ListDiff(insertions: [0]))
        XCTAssertEqual(insert.newNames[0].map { String(decoding: $0, as: UTF8.self) }, "0001 new")
        // A change that keeps the place is an update.
        var retitled = fresh
        retitled.setTitle("Renamed")
        let update = index.apply([fresh.name: retitled]).first { $0.pathString == "by-modified" }!
        XCTAssertEqual(update.diff, ListDiff(updates: [0]))
        // Deleting is one deletion at the old index.
        let delete = index.apply([items[2].name: Item?.none]).first { $0.pathString == "by-modified" }!
        XCTAssertEqual(delete.diff, ListDiff(deletions: [4]))
    }
}
