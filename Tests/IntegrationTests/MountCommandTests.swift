import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `queryfs mount` and `queryfs unmount` as a user meets them (SPEC §3):
/// every failure is one line and a non-zero exit with nothing mounted;
/// foreground mounts end cleanly on SIGINT/SIGTERM.
final class MountCommandTests: XCTestCase {
    private var fixture: MountedFixture!

    override func setUp() {
        fixture = MountedFixture(corpus: { corpus in
            corpus.bundle("one.hpwebsite", title: "One", tags: ["t"], mtime: 1_000)
            corpus.bundle("two.hpwebsite", title: "Two", archived: true, mtime: 2_000)
        })
    }

    override func tearDown() {
        fixture?.unmount()
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "left mounted")
        fixture = nil
    }

    /// Runs `queryfs mount ARGUMENTS` expecting failure: non-zero exit, one
    /// `queryfs: ` line containing `expected`, and nothing mounted at `mountPoint`.
    /// `direct: false`: `prefix` is the whole command (it runs queryfs itself).
    private func assertMountFails(_ arguments: [String], mountPoint: String, mentions expected: [String], prefix: [String] = [],
                                  direct: Bool = true, file: StaticString = #filePath, line: UInt = #line)
    {
        // Only this test's own folder: other programs on the machine may mount meanwhile.
        let ours = { MountTable.mountPoints().filter { $0.hasPrefix(URL(fileURLWithPath: mountPoint).deletingLastPathComponent().path) } }
        let before = ours()
        let result = direct ? QueryfsBinary.run(["mount"] + arguments, prefix: prefix) : Program.run(prefix)
        XCTAssertNotEqual(result.status, 0, "mount succeeded: \(arguments)", file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, "want one line, got: \(result.stderrText)", file: file, line: line)
        let message = result.stderrLines.first ?? ""
        XCTAssertTrue(message.hasPrefix("queryfs: "), message, file: file, line: line)
        for word in expected {
            XCTAssertTrue(message.lowercased().contains(word.lowercased()), "'\(message)' should mention '\(word)'", file: file, line: line)
        }
        XCTAssertEqual(result.stdout, [], file: file, line: line)
        XCTAssertFalse(MountTable.isMounted(mountPoint), "mounted after a failure", file: file, line: line)
        XCTAssertEqual(ours(), before, "mount table changed", file: file, line: line)
    }

    func testMountReturnsOnlyWhenLiveAndUnmountUnmounts() throws {
        try fixture.mount()
        // Complete on return: no waiting, every view already there.
        XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, 2)
        XCTAssertEqual(RawFiles.list(fixture.mounted("archived"))?.count, 1)
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/t"))?.count, 1)
        let status = RawFiles.read(fixture.mounted(".queryfs/status"))?.text ?? ""
        let daemon = status.range(of: "\"pid\": ").flatMap { pid_t(status[$0.upperBound...].prefix { $0.isNumber }) }
        XCTAssertNotNil(daemon, status)
        let result = QueryfsBinary.run(["unmount", fixture.mountPoint])
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
        // The daemon has ended when unmount returns: BACKING is free for a script's next step.
        if let daemon { XCTAssertTrue(kill(daemon, 0) != 0 || (try? String(contentsOfFile: "/proc/\(daemon)/stat", encoding: .utf8))?.contains(") Z") == true) }
        XCTAssertEqual(RawFiles.list(fixture.mountPoint)?.count, 0)
        // And it can be mounted again.
        try fixture.mount()
    }

    /// The background mount hands its daemon the command line it was given
    /// (plus -f and the ready descriptor), whatever options it holds: each
    /// option reaches the daemon without a list to keep up to date.
    func testTheBackgroundMountHandsItsDaemonEveryOptionAsGiven() throws {
        let given = ["--poll", "3", "--payload-key", "webLocation.relative", "--query-folders", "7", "--no-events",
                     "--log", fixture.root + "/mount.log", "-o", "ro"]
        try fixture.mount(given)
        let pid = try XCTUnwrap(fixture.daemonPID())
        let raw = try XCTUnwrap(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
        let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(Array(arguments.dropFirst()), ["mount", "-f", "--ready-fd", "3", fixture.backing, fixture.mountPoint] + given)
        let status = try XCTUnwrap(try JSONSerialization.jsonObject(
            with: XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))) as? [String: Any])
        XCTAssertEqual(status["events"] as? Bool, false, "\(status)")
    }

    func testFusermountUnmountsToo() throws {
        try fixture.mount()
        XCTAssertEqual(Program.run(["fusermount3", "-u", fixture.mountPoint]).status, 0)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
    }

    func testForegroundMountEndsCleanlyOnSIGTERMAndSIGINT() throws {
        for signal in [SIGTERM, SIGINT] {
            let pid = Program.spawn([QueryfsBinary.path, "mount", "-f", fixture.backing, fixture.mountPoint],
                                    stdout: fixture.root + "/fg.out", stderr: fixture.root + "/fg.err")
            XCTAssertGreaterThan(pid, 0)
            guard eventually(timeout: 10, { MountTable.isMounted(self.fixture.mountPoint) }) else {
                kill(pid, SIGKILL)
                _ = Program.wait(pid)
                return XCTFail("foreground mount never appeared")
            }
            XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, 2)
            kill(pid, signal)
            let status = Program.wait(pid, timeout: 10)
            if status == nil { kill(pid, SIGKILL); _ = Program.wait(pid) }
            XCTAssertEqual(status, 0, "exit status after signal \(signal)")
            XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "still mounted after signal \(signal)")
        }
    }

    func testBackingMissingOrNotADirectory() {
        assertMountFails([fixture.root + "/nope", fixture.mountPoint], mountPoint: fixture.mountPoint, mentions: ["nope"])
        let file = fixture.root + "/file"
        RawFiles.write(file, [1])
        assertMountFails([file, fixture.mountPoint], mountPoint: fixture.mountPoint, mentions: ["not a directory"])
    }

    func testMountPointMissingNotEmptyOrAFile() {
        assertMountFails([fixture.backing, fixture.root + "/missing"], mountPoint: fixture.root + "/missing", mentions: ["missing"])
        RawFiles.write(fixture.mountPoint + "/occupied", [1])
        assertMountFails([fixture.backing, fixture.mountPoint], mountPoint: fixture.mountPoint, mentions: ["not empty", "-o nonempty"])
        // The two given the other way round (an empty folder, then the collection): said so, not "-o nonempty".
        let empty = fixture.root + "/empty"
        mkdir(empty, 0o755)
        assertMountFails([empty, fixture.mountPoint], mountPoint: fixture.mountPoint, mentions: ["the other way round"])
        rmdir(empty)
        unlink(fixture.mountPoint + "/occupied")
        let file = fixture.root + "/file"
        RawFiles.write(file, [1])
        assertMountFails([fixture.backing, file], mountPoint: file, mentions: ["not a directory"])
    }

    /// A mount point inside BACKING (visible or hidden, under any name
    /// that leads there) would be read as an item and the daemon would wait
    /// on its own mount; BACKING inside the mount point would be hidden by
    /// it. Each is refused in one line, nothing mounted.
    func testMountPointAndBackingMustLieApart() {
        for inner in ["inner", ".hidden-inner"] {
            let mountPoint = fixture.backed(inner)
            XCTAssertEqual(mkdir(mountPoint, 0o755), 0)
            assertMountFails([fixture.backing, mountPoint], mountPoint: mountPoint, mentions: ["inside the backing directory"])
        }
        let alias = fixture.root + "/alias"
        XCTAssertEqual(symlink(fixture.backing, alias), 0)
        assertMountFails([fixture.backing, alias + "/inner"], mountPoint: fixture.backed("inner"), mentions: ["inside the backing directory"])
        assertMountFails([fixture.backing, fixture.backing, "-o", "nonempty"], mountPoint: fixture.backing, mentions: ["backing directory itself"])
        assertMountFails([fixture.backing, fixture.root, "-o", "nonempty"], mountPoint: fixture.root, mentions: ["inside the mount point"])
        // Still mountable where it belongs (the folder made for the test was an item of its own).
        XCTAssertEqual(rmdir(fixture.backed("inner")), 0)
        XCTAssertNoThrow(try fixture.mount())
        XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, 2)
    }

    func testMountPointAlreadyAMount() throws {
        try fixture.mount()
        let result = QueryfsBinary.run(["mount", fixture.backing, fixture.mountPoint])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.hasPrefix("queryfs: "))
        XCTAssertTrue(result.stderrText.contains("already"), result.stderrText)
        // Exactly one mount there, still working.
        XCTAssertEqual(MountTable.mountPoints().filter { $0 == fixture.mountPoint }.count, 1)
        XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, 2)
    }

    /// Mounts started at once on one mount point: one mounts, the others
    /// say why in one line (found from outside: three at once stacked two
    /// mounts, each with its daemon).
    func testMountsStartedAtOnceMountOnce() throws {
        let pids = (0..<3).map { number in
            Program.spawn([QueryfsBinary.path, "mount", fixture.backing, fixture.mountPoint],
                                stdout: fixture.root + "/out\(number)", stderr: fixture.root + "/err\(number)")
        }
        let statuses = pids.map { Program.wait($0) }
        defer { while MountTable.mountPoints().contains(fixture.mountPoint) { _ = QueryfsBinary.run(["unmount", fixture.mountPoint]) } }
        XCTAssertEqual(statuses.filter { $0 == 0 }.count, 1, "\(statuses)")
        XCTAssertEqual(MountTable.mountPoints().filter { $0 == fixture.mountPoint }.count, 1)
        for number in 0..<3 where statuses[number] != 0 {
            let text = (try? String(contentsOfFile: fixture.root + "/err\(number)", encoding: .utf8)) ?? ""
            XCTAssertEqual(text.split(separator: "\n").count, 1, text)
            XCTAssertTrue(text.contains("already a mount point") || text.contains("held by another queryfs daemon"), text)
        }
    }

    /// A mount process killed before its mount was ready: `queryfs mount`
    /// says so in one line (found from outside: exit 2, nothing printed).
    /// Its log is a FIFO nobody reads, so it waits there, surely not ready.
    func testAMountProcessKilledBeforeItIsReadyIsSaidSo() throws {
        let fifo = fixture.root + "/log.fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let pid = Program.spawn([QueryfsBinary.path, "mount", fixture.backing, fixture.mountPoint, "--log", fifo],
                                stdout: fixture.root + "/out", stderr: fixture.root + "/err")
        let child = { () -> pid_t? in
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            return children.split(separator: " ").first.flatMap { pid_t($0) }
        }
        XCTAssertTrue(eventually(timeout: 10) { child() != nil }, "no mount process started")
        if let child = child() { kill(child, SIGKILL) }
        XCTAssertEqual(Program.wait(pid), 2)
        let text = (try? String(contentsOfFile: fixture.root + "/err", encoding: .utf8)) ?? ""
        XCTAssertEqual(text.split(separator: "\n").count, 1, text)
        XCTAssertTrue(text.contains("killed by signal 9") && text.contains("nothing is mounted"), text)
        XCTAssertFalse(MountTable.mountPoints().contains(fixture.mountPoint))
    }

    /// A daemon killed with SIGKILL leaves "Transport endpoint is not
    /// connected": mount says so and how to clear it; unmount clears it.
    func testStaleMountFromAKilledDaemon() throws {
        let pid = Program.spawn([QueryfsBinary.path, "mount", "-f", fixture.backing, fixture.mountPoint],
                                stdout: fixture.root + "/fg.out", stderr: fixture.root + "/fg.err")
        guard eventually(timeout: 10, { MountTable.isMounted(self.fixture.mountPoint) }) else {
            kill(pid, SIGKILL)
            _ = Program.wait(pid)
            return XCTFail("foreground mount never appeared")
        }
        kill(pid, SIGKILL)
        _ = Program.wait(pid)
        // Within the attribute timeout the kernel may answer from its cache
        // (a desktop's volume monitor stats every new mount): a moment later it asks, and hears the mount is gone.
        var status = stat()
        XCTAssertTrue(eventually(timeout: 5) { stat(self.fixture.mountPoint, &status) == -1 && errno == ENOTCONN }, "still answering")

        let result = QueryfsBinary.run(["mount", fixture.backing, fixture.mountPoint])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.hasPrefix("queryfs: "))
        XCTAssertTrue(result.stderrText.contains("fusermount3 -u") || result.stderrText.contains("queryfs unmount"), result.stderrText)
        XCTAssertEqual(MountTable.mountPoints().filter { $0 == fixture.mountPoint }.count, 1, "a second mount was stacked")
        // Commands given the stale mount say so in one line (found from
        // outside: `views` printed nothing, exit 0; `status` blamed the configuration).
        for command in [["views", fixture.mountPoint], ["status", fixture.mountPoint], ["ls", fixture.mountPoint, "by-name"],
                        ["tag", fixture.mountPoint, "one.hpwebsite", "--add", "x"]] {
            let answer = QueryfsBinary.run(command)
            XCTAssertEqual(answer.status, 2, "\(command)")
            XCTAssertEqual(answer.stderrLines, ["queryfs: the mount at \(fixture.mountPoint) has lost its daemon (it ended or was killed): `queryfs unmount \(fixture.mountPoint)` clears it"], "\(command)")
        }
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "by-name"]).stdoutText.split(separator: "\n").count, 2, "BACKING answers without it")

        let unmount = QueryfsBinary.run(["unmount", fixture.mountPoint])
        XCTAssertEqual(unmount.status, 0, unmount.stderrText)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
        try fixture.mount()
    }

    /// A mount whose daemon is stopped (SIGSTOP) never answers: commands
    /// given it stop in one line after a few seconds, commands given its
    /// BACKING go on without it, and `unmount` takes it away (found from
    /// outside: `queryfs ls BACKING VIEW` and `status` waited for good).
    func testCommandsNeverWaitForAStoppedDaemon() throws {
        try fixture.mount()
        let daemon = try XCTUnwrap(fixture.daemonPID())
        // A change just before, its listings read: the kernel's caches are
        // warm, and a stat of the mount point would still be answered.
        XCTAssertEqual(QueryfsBinary.run(["tag", fixture.backing, "one.hpwebsite", "--add", "fresh"]).status, 0)
        XCTAssertTrue(eventually { (RawFiles.list(self.fixture.mounted("tag/fresh")) ?? []).count == 1 })
        kill(daemon, SIGSTOP)
        defer { kill(daemon, SIGCONT) }
        let started = Date()
        for command in [["ls", fixture.mountPoint, "by-name"], ["views", fixture.mountPoint], ["status", fixture.mountPoint],
                        ["ls", fixture.mounted("bundles"), "by-name"]] {
            let answer = QueryfsBinary.run(command)
            XCTAssertEqual(answer.status, 2, "\(command)")
            XCTAssertEqual(answer.stderrLines.count, 1, answer.stderrText)
            XCTAssertTrue(answer.stderrText.contains("does not answer (its daemon is stopped or hung)"), answer.stderrText)
        }
        for command in [["ls", fixture.backing, "by-name"], ["status", fixture.backing]] {
            let answer = QueryfsBinary.run(command)
            XCTAssertEqual(answer.status, 0, "\(command): \(answer.stderrText)")
            XCTAssertTrue(answer.stderrText.contains("does not answer"), answer.stderrText)
            XCTAssertFalse(answer.stdout.isEmpty, "\(command) answered from BACKING")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 60, "six commands, none waiting for good")
        let unmount = QueryfsBinary.run(["unmount", fixture.mountPoint])
        XCTAssertEqual(unmount.status, 0, unmount.stderrText)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
    }

    /// Without /dev/fuse (hidden in a private mount namespace).
    func testNoDevFuse() throws {
        let script = "mount -t tmpfs tmpfs /dev && exec \"$0\" mount \"$1\" \"$2\""
        let result = Program.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                  QueryfsBinary.path, fixture.backing, fixture.mountPoint])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.hasPrefix("queryfs: "), result.stderrText)
        XCTAssertTrue(result.stderrText.contains("/dev/fuse"), result.stderrText)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
    }

    /// As a user who may not mount here (nobody), whatever this machine's
    /// /dev/fuse is like: each setup gets a private node in its own mount
    /// namespace. 0600 (a container): queryfs cannot open the device. 0666
    /// (a desktop with udev): libfuse asks the setuid fusermount3, which
    /// refuses the mount point; its reason is folded into the one line.
    func testNotPermitted() throws {
        try XCTSkipIf(getuid() != 0, "needs root to switch to an unprivileged user")
        let queryfs = try ReachableCopies(for: self).queryfs()
        for (mode, expected) in [("0600", ["permi", "/dev/fuse"]), ("0666", ["permi", "mountpoint"])] {
            let script = "mount -t tmpfs tmpfs /dev && mknod -m \(mode) /dev/fuse c 10 229 && "
                + "exec setpriv --reuid=65534 --regid=65534 --clear-groups -- \"$0\" mount \"$1\" \"$2\""
            assertMountFails([], mountPoint: fixture.mountPoint, mentions: expected,
                             prefix: ["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                      queryfs, fixture.backing, fixture.mountPoint], direct: false)
        }
    }

    /// An ordinary user with access to /dev/fuse (a desktop's 0666 node;
    /// here a private one in a mount namespace) mounts through fusermount3,
    /// and everything works; the log says once that passthrough is root's.
    func testAnOrdinaryUserMountsThroughFusermount() throws {
        try XCTSkipIf(getuid() != 0, "needs root to make the private /dev/fuse and switch users")
        let queryfs = try ReachableCopies(for: self).queryfs()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-user")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        chmod(scratch, 0o777)
        XCTAssertEqual(chown(fixture.mountPoint, 65534, 65534), 0)
        let script = "mount -t tmpfs tmpfs /dev && mknod -m 0666 /dev/fuse c 10 229 && "
            + "exec setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c '"
            + "\"$0\" mount \"$1\" \"$2\" --log \"$3/log\" || exit 10; "
            + "ls \"$2/by-name\" | wc -l > \"$3/count\"; cat \"$2/bundles/one.hpwebsite/payload.plist\" > \"$3/payload\" || exit 11; "
            + "fusermount3 -u \"$2\" || exit 12' \"$0\" \"$1\" \"$2\" \"$3\""
        let result = Program.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                  queryfs, fixture.backing, fixture.mountPoint, scratch])
        XCTAssertEqual(result.status, 0, result.stderrText)
        let count = Int((try? String(contentsOfFile: scratch + "/count", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        XCTAssertEqual(count, QueryfsBinary.run(["ls", fixture.backing, "by-name"]).stdoutText.split(separator: "\n").count)
        XCTAssertEqual(RawFiles.read(scratch + "/payload"), RawFiles.read(fixture.backed("one.hpwebsite/payload.plist")))
        let log = (try? String(contentsOfFile: scratch + "/log", encoding: .utf8)) ?? ""
        XCTAssertEqual(log.components(separatedBy: "needs CAP_SYS_ADMIN").count - 1, 1, log)
    }

    /// Another user asking a private mount (no allow_other) for a view is
    /// told that the mount is not open to them, not that it has no such view.
    func testAnotherUserIsToldThePrivateMountIsClosedToThem() throws {
        try XCTSkipIf(getuid() != 0, "needs root to switch to an unprivileged user")
        let queryfs = try ReachableCopies(for: self).queryfs()
        try fixture.mount()
        let result = Program.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", queryfs, "ls", fixture.mountPoint, "by-name"])
        XCTAssertEqual(result.status, 2, result.stderrText)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.contains("Permission denied") && result.stderrText.contains("allow_other"), result.stderrText)
    }

    /// A mount in use (a shell's folder inside) is taken out of the tree at
    /// once, and `unmount` says the daemon lives on until it is let go
    /// (found from outside: it returned 0 silently); then the daemon ends.
    func testUnmountOfABusyMountSaysSo() throws {
        try fixture.mount()
        let inside = Program.spawn(["sh", "-c", "cd '\(fixture.mounted("by-name"))' && exec sleep 30"], stdout: "/dev/null", stderr: "/dev/null")
        defer { kill(inside, SIGKILL); _ = Program.wait(inside) }
        XCTAssertTrue(eventually { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(inside)/cwd"))?.hasSuffix("by-name") == true })
        let daemons = Program.run(["pgrep", "-f", "mount -f --ready-fd 3 .*\(fixture.mountPoint)"]).stdoutText
        XCTAssertFalse(daemons.isEmpty, "the mount's daemon")
        let result = QueryfsBinary.run(["unmount", fixture.mountPoint])
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertTrue(result.stderrText.contains("was in use"), result.stderrText)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
        kill(inside, SIGKILL)
        _ = Program.wait(inside)
        for pid in daemons.split(separator: "\n").compactMap({ pid_t($0) }) {
            XCTAssertTrue(eventually(timeout: 10) { kill(pid, 0) != 0 }, "the daemon outlived its last user")
        }
    }

    /// `queryfs unmount` takes away queryfs mounts only: another
    /// filesystem named by mistake (here bindfs, in use) stays mounted, and
    /// the one line says what it is (found from outside: a tmpfs in use was
    /// detached lazily, exit 0).
    func testUnmountLeavesAnotherFilesystemAlone() throws {
        let source = fixture.root + "/bind-source", target = fixture.root + "/bind-target"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        XCTAssertEqual(Program.run(["bindfs", source, target]).status, 0, "bindfs mounts")
        defer { _ = Program.run(["fusermount3", "-u", "-z", target]) }
        let inside = Program.spawn(["sh", "-c", "cd '\(target)' && exec sleep 30"], stdout: "/dev/null", stderr: "/dev/null")
        defer { kill(inside, SIGKILL); _ = Program.wait(inside) }
        for name in [target, target + "/", target + "/."] {
            let result = QueryfsBinary.run(["unmount", name])
            XCTAssertEqual(result.status, 2, "\(name): \(result.stderrText)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
            XCTAssertTrue(result.stderrText.contains("not a queryfs one"), result.stderrText)
            XCTAssertTrue(MountTable.isMounted(target), "\(name): still mounted")
        }
        // Mounting on it names umount(8), not `queryfs unmount`, which would refuse it.
        assertMountFails([fixture.backing, target], mountPoint: fixture.mountPoint, mentions: ["already a mount point", "umount(8)"])
    }

    /// A mount started with standard input, output and error closed (as some
    /// launchers start programs) works as any other: found from outside,
    /// every write through it answered ENOTDIR.
    func testAMountStartedWithItsStandardDescriptorsClosedTakesWrites() throws {
        let result = Program.run(["/bin/sh", "-c", "exec \"$0\" mount \"$1\" \"$2\" <&- >&- 2>&-",
                                  QueryfsBinary.path, fixture.backing, fixture.mountPoint])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(eventually { MountTable.isMounted(self.fixture.mountPoint) })
        XCTAssertEqual(RawFiles.write(fixture.mounted("bundles/new.txt"), Array("new".utf8)), 0, "errno \(errno)")
        XCTAssertEqual(RawFiles.read(fixture.backed("new.txt")), Array("new".utf8))
        XCTAssertEqual(symlink("../../bundles/two.hpwebsite", fixture.mounted("tag/t/x")), 0, "errno \(errno)")
        XCTAssertTrue(eventually { (RawFiles.list(self.fixture.mounted("tag/t")) ?? []).count == 2 })
    }

    func testUnmountOfSomethingNotMounted() {
        let result = QueryfsBinary.run(["unmount", fixture.mountPoint])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.hasPrefix("queryfs: "), result.stderrText)
    }

    func testBadFuseOption() {
        assertMountFails(["-o", "no_such_option", fixture.backing, fixture.mountPoint], mountPoint: fixture.mountPoint,
                         mentions: ["no_such_option"])
    }

    /// queryfs's own `-o` options work with `queryfs mount` as in the
    /// mount-helper form (found from outside: `-o trust_index`, which the
    /// README offers, reached libfuse and was refused in a garbled line),
    /// and a mistyped command is said to be one, not read as a BACKING.
    func testOwnOptionsAfterDashOAndAMistypedCommand() throws {
        try fixture.mount(["-o", "trust_index,ro"])
        let pid = try XCTUnwrap(fixture.daemonPID())
        let raw = try XCTUnwrap(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
        let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(arguments.contains("--trust-index"), "\(arguments)")
        XCTAssertNotEqual(RawFiles.write(fixture.mounted("bundles/new"), [1]), 0, "read-only")
        let typo = QueryfsBinary.run(["stauts", fixture.backing])
        XCTAssertEqual(typo.status, 2)
        XCTAssertEqual(typo.stderrLines.count, 1, typo.stderrText)
        XCTAssertTrue(typo.stderrText.contains("unknown command 'stauts'"), typo.stderrText)
    }

    /// Too few descriptors for a mount (`ulimit -n 32`) is one line before
    /// anything mounts (found from outside: the mount came up and answered
    /// reads and edits with EMFILE).
    func testTooFewDescriptorsIsOneLine() {
        assertMountFails([], mountPoint: fixture.mountPoint, mentions: ["ulimit -n", "at least 128"],
                         prefix: ["/bin/sh", "-c", "ulimit -n 32 && exec \"$0\" mount \"$1\" \"$2\"", QueryfsBinary.path,
                                  fixture.backing, fixture.mountPoint], direct: false)
    }

    /// SIGHUP makes a daemon in the background read its configuration
    /// again (here one behind a link, whose target's edits inotify does not
    /// report), and it stays mounted (found from outside: it unmounted).
    func testSIGHUPReadsTheConfigurationAgain() throws {
        let elsewhere = fixture.root + "/elsewhere.toml"
        XCTAssertTrue(FileManager.default.createFile(atPath: elsewhere, contents: Data("[views]\nfirst = \"tag:t\"\n".utf8)))
        XCTAssertEqual(symlink(elsewhere, fixture.backed(".queryfs.toml")), 0)
        try fixture.mount()
        XCTAssertNotNil(RawFiles.list(fixture.mounted("first")))
        XCTAssertTrue(FileManager.default.createFile(atPath: elsewhere, contents: Data("[views]\nsecond = \"tag:t\"\n".utf8)))
        let daemon = try XCTUnwrap(fixture.daemonPID())
        XCTAssertEqual(kill(daemon, SIGHUP), 0)
        XCTAssertTrue(eventually(timeout: 10) { RawFiles.list(self.fixture.mounted("second")) != nil }, "the new view")
        XCTAssertTrue(MountTable.isMounted(fixture.mountPoint), "still mounted")
        XCTAssertEqual(kill(daemon, 0), 0, "still running")
    }

    /// BACKING moved away and a new folder made at its path: `ls` and
    /// `status` of that path describe the new folder, not the mount of the
    /// old one (found from outside).
    func testANewFolderAtAMovedBackingsPathIsNotAnsweredByItsMount() throws {
        try fixture.mount()
        XCTAssertEqual(rename(fixture.backing, fixture.root + "/moved"), 0)
        let fresh = Corpus(path: fixture.backing)
        try FileManager.default.createDirectory(atPath: fixture.backing, withIntermediateDirectories: true)
        fresh.bundle("only.hpwebsite", title: "Only", mtime: 1_000)
        let listed = QueryfsBinary.run(["ls", fixture.backing, "by-name"])
        XCTAssertEqual(listed.stdoutText, "0001 Only.hpwebsite\n", listed.stderrText)
        let status = QueryfsBinary.run(["status", fixture.backing])
        XCTAssertFalse(status.stdoutText.contains("mounted at"), status.stdoutText)
    }

    func testReadOnlyOption() throws {
        try fixture.mount(["-o", "ro"])
        XCTAssertNotEqual(RawFiles.write(fixture.mounted("bundles/new"), [1]), 0)
        XCTAssertEqual(errno, EROFS)
        XCTAssertNil(RawFiles.lstat(fixture.backed("new")))
        XCTAssertNotNil(RawFiles.read(fixture.mounted("bundles/one.hpwebsite/payload.plist")))
    }
}
