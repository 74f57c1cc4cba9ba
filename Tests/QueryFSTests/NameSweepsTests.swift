import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// Issue 17: sweeps of one folder queued while one is pending are merged
/// into it, and the merged sweep still drops every name the kernel may hold
/// that now means another item — also a name it was given from a listing
/// the merge went past (`ViewListing.shown`).
final class NameSweepsTests: XCTestCase {
    private func record(_ name: String, _ title: String) -> ItemRecord {
        ItemRecord(Item(name: ItemName(name + ".hpwebsite"), kind: .bundle, title: title))
    }

    private final class Dropped: @unchecked Sendable {
        let lock = PlainLock()
        var names: [[UInt8]] = []
        func add(_ more: [[UInt8]]) { lock.withLock { names += more } }
    }

    func testAMergedSweepDropsANameShownByAListingItWentPast() {
        let (x1, a, b, x2) = (record("x1", "First"), record("a", "Twin"), record("b", "Twin"), record("x2", "Last"))
        let n = record("n", "New")
        let first = ViewListing(records: RecordList([x1, a, b, x2]))
        // A new item on top: every entry shifts (the kernel is shown "0003 Twin", now a).
        let second = ViewListing(records: RecordList([n, x1, a, b, x2]))
        second.noteShown(2..<3)
        // x1 goes: "0003 Twin" now means b.
        let third = ViewListing(records: RecordList([n, a, b, x2]))
        let dropped = Dropped()
        let sweeps = NameSweeps(logger: .discarding, drop: { _, names in dropped.add(names) })
        sweeps.sweep(folder: 7, old: first, new: second, range: 0..<4)
        sweeps.sweep(folder: 7, old: second, new: third, range: 1..<4)
        XCTAssertEqual(sweeps.sweepCounts.merged, 1)
        sweeps.sweepPending()
        // The first listing against the last: its "0003 Twin" (b) is b again, and stays.
        // The second's "0003 Twin" (a) now means b: dropped, though the first listing never had it.
        XCTAssertEqual(dropped.names, [second.name(at: 2)])
        XCTAssertEqual(String(decoding: second.name(at: 2), as: UTF8.self), "0003 Twin.hpwebsite")
        XCTAssertEqual(sweeps.sweepCounts.pending, 0)

        // Unshown, the second listing is gone past without a comparison: nothing the kernel holds needs one.
        let quiet = Dropped()
        let unshown = ViewListing(records: RecordList([n, x1, a, b, x2]))
        let others = NameSweeps(logger: .discarding, drop: { _, names in quiet.add(names) })
        others.sweep(folder: 7, old: first, new: unshown, range: 0..<4)
        others.sweep(folder: 7, old: unshown, new: ViewListing(records: RecordList([n, a, b, x2])), range: 1..<4)
        others.sweepPending()
        XCTAssertEqual(quiet.names, [])
    }

    func testASweepThatStartedTakesNoMoreChanges() {
        let twins = (0..<10).map { record("t\($0)", "Twin") }
        let first = ViewListing(records: RecordList(twins))
        let second = ViewListing(records: RecordList([record("new", "Twin")] + twins))
        let third = ViewListing(records: RecordList([record("newer", "Twin"), record("new", "Twin")] + twins))
        let dropped = Dropped()
        let sweeps = NameSweeps(logger: .discarding, drop: { _, names in dropped.add(names) })
        sweeps.sweep(folder: 1, old: first, new: second, range: 0..<10)
        sweeps.sweepPending()
        // Every twin's name now means the one before it.
        XCTAssertEqual(dropped.names.count, 10)
        sweeps.sweep(folder: 1, old: second, new: third, range: 0..<11)
        XCTAssertEqual(sweeps.sweepCounts.merged, 0)
        sweeps.sweepPending()
        XCTAssertEqual(dropped.names.count, 21)
    }
}
