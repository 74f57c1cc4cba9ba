import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection

/// `Scanner.hasStamp`: a bundle that held only its payload is compared from
/// two stats, any other from its listing, and every change is still found.
final class IndexReconcilerTests: XCTestCase {
    private func stamp(_ name: String, _ scanner: QueryFSCollection.Scanner, _ rootFD: Int32) -> UInt64 {
        let value = scanner.stamp(named: ItemName(name), in: rootFD)?.value ?? 0
        return value == 0 ? 1 : value
    }

    private func has(_ stamp: UInt64, _ name: String, _ scanner: QueryFSCollection.Scanner, _ rootFD: Int32) -> Bool {
        name.withCString { scanner.hasStamp(stamp, $0, in: rootFD) }
    }

    func testEveryChangeToABundleIsFoundWithOrWithoutItsListing() throws {
        let backing = TemporaryBacking()
        for name in ["alone.b", "pictured.b", "added.b", "edited.b", "renamed.b", "json.b"] { backing.bundle(name, title: name, mtime: 1_000) }
        backing.write(backing.path + "/pictured.b/image.jpg", "jpeg")
        XCTAssertEqual(rename(backing.path + "/json.b/payload.plist", backing.path + "/json.b/payload.json"), 0)
        let rootFD = open(backing.path, O_RDONLY | O_DIRECTORY)
        defer { close(rootFD) }
        let scanner = QueryFSCollection.Scanner(sources: FieldSources())
        let names = ["alone.b", "pictured.b", "added.b", "edited.b", "renamed.b", "json.b"]
        let indexed = Dictionary(uniqueKeysWithValues: names.map { ($0, stamp($0, scanner, rootFD)) })
        for name in names { XCTAssertTrue(has(indexed[name]!, name, scanner, rootFD), "\(name) unchanged") }
        // The changes each kind of bundle can go through.
        backing.write(backing.path + "/added.b/note.txt", "new")
        let payload = backing.path + "/edited.b/payload.plist"
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: payload))
        handle.seekToEndOfFile()
        handle.write(Data(" ".utf8))
        handle.closeFile()
        XCTAssertEqual(rename(backing.path + "/renamed.b/payload.plist", backing.path + "/renamed.b/payload.json"), 0)
        backing.write(backing.path + "/pictured.b/image.jpg", "JPEG")  // same size, in place
        backing.setMTime(backing.path + "/pictured.b/image.jpg", 2_000)  // not within the clock tick it was made in
        XCTAssertTrue(has(indexed["alone.b"]!, "alone.b", scanner, rootFD))
        XCTAssertTrue(has(indexed["json.b"]!, "json.b", scanner, rootFD))
        for name in ["added.b", "edited.b", "renamed.b", "pictured.b"] {
            XCTAssertFalse(has(indexed[name]!, name, scanner, rootFD), "\(name) changed")
            XCTAssertTrue(has(stamp(name, scanner, rootFD), name, scanner, rootFD), "\(name) as it is now")
        }
    }
}
