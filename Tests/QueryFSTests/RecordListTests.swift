import XCTest
import QueryFSTestSupport
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// The chunked record list behaves as an array, and snapshots taken along
/// the way never change.
final class RecordListTests: XCTestCase {
    private func record(_ number: Int) -> ItemRecord {
        ItemRecord(Item(name: ItemName("r\(number)"), kind: .file))
    }

    /// A range read by walking the chunks is the same as by subscripts,
    /// clamped to the list, across chunks split and emptied by changes.
    func testRecordsInARangeMatchTheSubscripts() {
        var generator = seededGenerator()
        var list = RecordList((0..<2000).map(record))
        for step in 0..<1500 {
            if Bool.random(using: &generator) { list.insert(record(10_000 + step), at: Int.random(in: 0...list.count, using: &generator)) }
            else { list.remove(at: Int.random(in: 0..<list.count, using: &generator)) }
        }
        for _ in 0..<300 {
            let low = Int.random(in: 0...(list.count + 10), using: &generator)
            let high = Int.random(in: low...(low + 3000), using: &generator)
            let expected = (low..<high).clamped(to: 0..<list.count).map { list[$0] }
            XCTAssertTrue(list.records(in: low..<high).elementsEqual(expected, by: ===), "\(low)..<\(high) of \(list.count)")
        }
        XCTAssertTrue(RecordList().records(in: 0..<5).isEmpty)
    }

    func testRandomInsertsAndRemovesMatchAnArrayAndSnapshotsStayPut() {
        var generator = seededGenerator()
        var list = RecordList((0..<3000).map(record))
        var mirror = Array(list)
        var snapshots: [(RecordList, [ItemName])] = []
        for step in 0..<4000 {
            if Bool.random(using: &generator) || mirror.isEmpty {
                let index = Int.random(in: 0...mirror.count, using: &generator)
                let new = record(10_000 + step)
                list.insert(new, at: index)
                mirror.insert(new, at: index)
            } else {
                let index = Int.random(in: 0..<mirror.count, using: &generator)
                list.remove(at: index)
                mirror.remove(at: index)
            }
            if step % 500 == 0 { snapshots.append((list, mirror.map(\.item.name))) }
        }
        XCTAssertEqual(list.count, mirror.count)
        XCTAssertEqual(list.map(\.item.name), mirror.map(\.item.name))
        for (snapshot, names) in snapshots { XCTAssertEqual(snapshot.map(\.item.name), names) }
    }

    func testEmptyingAndRefilling() {
        var list: RecordList = []
        XCTAssertTrue(list.isEmpty)
        for number in 0..<2500 { list.insert(record(number), at: list.count) }
        XCTAssertEqual(list.map(\.item.name), (0..<2500).map { ItemName("r\($0)") })
        while !list.isEmpty { list.remove(at: list.count / 2) }
        list.insert(record(7), at: 0)
        XCTAssertEqual(list.map(\.item.name), [ItemName("r7")])
    }
}
