import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A queryfs mount made by user 65534 in a mount namespace of its own,
/// with a /dev/fuse it may open and `user_allow_other` in a fuse.conf bound
/// over the real one there only: how an ordinary user mounts on a desktop.
/// Up until `stop()`; then unmounted, whatever the test did.
struct UnprivilegedMount {
    /// The shell holding the namespace (`/proc/PID/root` reaches the mount).
    let shell: pid_t
    let scratch: String

    /// Mounts `backing` at `mountPoint` with `queryfs` (a copy every user
    /// can reach) and `-o option`; `scratch` (0777) holds its log and flags.
    init(queryfs: String, backing: String, mountPoint: String, option: String, scratch: String) {
        self.scratch = scratch
        chmod(scratch, 0o777)
        XCTAssertEqual(chown(mountPoint, 65534, 65534), 0)
        let script = "mount -t tmpfs tmpfs /dev && mknod -m 0666 /dev/fuse c 10 229 && "
            + "echo user_allow_other > \"$3/fuse.conf\" && mount --bind \"$3/fuse.conf\" /etc/fuse.conf && "
            + "setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c '"
            + "\"$0\" mount \"$1\" \"$2\" -o \(option) --log \"$3/log\" || exit 10; touch \"$3/ready\"; "
            + "i=0; while [ ! -e \"$3/done\" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; "
            + "fusermount3 -u \"$2\"' \"$0\" \"$1\" \"$2\" \"$3\""
        shell = Program.spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                               queryfs, backing, mountPoint, scratch],
                              stdout: scratch + "/out", stderr: scratch + "/err")
        XCTAssertGreaterThan(shell, 0)
    }

    /// Waits for the mount (the shell's signal); false, with its stderr in the failure, if it never came.
    func waitUntilMounted(file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let mounted = eventually(timeout: 20) { FileManager.default.fileExists(atPath: scratch + "/ready") }
        XCTAssertTrue(mounted, (try? String(contentsOfFile: scratch + "/err", encoding: .utf8)) ?? "", file: file, line: line)
        return mounted
    }

    /// Tells the shell to unmount and waits for it (killed after 15 s).
    func stop() {
        XCTAssertTrue(FileManager.default.createFile(atPath: scratch + "/done", contents: nil), "the shell's stop file")
        if Program.wait(shell, timeout: 15) == nil {
            kill(shell, SIGKILL)
            _ = Program.wait(shell)
        }
    }
}

extension UnprivilegedMount {
    /// The mount `test` makes as user 65534 with `-o option` (the binary and
    /// a scratch folder made reachable), stopped and cleaned at the test's
    /// teardown; nil, with the failure recorded, when it never came.
    static func started(for test: XCTestCase, backing: String, mountPoint: String, option: String) throws -> UnprivilegedMount? {
        let queryfs = try ReachableCopies(for: test).queryfs()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-unprivileged")
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: scratch) }
        let mount = UnprivilegedMount(queryfs: queryfs, backing: backing, mountPoint: mountPoint, option: option, scratch: scratch)
        test.addTeardownBlock { mount.stop() }
        return mount.waitUntilMounted() ? mount : nil
    }
}
