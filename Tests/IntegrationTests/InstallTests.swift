import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 16: queryfs installs and runs like a system tool — `make install`
/// into a scratch prefix, `--version`, man pages, completions, units; the
/// mount(8)/fstab calling convention; systemd readiness; its name in `ps`.
final class InstallTests: MountTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    func testMakeInstallPutsEverythingInThePrefixAndUninstallTakesItAway() throws {
        let destination = makeTemporaryDirectory(prefix: "queryfs-install")
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let install = Program.run(["make", "-C", Self.repository, "install", "DESTDIR=\(destination)", "PREFIX=/usr",
                                   "BINARY=\(QueryfsBinary.path)"])
        XCTAssertEqual(install.status, 0, install.stderrText)
        let usr = destination + "/usr"
        let version = Program.run([usr + "/bin/queryfs", "--version"])
        XCTAssertEqual(version.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count, 3, version.stdoutText)
        // Every page, with nothing said on stderr, in the C locale (a minimal
        // root has no LANG: troff writes ASCII and warns of any character
        // it has no glyph for there) and in a UTF-8 one.
        let pages = try ["man1", "man5"].flatMap { section in
            try FileManager.default.contentsOfDirectory(atPath: usr + "/share/man/" + section).map { section + "/" + $0 }
        }
        XCTAssertEqual(pages.count, try FileManager.default.contentsOfDirectory(atPath: Self.repository + "/man").count, "\(pages)")
        for page in pages {
            for locale in ["C", "C.UTF-8"] {
                let rendered = Program.run(["env", "-u", "LANG", "-u", "LANGUAGE", "LC_ALL=\(locale)", "MANWIDTH=80",
                                            "man", "-l", usr + "/share/man/" + page])
                XCTAssertEqual(rendered.status, 0, "\(page) in \(locale)")
                XCTAssertTrue(rendered.stdoutText.contains("queryfs"), "\(page) in \(locale)")
                XCTAssertEqual(rendered.stderrText, "", "\(page) in \(locale)")
            }
        }
        for unit in ["system", "user"] {
            let text = try String(contentsOfFile: usr + "/lib/systemd/\(unit)/queryfs@.service", encoding: .utf8)
            XCTAssertTrue(text.contains("Type=notify"), unit)
            XCTAssertTrue(text.contains("ExecStart=/usr/bin/queryfs mount -f"), unit)
            XCTAssertFalse(text.contains("@BINDIR@"), unit)
            if unit == "system" { XCTAssertTrue(text.contains("CacheDirectory=queryfs"), "the index file's folder") }
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: usr + "/share/zsh/site-functions/_queryfs"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: usr + "/share/fish/vendor_completions.d/queryfs.fish"))

        // bash: `queryfs ls BACKING <TAB>` offers the views, tag folders included.
        fixture = MountedFixture()
        let script = """
            source '\(usr)/share/bash-completion/completions/queryfs'
            COMP_WORDS=(queryfs ls '\(fixture.backing)' ''); COMP_CWORD=3
            COMP_LINE="queryfs ls \(fixture.backing) "; COMP_POINT=${#COMP_LINE}
            _queryfs queryfs '' '\(fixture.backing)'
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let completion = Program.run(["env", "PATH=\(usr)/bin:/usr/bin:/bin", "bash", "-c", script])
        let offered = Set(completion.stdoutText.split(separator: "\n").map(String.init))
        XCTAssertTrue(offered.isSuperset(of: ["by-name", "unarchived", "archived", "tag/swift", "tag/five"]), completion.stdoutText + completion.stderrText)

        let uninstall = Program.run(["make", "-C", Self.repository, "uninstall", "DESTDIR=\(destination)", "PREFIX=/usr"])
        XCTAssertEqual(uninstall.status, 0, uninstall.stderrText)
        let left = FileManager.default.enumerator(atPath: destination)?.compactMap { $0 as? String }
            .filter { !((try? FileManager.default.attributesOfItem(atPath: destination + "/" + $0)[.type] as? FileAttributeType) == .typeDirectory) }
        XCTAssertEqual(left ?? [], [])
    }

    func testTheMountHelperConventionMapsIgnoresAndRefusesOptions() throws {
        fixture = MountedFixture()
        let refused = QueryfsBinary.run([fixture.backing, fixture.mountPoint, "-o", "rw,nodev,colour=red"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderrLines.count, 1, refused.stderrText)
        XCTAssertTrue(refused.stderrText.contains("unknown mount option 'colour=red'"), refused.stderrText)
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint))
        // What mount.fuse3 hands over for an fstab line: mount(8)'s and systemd's options dropped.
        let mounted = QueryfsBinary.run([fixture.backing, fixture.mountPoint, "-o",
                                         "rw,dev,suid,defaults,_netdev,nofail,x-systemd.requires-mounts-for=/srv,allow_other,no_events,query_folders=9,notify=inotify"])
        XCTAssertEqual(mounted.status, 0, mounted.stderrText)
        XCTAssertTrue(MountTable.isMounted(fixture.mountPoint))
        let line = try XCTUnwrap(try String(contentsOfFile: "/proc/mounts", encoding: .utf8).split(separator: "\n")
            .first { $0.contains(" \(fixture.mountPoint) ") })
        XCTAssertTrue(line.contains("allow_other") && line.contains("default_permissions"), String(line))
        XCTAssertTrue(RawFiles.list(fixture.mounted("by-name"))?.isEmpty == false)
        let status = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        XCTAssertEqual((try JSONSerialization.jsonObject(with: status) as? [String: Any])?["changeNotification"] as? String, "inotify")
        // The daemon is called queryfs in ps (not "exe").
        XCTAssertEqual(Program.run(["pgrep", "-x", "queryfs"]).status, 0, "pgrep -x queryfs found nothing")
    }

    /// `mount -t fuse.queryfs` and an fstab line, through mount(8) and
    /// mount.fuse3 as they are, in a private mount namespace whose
    /// /usr/local/sbin holds the binary (mount.fuse3 finds `queryfs` on the
    /// default PATH): nothing on the machine changes.
    func testMountTypeFuseQueryfsAndAnFstabLineMount() throws {
        fixture = MountedFixture()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-fstab")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        mkdir(scratch + "/bin", 0o755)
        XCTAssertEqual(symlink(QueryfsBinary.path, scratch + "/bin/queryfs"), 0)
        let fstab = scratch + "/fstab"
        try "\(fixture.backing) \(fixture.mountPoint) fuse.queryfs defaults,_netdev,nofail,allow_other,x-systemd.requires-mounts-for=\(fixture.backing) 0 0\n"
            .write(toFile: fstab, atomically: true, encoding: .utf8)
        let script = """
            set -u
            trap 'fusermount3 -u -z "$M" 2>/dev/null' EXIT
            M='\(fixture.mountPoint)'
            mount --make-rprivate /
            mount --bind '\(scratch)/bin' /usr/local/sbin
            mount -t fuse.queryfs '\(fixture.backing)' "$M" -o allow_other,no_events || exit 10
            ls "$M/by-name" | wc -l > '\(scratch)/type'
            fusermount3 -u "$M" || exit 11
            mount -T '\(fstab)' "$M" || exit 12
            grep " $M " /proc/mounts > '\(scratch)/fstab-line'
            ls "$M/by-name" | wc -l > '\(scratch)/fstab'
            fusermount3 -u "$M" || exit 13
            """
        let result = Program.run(["unshare", "-m", "sh", "-c", script])
        XCTAssertEqual(result.status, 0, result.stderrText)
        let typeCount = Int((try? String(contentsOfFile: scratch + "/type", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        let fstabCount = Int((try? String(contentsOfFile: scratch + "/fstab", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        XCTAssertGreaterThan(typeCount, 100, "mount -t fuse.queryfs")
        XCTAssertEqual(fstabCount, typeCount, "fstab line")
        XCTAssertTrue((try? String(contentsOfFile: scratch + "/fstab-line", encoding: .utf8))?.contains("allow_other") == true)
    }

    /// The first scan of a large BACKING shows its progress on a terminal
    /// (a pseudo-terminal from script(1)) while `mount` waits.
    func testAMountOnATerminalShowsItsProgress() throws {
        fixture = MountedFixture { _ in }
        let sample = (QueryfsBinary.path as NSString).deletingLastPathComponent + "/queryfs-sample"
        try? FileManager.default.removeItem(atPath: fixture.backing)
        XCTAssertEqual(Program.run([sample, "--count", "20000", "--seed", "2", fixture.backing]).status, 0)
        // Shown from the start (a release build scans 20,000 items in under the usual 1 s of silence).
        let command = "QUERYFS_PROGRESS_AFTER=0 '\(QueryfsBinary.path)' mount '\(fixture.backing)' '\(fixture.mountPoint)'"
        let result = Program.run(["script", "-qec", command, "/dev/null"])
        XCTAssertEqual(result.status, 0, result.stdoutText)
        let lines = result.stdoutText.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).map(String.init)
        XCTAssertTrue(lines.contains { $0.contains("indexing \(fixture.backing): ") && $0.contains(" of 20000 items (") && $0.contains("items/s") },
                      result.stdoutText)
        XCTAssertTrue(lines.contains { $0.contains("20000 of 20000 items") && $0.contains("done in") }, result.stdoutText)
        XCTAssertTrue(MountTable.isMounted(fixture.mountPoint))
        // Without a terminal and with a fast mount: nothing at all.
        fixture.unmount()
        let quiet = QueryfsBinary.run(["mount", fixture.backing, fixture.mountPoint])
        XCTAssertEqual(quiet.status, 0)
        XCTAssertTrue(quiet.stderrText.isEmpty || quiet.stderrText.contains("indexing"), quiet.stderrText)
        // A start whose index vouches for every item reads none: no "0 of 0 items" line, even shown at once.
        fixture.unmount()
        let vouched = Program.run(["env", "QUERYFS_PROGRESS_AFTER=0", QueryfsBinary.path, "mount", fixture.backing, fixture.mountPoint])
        XCTAssertEqual(vouched.status, 0, vouched.stderrText)
        XCTAssertEqual(vouched.stderrText, "", "the index written by the mounts before vouches for all 20000 items")
    }

    /// Under systemd, log lines on the journal's stream carry their priority.
    func testLogLinesCarryTheirPriorityForTheJournal() throws {
        fixture = MountedFixture()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-journal")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let stream = scratch + "/stream"
        XCTAssertTrue(FileManager.default.createFile(atPath: stream, contents: nil))
        let status = try XCTUnwrap(RawFiles.stat(Array(stream.utf8)))
        let pid = Program.spawn(["env", "JOURNAL_STREAM=\(status.st_dev):\(status.st_ino)", QueryfsBinary.path, "mount", "-f", "-o", "ro",
                                 fixture.backing, fixture.mountPoint], stdout: scratch + "/out", stderr: stream)
        XCTAssertTrue(eventually { MountTable.isMounted(self.fixture.mountPoint) })
        fixture.unmount()
        XCTAssertEqual(Program.wait(pid, timeout: 10), 0)
        let text = try String(contentsOfFile: stream, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("<6>read-only mount: no inotify events"), text)
    }

    /// systemd `Type=notify`: READY=1 arrives only once every view is complete.
    func testSystemdHearsReadyOnlyWhenTheViewsAreComplete() throws {
        fixture = MountedFixture()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-notify")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let socketPath = scratch + "/notify"
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(receiver, 0)
        defer { close(receiver) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (index, byte) in socketPath.utf8.enumerated() { raw[index] = byte } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        XCTAssertEqual(bound, 0)
        let pid = Program.spawn(["env", "NOTIFY_SOCKET=\(socketPath)", QueryfsBinary.path, "mount", "-f", fixture.backing, fixture.mountPoint],
                                stdout: scratch + "/out", stderr: scratch + "/err")
        var messages: [String] = []
        var listedAtReady: Int?
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !messages.contains(where: { $0.contains("READY=1") }) {
            var descriptor = pollfd(fd: receiver, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(receiver, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let message = String(decoding: buffer[0..<count], as: UTF8.self)
            messages.append(message)
            if message.contains("READY=1") { listedAtReady = RawFiles.list(fixture.mounted("by-name"))?.count }
        }
        XCTAssertTrue(messages.contains { $0.contains("READY=1") }, "\(messages)")
        let complete = QueryfsBinary.run(["ls", fixture.backing, "by-name"]).stdoutText.split(separator: "\n").count
        XCTAssertEqual(listedAtReady, complete, "by-name was not complete at READY=1")
        XCTAssertTrue(messages.first?.contains("STATUS=") == true, "\(messages)")
        fixture.unmount()
        XCTAssertEqual(Program.wait(pid, timeout: 10), 0)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptor = pollfd(fd: receiver, events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, 2000) > 0 {
            let count = recv(receiver, &buffer, buffer.count, 0)
            XCTAssertTrue(String(decoding: buffer[0..<max(count, 0)], as: UTF8.self).contains("STOPPING=1"))
        } else {
            XCTFail("no STOPPING=1 after the unmount")
        }
    }
}

/// `MOUNTPOINT/.queryfs/status` and `queryfs status MOUNTPOINT`: the running
/// daemon's own account, JSON that an independent parser reads.
final class MountStatusTests: MountTestCase {
    private func status() throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testTheStatusFileTellsItemsProblemsOptionsAndTheLastChange() throws {
        fixture = MountedFixture()
        try fixture.mount(["-o", "allow_other", "--no-events"])
        let first = try status()
        let expected = QueryfsBinary.run(["ls", fixture.backing, "by-name"]).stdoutText.split(separator: "\n").count
        XCTAssertEqual(first["items"] as? Int, expected)
        XCTAssertEqual(first["backing"] as? String, fixture.backing)
        XCTAssertEqual(first["mountPoint"] as? String, fixture.mountPoint)
        XCTAssertEqual(first["events"] as? Bool, false)
        XCTAssertEqual(first["options"] as? [String], ["allow_other", "no_events"])
        XCTAssertTrue(first["lastChange"] is NSNull)
        let problems = try XCTUnwrap(first["problems"] as? [[String: String]])
        XCTAssertTrue(problems.contains { $0["item"] == "broken.hpwebsite" }, "\(problems)")
        XCTAssertEqual(first["itemsWithProblems"] as? Int, problems.count)
        Corpus(path: fixture.backing).bundle("new.hpwebsite", title: "New", mtime: 9_000)
        XCTAssertTrue(eventually { ((try? self.status())?["items"] as? Int) == expected + 1 })
        XCTAssertTrue(try status()["lastChange"] is String)
        // Read-only: nothing can write it.
        XCTAssertLessThan(open(fixture.mounted(".queryfs/status"), O_WRONLY), 0)
        XCTAssertTrue(RawFiles.list(fixture.mountPoint)?.map(\.text).contains(".queryfs") == true)

        // ls and views given the mount point: the daemon's folders, equal to a scan.
        for view in ["by-name", "tag/swift", "archived"] {
            XCTAssertEqual(QueryfsBinary.run(["ls", fixture.mountPoint, view, "--long"]).stdoutText,
                           QueryfsBinary.run(["ls", fixture.backing, view, "--long"]).stdoutText, view)
        }
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.mountPoint, "tag:swift -archived"]).stdout,
                       QueryfsBinary.run(["ls", fixture.backing, "tag:swift -archived"]).stdout)
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.mountPoint, "colour=red"]).status, 2)
        // A query with a `/` names no folder of the mount: answered all the same (found from
        // outside: "no view", and a stray query/ folder; the views below would show one).
        let slashed = QueryfsBinary.run(["ls", fixture.mountPoint, "tags~rock/*"])
        XCTAssertEqual(slashed.status, 0, slashed.stderrText)
        XCTAssertFalse(slashed.stdoutText.isEmpty)
        XCTAssertEqual(slashed.stdout, QueryfsBinary.run(["ls", fixture.backing, "tags~rock/*", "--no-index"]).stdout)
        XCTAssertEqual(slashed.stdout, QueryfsBinary.run(["ls", fixture.backing, "tags~rock/*"]).stdout, "BACKING, while mounted")
        let mountedViews = Set(QueryfsBinary.run(["views", fixture.mountPoint]).stdoutText.split(separator: "\n"))
        let scannedViews = Set(QueryfsBinary.run(["views", fixture.backing]).stdoutText.split(separator: "\n"))
        XCTAssertEqual(mountedViews.subtracting(scannedViews.map { $0 }), Set(["query/tag:swift -archived\t\(QueryfsBinary.run(["ls", fixture.backing, "tag:swift -archived"]).stdoutText.split(separator: "\n").count)"]))

        for path in [fixture.mountPoint, fixture.backing] {
            let result = QueryfsBinary.run(["status", path])
            XCTAssertEqual(result.status, 0, result.stderrText)
            XCTAssertTrue(result.stdoutText.hasPrefix("mounted at: \(fixture.mountPoint)\n"), result.stdoutText)
            XCTAssertTrue(result.stdoutText.contains("\"items\": \(expected + 1)"), result.stdoutText)
        }
    }

    /// `queryfs ls BACKING` and `status BACKING` ask a mount of BACKING only
    /// when the caller or root made it: anyone may mount a fuse.queryfs
    /// naming any folder as its source, and its daemon answers what it
    /// likes. User 65534 mounts (in a mount namespace of its own, with a
    /// /dev/fuse it may open, `allow_other` so that others can read the
    /// mount); 65534's commands ask the mount (a query asked makes a query
    /// folder there), those of 65533 and root compute their own. A mount
    /// point named is read whoever made it: the caller chose that mount.
    func testAnotherUsersMountOfBackingIsNotAsked() throws {
        try XCTSkipIf(getuid() != 0, "needs root to make the private /dev/fuse and switch users")
        fixture = MountedFixture()
        let queryfs = try ReachableCopies(for: self).queryfs()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-trust")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let mount = UnprivilegedMount(queryfs: queryfs, backing: fixture.backing, mountPoint: fixture.mountPoint,
                                      option: "allow_other", scratch: scratch)
        defer { mount.stop() }
        guard mount.waitUntilMounted() else { return }
        let shell = mount.shell
        /// `queryfs ARGUMENTS` as `uid`, in the mount's namespace, with a cache folder of its own.
        func run(as uid: UInt32, _ arguments: [String]) -> QueryfsBinary.Result {
            let cache = scratch + "/cache-\(uid)"
            if mkdir(cache, 0o700) == 0 { XCTAssertEqual(chown(cache, uid, uid), 0) }
            return Program.run(["nsenter", "--target", "\(shell)", "--mount", "--",
                                "setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--",
                                "env", "XDG_CACHE_HOME=\(cache)", queryfs] + arguments)
        }
        func queryFolders() throws -> Int {
            let data = try XCTUnwrap(FileManager.default.contents(atPath: "/proc/\(shell)/root" + fixture.mounted(".queryfs/status")))
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return try XCTUnwrap(object["queryFolders"] as? Int)
        }
        let query = "tag:swift -archived"
        let expected = QueryfsBinary.run(["ls", fixture.backing, query, "--no-index"]).stdoutText
        XCTAssertFalse(expected.isEmpty)

        for uid: UInt32 in [65533, 0] {
            let listed = run(as: uid, ["ls", fixture.backing, query])
            XCTAssertEqual(listed.status, 0, "\(uid): \(listed.stderrText)")
            XCTAssertEqual(listed.stdoutText, expected, "\(uid)")
            XCTAssertEqual(try queryFolders(), 0, "\(uid) asked another user's mount")
            let summary = run(as: uid, ["status", fixture.backing])
            XCTAssertEqual(summary.status, 0, "\(uid): \(summary.stderrText)")
            XCTAssertFalse(summary.stdoutText.hasPrefix("mounted at:"), "\(uid): \(summary.stdoutText)")
            XCTAssertTrue(summary.stdoutText.contains("index:"), "\(uid): \(summary.stdoutText)")
            let named = run(as: uid, ["status", fixture.mountPoint])
            XCTAssertTrue(named.stdoutText.hasPrefix("mounted at: \(fixture.mountPoint)\n"), "\(uid): \(named.stdoutText)")
        }
        let own = run(as: 65534, ["status", fixture.backing])
        XCTAssertTrue(own.stdoutText.hasPrefix("mounted at: \(fixture.mountPoint)\n"), own.stdoutText + own.stderrText)
        let listed = run(as: 65534, ["ls", fixture.backing, query])
        XCTAssertEqual(listed.stdoutText, expected, listed.stderrText)
        XCTAssertEqual(try queryFolders(), 1, "the owner's command did not ask its mount")
    }

    /// `kernelRequests`: what the kernel asked, by kind — two readings
    /// around a step say what it cost in round trips (Benchmarks/ use it),
    /// with kernel passthrough and without (the same counting either way).
    func testTheStatusFileCountsTheKernelsRequestsByKind() throws {
        for options in [[], ["--no-passthrough"]] {
            fixture = MountedFixture()
            try fixture.mount(options)
            defer { fixture.unmount() }
            func requests() throws -> [String: Int] {
                try XCTUnwrap(try status()["kernelRequests"] as? [String: Int], "\(options)")
            }
            let before = try requests()
            XCTAssertEqual(before["INIT"], 1, "\(options)")
            let bundle = try XCTUnwrap(RawFiles.list(fixture.mounted("bundles"))?.map(\.text).first { $0.hasSuffix(".hpwebsite") })
            let payload = fixture.mounted("bundles/\(bundle)/payload.plist")
            for _ in 0..<5 { XCTAssertNotNil(FileManager.default.contents(atPath: payload)) }
            let after = try requests()
            // Five opens of one file and the status file's own, each its
            // own OPEN; nothing counted twice.
            XCTAssertEqual((after["OPEN"] ?? 0) - (before["OPEN"] ?? 0), 5 + 1, "\(options): \(before) → \(after)")
            for (kind, count) in before { XCTAssertGreaterThanOrEqual(after[kind] ?? 0, count, kind) }
        }
    }
}
