import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// The mount the daemon acts on is found in /proc/self/mountinfo only when
/// it is plainly its own: the newest mount at the path, a queryfs mount,
/// of its whole filesystem, mounted for the daemon's user.
final class MountRootTests: XCTestCase {
    private let uid = geteuid()

    private func line(_ id: Int, _ device: String, root: String = "/", at path: String, type: String = "fuse.queryfs",
                      user: uid_t? = nil) -> String {
        "\(id) 1 \(device) \(root) \(path) rw,nosuid,nodev,relatime shared:1 - \(type) /srv/b rw,user_id=\(user ?? uid),group_id=0,default_permissions"
    }

    func testTheNewestOwnQueryfsMountAtThePathIsFoundWithItsDevice() throws {
        let text = [line(30, "0:40", at: "/mnt/a b"), line(31, "0:45", at: "/mnt/a\\040b")].joined(separator: "\n")
        let root = try XCTUnwrap(MountRoot.find(mountPoint: "/mnt/a b", mountinfo: text, logger: .discarding))
        // makedev(0, 45), as stat(2) reports it.
        XCTAssertEqual(root.device, 45)
        let large = try XCTUnwrap(MountRoot.find(mountPoint: "/m", mountinfo: line(1, "300:1048575", at: "/m"), logger: .discarding))
        XCTAssertEqual(large.device, (0xff) | (300 & 0xfff) << 8 | (1_048_575 & ~0xff) << 12)
    }

    func testAMountThatIsNotPlainlyThisDaemonsIsRefused() {
        XCTAssertNil(MountRoot.find(mountPoint: "/m", mountinfo: line(1, "0:40", at: "/m", user: uid &+ 1), logger: .discarding),
                     "another user's mount (fusermount3 sets user_id to its caller)")
        XCTAssertNil(MountRoot.find(mountPoint: "/m", mountinfo: line(1, "0:40", at: "/m", type: "fuse.sshfs"), logger: .discarding))
        XCTAssertNil(MountRoot.find(mountPoint: "/m", mountinfo: line(1, "0:40", root: "/sub", at: "/m"), logger: .discarding),
                     "a bind mount of a folder inside")
        XCTAssertNil(MountRoot.find(mountPoint: "/m", mountinfo: [line(1, "0:40", at: "/m"), line(2, "0:41", at: "/m", type: "tmpfs")]
                         .joined(separator: "\n"), logger: .discarding), "something mounted on top")
        XCTAssertNil(MountRoot.find(mountPoint: "/m", mountinfo: line(1, "0:40", at: "/elsewhere"), logger: .discarding))
        XCTAssertNil(MountRoot.find(mountPoint: "/m", mountinfo: "garbage\n1 2 x / /m - \n", logger: .discarding))
    }
}
