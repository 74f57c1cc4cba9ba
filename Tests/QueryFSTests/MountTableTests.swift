import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// Which mounts of a backing directory `queryfs ls BACKING` and `status
/// BACKING` may read instead of it: those the caller or root made (the
/// kernel's `user_id=` option), never another user's.
final class MountTableTests: XCTestCase {
    private let table = #"""
        /dev/sda1 / ext4 rw,relatime 0 0
        /home/alice/list /home/alice/mnt fuse.queryfs rw,nosuid,nodev,relatime,user_id=1000,group_id=1000 0 0
        /home/alice/list /tmp/lookalike fuse.queryfs rw,nosuid,nodev,relatime,user_id=1001,group_id=1001,allow_other 0 0
        /srv/list /srv/mnt fuse.queryfs rw,nosuid,nodev,relatime,user_id=0,group_id=0,default_permissions,allow_other 0 0
        /srv/list /srv/other fuse.queryfs rw,nosuid,nodev,relatime,user_id=1001,group_id=1001,allow_other 0 0
        /srv/list /srv/twice fuse.queryfs rw,user_id=0,user_id=1001,group_id=0 0 0
        /srv/list /srv/none fuse.queryfs rw,nosuid,nodev 0 0
        /srv/list /srv/words fuse.queryfs rw,user_id=root,group_id=0 0 0
        /srv/list /srv/signed fuse.queryfs rw,user_id=+0,group_id=0 0 0
        /srv/list /srv/sshfs fuse.sshfs rw,user_id=0,group_id=0 0 0
        /home/alice/my\040list /home/alice/my\040mount fuse.queryfs rw,user_id=1000,group_id=1000 0 0
        """#

    private func trusted(_ source: String, by caller: uid_t) -> [String] {
        MountTable.trustedQueryfsMounts(ofBacking: source, caller: caller, table: table).map(\.mountPoint)
    }

    func testTheOptionsAndTheOwnerAreRead() throws {
        let mounts = MountTable.mounts(table: table)
        let alice = try XCTUnwrap(mounts.first { $0.mountPoint == "/home/alice/mnt" })
        XCTAssertEqual(alice.options, ["rw", "nosuid", "nodev", "relatime", "user_id=1000", "group_id=1000"])
        XCTAssertEqual(alice.fuseOwner, 1000)
        func owner(_ mountPoint: String) -> uid_t? { mounts.first { $0.mountPoint == mountPoint }?.fuseOwner }
        XCTAssertEqual(owner("/srv/mnt"), 0)
        XCTAssertEqual(owner("/home/alice/my mount"), 1000, "an escaped line")
        XCTAssertNil(owner("/"), "no user_id: not a FUSE mount")
        XCTAssertNil(owner("/srv/twice"), "two owners: none")
        XCTAssertNil(owner("/srv/none"))
        XCTAssertNil(owner("/srv/words"))
        XCTAssertNil(owner("/srv/signed"), "the kernel writes digits only")
        XCTAssertEqual(MountTable.mounts(table: "a /b fuse.queryfs\n").first?.options, [], "no options field")
    }

    func testOnlyTheCallersAndRootsMountsAreTrusted() {
        XCTAssertEqual(trusted("/home/alice/list", by: 1000), ["/home/alice/mnt"], "not the other user's lookalike")
        XCTAssertEqual(trusted("/home/alice/list", by: 1001), ["/tmp/lookalike"], "a user's own mount")
        XCTAssertEqual(trusted("/home/alice/list", by: 1002), [])
        XCTAssertEqual(trusted("/home/alice/list", by: 0), [], "root takes no user's word either")
        XCTAssertEqual(trusted("/srv/list", by: 1001), ["/srv/mnt", "/srv/other"], "root's, then its own, in the table's order")
        XCTAssertEqual(trusted("/srv/list", by: 1002), ["/srv/mnt"], "no unclear owner, no other type")
        XCTAssertEqual(trusted("/srv/list", by: 0), ["/srv/mnt"])
        XCTAssertEqual(trusted("/home/alice/my list", by: 1000), ["/home/alice/my mount"])
    }
}
