import Foundation
import Synchronization
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// Stamps and the poller: what finds changes where inotify cannot watch.
final class ChangePollerTests: FixtureTestCase {
    private func stamp(_ name: String) throws -> ItemStamp? {
        let root = try BackingDirectory(path: backing)
        return Scanner().stamp(named: ItemName(name), in: root.fd)
    }

    func testAStampMovesWithEveryChangeAndOnlyThen() throws {
        hipstapaper("a.b", title: "A", mtime: 1_000)
        makeDirectory("a.b/inner")
        writeFile("notes.txt", "plain")
        let first = try XCTUnwrap(try stamp("a.b"))
        XCTAssertEqual(try stamp("a.b"), first, "nothing changed")
        // The scan sees the same stamp as the stat-only walk.
        let root = try BackingDirectory(path: backing)
        XCTAssertEqual(Scanner().read(named: ItemName("a.b"), in: root.fd).stamp, first)
        XCTAssertEqual(Scanner().read(named: ItemName("notes.txt"), in: root.fd).stamp, try stamp("notes.txt"))

        var previous = first
        func expectChange(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let now = try XCTUnwrap(try stamp("a.b"))
            XCTAssertNotEqual(now, previous, what, file: file, line: line)
            previous = now
        }
        // Same size, mtime put back: only ctime tells.
        let payload = path("a.b/payload.plist")
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: payload))
        bytes[bytes.count - 10] ^= 1
        try bytes.write(to: URL(fileURLWithPath: payload))
        setMTime(payload, seconds: 1_000)
        try expectChange("rewritten in place, same size and mtime")
        XCTAssertEqual(chmod(payload, 0o600), 0)
        try expectChange("chmod")
        let setfattr = Process()
        setfattr.executableURL = URL(fileURLWithPath: "/usr/bin/setfattr")
        setfattr.arguments = ["-n", "user.xdg.tags", "-v", "x", path("a.b")]
        try setfattr.run()
        setfattr.waitUntilExit()
        try expectChange("tags attribute")
        writeFile("a.b/inner/deep.txt", "deep")
        try expectChange("a file in a folder inside")
        XCTAssertEqual(rename(path("a.b/inner/deep.txt"), path("a.b/inner/moved.txt")), 0)
        try expectChange("a rename inside")
        removeTree(path("a.b"))
        XCTAssertNil(try stamp("a.b"), "gone")
    }

    /// Waits until two rounds have started and ended after now: whatever
    /// was asked of the poller before has been looked at whole (a signal,
    /// where a sleep of a few intervals only hoped so).
    static func twoRoundsPass(_ poller: ChangePoller) -> Bool {
        let start = poller.completedRounds.load(ordering: .acquiring)
        return eventually(timeout: 5) { poller.completedRounds.load(ordering: .acquiring) >= start + 2 }
    }

    func testThePollerFindsChangesToPolledItemsTheListingAndFiles() throws {
        hipstapaper("a.b", title: "A")
        hipstapaper("b.b", title: "B")
        writeFile(".config.toml", "ignore = []\n")
        // Past the settle window (`ItemStamp.isSettled`): items changed within
        // a clock tick of their read are read once more, which this test is not about.
        usleep(100_000)
        let root = try BackingDirectory(path: backing)
        let woken = WakeCounter()
        var settings = ChangePoller.Settings()
        settings.interval = 0.05
        let poller = try ChangePoller(root: root, settings: settings, onFound: { woken.increment() })
        defer { poller.stop() }
        for name in ["a.b", "b.b"] {
            poller.poll(ItemName(name), stamp: Scanner().read(named: ItemName(name), in: root.fd).stamp)
        }
        poller.pollListing(knownNames: [ItemName("a.b"), ItemName("b.b")])
        poller.pollFile(path(".config.toml"))
        XCTAssertTrue(Self.twoRoundsPass(poller), "the poller never went round")
        XCTAssertTrue(poller.takeFound().isEmpty, "nothing changed yet")

        var found = ChangePoller.Found()
        func waitFor(_ condition: (ChangePoller.Found) -> Bool) -> Bool {
            eventually(timeout: 5) {
                let more = poller.takeFound()
                found.items.formUnion(more.items)
                found.files.formUnion(more.files)
                return condition(found)
            }
        }
        writeFile("a.b/payload.plist", Self.xmlPlist("<dict><key>title</key><string>A2</string></dict>"))
        XCTAssertTrue(waitFor { $0.items == [ItemName("a.b")] }, "\(found.items)")
        found = .init()
        hipstapaper("c.b", title: "C")
        XCTAssertTrue(waitFor { $0.items.contains(ItemName("c.b")) }, "a new item in the listing")
        found = .init()
        removeTree(path("b.b"))
        XCTAssertTrue(waitFor { $0.items.contains(ItemName("b.b")) }, "an item gone from the listing")
        found = .init()
        writeFile(".config.toml", "ignore = [\"x\"]\n")
        XCTAssertTrue(waitFor { $0.files == [path(".config.toml")] }, "a polled file")
        XCTAssertGreaterThan(woken.count, 0)
    }
}

extension ChangePollerTests {
    /// On a network filesystem most rounds are quick, and an item's first
    /// quick stamp is its baseline: a change made after the item was read
    /// but before that first quick round is still found at it, not only
    /// at a deep round `deepEvery` rounds later (15–25 s seen on bindfs).
    func testAChangeBeforeTheFirstQuickRoundIsFoundAtIt() throws {
        hipstapaper("a.b", title: "A")
        usleep(100_000)  // past the settle window: this test is not about same-tick changes
        let root = try BackingDirectory(path: backing)
        var settings = ChangePoller.Settings()
        settings.interval = 0.05
        settings.deepEvery = 1_000
        let poller = try ChangePoller(root: root, settings: settings, onFound: {})
        defer { poller.stop() }
        // Read, then changed, and settled (older than a clock tick) by the
        // time the poller first looks: only the first quick stamp can tell.
        let read = Scanner().read(named: ItemName("a.b"), in: root.fd)
        writeFile("a.b/payload.plist", Self.xmlPlist("<dict><key>title</key><string>A2</string></dict>"))
        usleep(150_000)
        poller.poll(ItemName("a.b"), stamp: read.stamp)
        XCTAssertTrue(eventually(timeout: 2) { poller.takeFound().items.contains(ItemName("a.b")) }, "the change waited for a deep round")
    }
}

/// Counts calls from any thread.
final class WakeCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

/// Which filesystems are network ones (polled), and how far their locks reach.
final class BackingFilesystemTests: XCTestCase {
    func testNetworkFilesystemsAndTheirLocks() {
        let table = """
            /dev/sda1 / ext4 rw 0 0
            server:/export /srv/nfs nfs4 rw 0 0
            //nas/share /srv/smb cifs rw 0 0
            user@host:/list /home/u/list fuse.sshfs rw 0 0
            /dev/sdb1 /media/usb fuseblk rw 0 0
            /data /home/u/bound fuse rw 0 0
            ceph /srv/ceph ceph rw 0 0
            tmpfs /srv/nfs/tmp tmpfs rw 0 0
            """
        func of(_ path: String) -> BackingFilesystem { BackingFilesystem.of(path: path, table: table) }
        XCTAssertEqual(of("/home/u/reading").type, "ext4")
        XCTAssertFalse(of("/home/u/reading").isNetwork)
        XCTAssertEqual(of("/srv/nfs/list").locks, .plainFilesOnly)
        XCTAssertTrue(of("/srv/nfs/list").isNetwork)
        XCTAssertEqual(of("/srv/nfs/tmp/list").type, "tmpfs", "the mount on top wins")
        XCTAssertEqual(of("/srv/smb").locks, .thisMachineOnly)
        XCTAssertEqual(of("/home/u/list/x").type, "fuse.sshfs")
        XCTAssertNotNil(of("/home/u/list/x").lockNote)
        XCTAssertFalse(of("/media/usb/list").isNetwork, "NTFS through FUSE is a local disk")
        XCTAssertTrue(of("/home/u/bound").isNetwork)
        XCTAssertEqual(of("/srv/ceph/a").locks, .shared)
        XCTAssertEqual(of("/srv/smbx").type, "ext4", "a mount point is a whole component")
    }
}

/// Items seen within a clock tick of a change are read once more, once settled.
final class UnsettledPollingTests: FixtureTestCase {
    func testAnItemChangedJustBeforeItsReadIsReadAgainOnceSettled() throws {
        hipstapaper("a.b", title: "A")
        let root = try BackingDirectory(path: backing)
        var settings = ChangePoller.Settings()
        settings.interval = 0.05
        let poller = try ChangePoller(root: root, settings: settings, onFound: {})
        defer { poller.stop() }
        let read = Scanner().read(named: ItemName("a.b"), in: root.fd)
        XCTAssertEqual(read.settledStamp, 0, "read right after the write: not settled")
        poller.poll(ItemName("a.b"), stamp: read.stamp, settled: false)
        XCTAssertTrue(eventually(timeout: 2) { poller.takeFound().items.contains(ItemName("a.b")) })
        // Read again (settled now): not reported any more.
        poller.poll(ItemName("a.b"), stamp: Scanner().stamp(named: ItemName("a.b"), in: root.fd), settled: true)
        XCTAssertTrue(ChangePollerTests.twoRoundsPass(poller), "the poller never went round")
        XCTAssertTrue(poller.takeFound().isEmpty)
    }
}
