import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

final class CoordinatorTests: XCTestCase {
    func testWriteReadTransformAndReplace() throws {
        let backing = TemporaryBacking()
        backing.bundle("b.hpwebsite", title: "One")
        let coordinator = Coordinator(backing: try BackingDirectory(path: backing.path), timeout: 1)
        let item = ItemName("b.hpwebsite")

        try coordinator.write(Array("hello".utf8), to: item, file: "note.txt")
        XCTAssertEqual(try coordinator.read(item, file: "note.txt"), Array("hello".utf8))
        try coordinator.transform(item, file: "note.txt") { $0 + Array(" world".utf8) }
        XCTAssertEqual(try coordinator.read(item, file: "note.txt"), Array("hello world".utf8))

        try coordinator.replaceBundle(item, with: ["payload.plist": Array(TemporaryBacking.plist(title: "Two").utf8)])
        XCTAssertEqual(try coordinator.readBundle(item).keys.sorted(), ["payload.plist"])
        XCTAssertEqual(try backing.freshListing("by-name"), ["0001 Two.hpwebsite"])
        // No staging leftovers.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: backing.path), ["b.hpwebsite"])

        // A new bundle can be created the same way.
        try coordinator.replaceBundle(ItemName("new.hpwebsite"), with: ["payload.plist": Array(TemporaryBacking.plist(title: "Three").utf8)])
        XCTAssertEqual(try backing.freshListing("by-name"), ["0001 Three.hpwebsite", "0002 Two.hpwebsite"])
    }

    func testAHeldLockGivesABoundedWaitAndAClearError() throws {
        let backing = TemporaryBacking()
        backing.bundle("b.hpwebsite", title: "One")
        let coordinator = Coordinator(backing: try BackingDirectory(path: backing.path), timeout: 0.3)
        let holder = try ItemLock(path: "\(backing.path)/b.hpwebsite")
        try holder.lock(.exclusive, timeout: 1)
        let start = Date()
        XCTAssertThrowsError(try coordinator.write([1], to: ItemName("b.hpwebsite"), file: "x")) { error in
            XCTAssertTrue("\(error)".contains("still locked"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        holder.unlock()
        XCTAssertNoThrow(try coordinator.write([1], to: ItemName("b.hpwebsite"), file: "x"))
    }
}
