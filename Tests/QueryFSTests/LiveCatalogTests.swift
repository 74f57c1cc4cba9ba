import Foundation
import Synchronization
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// The live catalog with real inotify and real flock (no mount).
final class LiveCatalogTests: XCTestCase {
    /// The entry names of a view as the live index holds them.
    func liveListing(_ catalog: LiveCatalog, _ view: String) -> [String] {
        catalog.withIndex { index in
            let records = index.view(at: view.split(separator: "/").map(String.init))?.records ?? []
            return records.enumerated().map {
                String(decoding: $1.entryName(index: $0, count: records.count), as: UTF8.self)
            }
        }
    }

    func testChangesInTheBackingDirectoryReachEveryView() throws {
        let backing = TemporaryBacking()
        backing.bundle("a.hpwebsite", title: "Alpha", tags: ["x"], mtime: 1000)
        backing.bundle("b.hpwebsite", title: "Beta", mtime: 2000)
        let catalog = try LiveCatalog(backingPath: backing.path, logger: .discarding)
        let batches = Atomic<Int>(0)
        catalog.subscribe { _ in batches.add(1, ordering: .relaxed) }
        catalog.start()
        defer { catalog.stop() }

        // Create, edit in place, tag, archive, delete, replace whole.
        backing.bundle("c.hpwebsite", title: "Gamma", tags: ["x", "y"])
        backing.write("\(backing.path)/a.hpwebsite/payload.plist", TemporaryBacking.plist(title: "Alpha 2", archived: true))
        try FileManager.default.removeItem(atPath: "\(backing.path)/b.hpwebsite")
        let staged = backing.bundle(".staging", title: "Delta")
        XCTAssertEqual(rename(staged, "\(backing.path)/c.hpwebsite"), -1)  // rename over a non-empty dir fails…
        try FileManager.default.removeItem(atPath: "\(backing.path)/c.hpwebsite")
        XCTAssertEqual(rename(staged, "\(backing.path)/c.hpwebsite"), 0)   // …so replace it the usual way
        try FileManager.default.createDirectory(atPath: "\(backing.path)/a.hpwebsite/deep/er", withIntermediateDirectories: true)
        backing.write("\(backing.path)/a.hpwebsite/deep/er/file", "x")

        for view in ["by-name", "by-modified", "unarchived", "archived", "tag/x", "tag/y"] {
            let settled = try eventually { try liveListing(catalog, view) == backing.freshListing(view) }
            let fresh = try backing.freshListing(view)
            XCTAssertTrue(settled, "\(view): \(liveListing(catalog, view)) vs \(fresh)")
        }
        XCTAssertGreaterThan(batches.load(ordering: .relaxed), 0)
    }

    /// `changes(of:)` delivers a view's changes and ends when the catalog
    /// stops (it never ended), and one asked for after the stop ends at once;
    /// `timing` set after `start` is what the watcher uses (it was ignored).
    func testChangeSequencesEndWhenTheCatalogStopsAndTimingAppliesWhileRunning() async throws {
        let backing = TemporaryBacking()
        backing.bundle("a.hpwebsite", title: "Alpha", mtime: 1000)
        let catalog = try LiveCatalog(backingPath: backing.path, logger: .discarding)
        let changes = catalog.changes(of: ["by-name"])
        var slow = catalog.timing
        slow.quietMilliseconds = 700
        slow.maximumDelayMilliseconds = 700
        catalog.timing = slow
        XCTAssertEqual(catalog.timing.quietMilliseconds, 700)
        let start = Date()
        backing.bundle("b.hpwebsite", title: "Beta", mtime: 2000)
        var iterator = changes.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertNotNil(first, "the new item's change")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.6, "the watcher waited the quiet time set after start")
        catalog.stop()
        while await iterator.next() != nil {}  // ends: a hang here is the bug
        var late = catalog.changes(of: ["by-name"]).makeAsyncIterator()
        let afterStop = await late.next()
        XCTAssertNil(afterStop, "a sequence asked for after the stop ends at once")
    }

    func testAWriterHoldingTheLockIsNeverSeenHalfWay() throws {
        let backing = TemporaryBacking()
        backing.bundle("item.hpwebsite", title: "Old title", tags: ["old"])
        let catalog = try LiveCatalog(backingPath: backing.path, logger: .discarding)
        let seen = Mutex<[String]>([])
        catalog.subscribe { update in
            guard !update.changes.isEmpty else { return }
            let title = catalog.withIndex { $0.records[ItemName("item.hpwebsite")]?.item.title ?? "?" }
            seen.withLock { $0.append(title) }
        }
        catalog.start()
        defer { catalog.stop() }

        let lock = try ItemLock(path: "\(backing.path)/item.hpwebsite")
        try lock.lock(.exclusive, timeout: 1)
        backing.write("\(backing.path)/item.hpwebsite/payload.plist", TemporaryBacking.plist(title: "Half way", tags: ["old"]))
        // The watcher has seen the change and waits for the lock (a signal, not a sleep).
        XCTAssertTrue(eventually { catalog.itemsWaitingForTheirLock.contains(ItemName("item.hpwebsite")) })
        backing.write("\(backing.path)/item.hpwebsite/payload.plist", TemporaryBacking.plist(title: "New title", tags: ["new"]))
        XCTAssertEqual(seen.withLock { $0 }, [], "nothing may show while the writer holds the lock")
        lock.unlock()
        XCTAssertTrue(eventually { seen.withLock { $0 } == ["New title"] }, "\(seen.withLock { $0 })")
    }
}
