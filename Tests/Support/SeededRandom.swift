import Foundation
import XCTest

extension XCTestCase {
    /// A generator for a randomized test: seeded from `QUERYFS_TEST_SEED`
    /// when set, else at random, and the seed is printed when the test
    /// fails, so that the failing run can be repeated exactly.
    public func seededGenerator() -> SplitMix64 {
        let given = ProcessInfo.processInfo.environment["QUERYFS_TEST_SEED"].flatMap { UInt64($0) }
        let seed = given ?? UInt64.random(in: 0...UInt64.max)
        let name = self.name
        addTeardownBlock { [weak self] in
            guard self?.testRun?.hasSucceeded == false else { return }
            print("\(name): random seed \(seed); QUERYFS_TEST_SEED=\(seed) repeats this run")
        }
        return SplitMix64(seed: seed)
    }
}
