import XCTest
@testable import QueryFSCollection

/// `parallelMap` runs on threads of its own (a scan waits on the disk):
/// every element is transformed exactly once, on as many threads as asked,
/// and the results keep the input's order.
final class ParallelMapTests: XCTestCase {
    func testEveryElementOnceInOrderWhateverTheThreadCount() {
        let input = Array(0..<10_000)
        for threads in [1, 2, 3, 8, 64, 300] {
            let calls = Counter()
            let output = parallelMap(input, threads: threads, minimumCount: 2) { value -> String in
                calls.add()
                return String(value * 3)
            }
            XCTAssertEqual(output, input.map { String($0 * 3) }, "\(threads) threads")
            XCTAssertEqual(calls.count, input.count, "\(threads) threads")
        }
    }

    func testWorkersRunAtOnceBeyondTheCoreCount() {
        // Eight elements that each wait for all eight to have started: only
        // eight threads at once can finish this (Dispatch's pool, as wide as
        // the cores, could not on a 2-core machine).
        let started = Counter()
        let output = parallelMap(Array(0..<8), threads: 8, minimumCount: 2) { value -> Int in
            started.add()
            let deadline = monotonicSeconds() + 10
            while started.count < 8, monotonicSeconds() < deadline { usleep(1000) }
            return value
        }
        XCTAssertEqual(output, Array(0..<8))
        XCTAssertEqual(started.count, 8)
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}
