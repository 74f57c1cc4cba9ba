import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The persistent index: a mount keeps its catalog in an index file and a
/// new mount starts from it. Whatever happened in between — an unmount,
/// edits while unmounted, a `kill -9`, a corrupted, foreign or outdated
/// file — every view equals a fresh reading of BACKING (`--no-index`).
final class IndexMountTests: MountTestCase {
    private static let bundleCount = 60

    private var indexPath: String { fixture.root + "/cache/reading-list.index" }

    private func makeFixture() {
        fixture = MountedFixture { corpus in
            for number in 0..<Self.bundleCount {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", archived: number % 5 == 0,
                              tags: number % 3 == 0 ? ["three"] : ["other"], mtime: 1_000 + number)
            }
            corpus.file(Array("note.txt".utf8), contents: Array("plain".utf8), mtime: 900)
        }
        // Reads within the clock tick of a change are not vouched for by their stamp (ItemStamp.settleNanoseconds).
        usleep(100_000)
    }

    private func mount(_ extra: [String] = []) throws {
        try fixture.mount(["--index", indexPath, "--log", fixture.root + "/log"] + extra)
    }

    private func status() throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try XCTUnwrap(object["index"] as? [String: Any])
    }

    private var log: String { (try? String(contentsOfFile: fixture.root + "/log", encoding: .utf8)) ?? "" }

    /// Every view of the mount equals a fresh reading, at once (no settling: the mount says it is live).
    private func assertViewsFresh(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [],
                       log, file: file, line: line)
    }

    /// A mount asked to trust the index refuses it for `reason` (in the log),
    /// reads everything instead, and every view is right.
    private func assertTrustedStartRefusesTheIndex(saying reason: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try mount(["--trust-index"])
        XCTAssertTrue(log.contains(reason), log, file: file, line: line)
        assertViewsFresh(file: file, line: line)
    }

    /// The edits people and sync tools make while nothing is mounted.
    private func editWhileUnmounted() {
        let corpus = Corpus(path: fixture.backing)
        // Same size, and the old mtime put back: only ctime tells.
        let payload = fixture.backed("b1.hpwebsite/payload.plist")
        var old = stat()
        stat(payload, &old)
        corpus.write(payload, Array(Corpus.plist(title: "Item X", archived: false, tags: ["three"]).utf8))
        var times = [old.st_atim, old.st_mtim]
        utimensat(AT_FDCWD, payload, &times, 0)
        corpus.write(fixture.backed("b2.hpwebsite/payload.plist"),
                     Array(Corpus.plist(title: "Retitled offline", archived: true, tags: ["fresh"]).utf8))
        corpus.bundle("made.hpwebsite", title: "Made offline", tags: ["fresh"], mtime: 5_000)
        XCTAssertNoThrow(try FileManager.default.removeItem(atPath: fixture.backed("b3.hpwebsite")))
        rename(fixture.backed("b4.hpwebsite"), fixture.backed("renamed.hpwebsite"))
        corpus.write(fixture.backed("b5.hpwebsite/image.jpg"), Array(repeating: 7, count: 4096))
        XCTAssertEqual(Program.run(["setfattr", "-n", "user.xdg.tags", "-v", "offline", fixture.backed("note.txt")]).status, 0)
    }

    func testAnUnmountedIndexStartsTheNextMount() throws {
        makeFixture()
        try mount()
        XCTAssertEqual(try status()["note"] as? String, "written anew")
        fixture.unmount()
        var index = stat()
        XCTAssertEqual(stat(indexPath, &index), 0, "no index at \(indexPath)")
        XCTAssertEqual(index.st_mode & 0o777, 0o600, "titles are private")
        try mount()
        let second = try status()
        XCTAssertEqual(second["note"] as? String, "loaded", log)
        XCTAssertEqual(second["itemsFromIndex"] as? Int, Self.bundleCount + 1)
        XCTAssertEqual(second["itemsRead"] as? Int, 0)
        assertViewsFresh()
    }

    /// Under the system unit, systemd's `CacheDirectory=` is where the index goes.
    func testSystemdsCacheDirectoryHoldsTheIndex() throws {
        makeFixture()
        let cache = fixture.root + "/var-cache-queryfs"
        XCTAssertEqual(mkdir(cache, 0o700), 0)
        try fixture.mount(prefix: ["env", "CACHE_DIRECTORY=" + cache])
        let path = try XCTUnwrap(try status()["path"] as? String)
        XCTAssertTrue(path.hasPrefix(cache + "/"), path)
        fixture.unmount()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
    }

    func testEditsWhileUnmountedShowAtOnce() throws {
        makeFixture()
        try mount()
        fixture.unmount()
        editWhileUnmounted()
        try mount()
        let status = try status()
        XCTAssertEqual(status["reconciled"] as? Bool, true)
        // b1, b2, b5, note.txt, made, renamed read; b3 and b4 gone.
        XCTAssertEqual(status["changedWhileUnmounted"] as? Int, 8, "\(status)")
        assertViewsFresh()
        assertEveryItemHasItsOwnNode()
    }

    /// Items taken from the index and items read number their nodes from
    /// one sequence (`ItemRecord.serial`): no two entries of a view share an inode.
    private func assertEveryItemHasItsOwnNode(file: StaticString = #filePath, line: UInt = #line) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: fixture.mounted("by-name"))) ?? []
        XCTAssertGreaterThan(entries.count, Self.bundleCount / 2, file: file, line: line)
        let inodes = entries.compactMap { RawFiles.lstat(fixture.mounted("by-name/" + $0))?.st_ino }
        XCTAssertEqual(inodes.count, entries.count, file: file, line: line)
        XCTAssertEqual(Set(inodes).count, entries.count, "entries sharing a node", file: file, line: line)
    }

    func testATrustedStartReconcilesInTheBackground() throws {
        makeFixture()
        try mount()
        fixture.unmount()
        editWhileUnmounted()
        try mount(["--trust-index"])
        XCTAssertTrue(eventually(timeout: 10) { (try? self.status()["reconciled"] as? Bool) == true }, log)
        XCTAssertEqual(try status()["changedWhileUnmounted"] as? Int, 8)
        XCTAssertTrue(log.contains("index reconciled in"), log)
        assertViewsFresh()
        assertEveryItemHasItsOwnNode()
    }

    /// A trusted start places its views as the snapshot stored them (no
    /// sorting); a configured view whose query changed since, or one with a
    /// relative age, is evaluated anew; every view stays right, before the
    /// reconciliation and after it.
    func testATrustedStartPlacesTheViewsTheSnapshotStored() throws {
        makeFixture()
        let config = fixture.backed(".queryfs.toml")
        let corpus = Corpus(path: fixture.backing)
        corpus.write(config, Array("[views]\nmine = \"tag:three sort:title\"\nrecent = \"modified<30000d\"\n".utf8))
        try mount()
        fixture.unmount()
        // Six built-in views, mine, and tag folders three and other; recent has a relative age.
        try mount(["--trust-index"])
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 1 + 2, log)
        assertViewsFresh()
        fixture.unmount()

        corpus.write(config, Array("[views]\nmine = \"tag:three sort:-title\"\nrecent = \"modified<30000d\"\n".utf8))
        try mount(["--trust-index"])
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 2, log)
        XCTAssertTrue(eventually(timeout: 10) { (try? self.status()["reconciled"] as? Bool) == true }, log)
        assertViewsFresh()
        fixture.unmount()

        // Edited while unmounted: placed as stored, then the reconciliation
        // moves what changed. (The last mount evaluated mine under its new
        // query, and stored that order at once.)
        editWhileUnmounted()
        try mount(["--trust-index"])
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 1 + 2, log)
        XCTAssertTrue(eventually(timeout: 10) { (try? self.status()["reconciled"] as? Bool) == true }, log)
        assertViewsFresh()
    }

    /// A default start (stamps compared) that finds nothing changed holds
    /// exactly the snapshot's items: it places the stored views too. One
    /// item edited while unmounted, and the views are evaluated as before.
    func testADefaultStartThatFindsNothingChangedPlacesTheStoredViews() throws {
        makeFixture()
        try mount()
        fixture.unmount()
        try mount()
        XCTAssertEqual(try status()["changedWhileUnmounted"] as? Int, 0, log)
        // Six built-in views and the fixture's two tag folders.
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 2, log)
        assertViewsFresh()
        fixture.unmount()

        editWhileUnmounted()
        try mount()
        XCTAssertEqual(try status()["changedWhileUnmounted"] as? Int, 8, log)
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 0, log)
        assertViewsFresh()
    }

    /// An index the command line wrote (`queryfs ls`) holds every view's
    /// order, as a mount's snapshot does: the first mount from it places
    /// them, and so does the next command whose stat walk finds nothing changed.
    func testACommandWritesTheViewOrdersWithTheIndex() throws {
        makeFixture()
        let listed = QueryfsBinary.run(["ls", fixture.backing, "by-name", "--index", indexPath])
        XCTAssertEqual(listed.status, 0, listed.stderrText)
        XCTAssertEqual(listed.stdoutText.split(separator: "\n").count, Self.bundleCount + 1)
        try mount()
        XCTAssertEqual(try status()["itemsFromIndex"] as? Int, Self.bundleCount + 1, log)
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 2, log)
        assertViewsFresh()
    }

    /// A journal's replay drops the stored orders (positions into the
    /// snapshot's items no longer hold): the start after a killed mount
    /// evaluates every view, and stores their orders at once — not only at
    /// an unmount after a change — so that every later start places them,
    /// even if this mount is killed too.
    func testAStartThatHadToEvaluateTheViewsStoresTheirOrders() throws {
        makeFixture()
        try mount()
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed("b6.hpwebsite/payload.plist"), Array(Corpus.plist(title: "Retitled live", archived: false, tags: ["three"]).utf8))
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [])
        try killMount()
        let journaled = try XCTUnwrap(RawFiles.lstat(indexPath)?.st_ino)
        try mount()
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 0, log)
        // A snapshot replaces the file (a new inode).
        XCTAssertTrue(eventually(timeout: 10) { RawFiles.lstat(self.indexPath).map { $0.st_ino != journaled } ?? false },
                      "no snapshot written: \(log)")
        try killMount()
        try mount(["--trust-index"])
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 2, log)
        assertViewsFresh()
        fixture.unmount()
        try mount()
        XCTAssertEqual(try status()["viewsFromIndex"] as? Int, 6 + 2, log)
        assertViewsFresh()
    }

    /// A second mount of a directory another mount keeps the index of
    /// keeps none, says so, and serves every view (it asks for the lock
    /// once: a live mount holds it for as long as it runs).
    func testASecondMountOfOneDirectoryKeepsNoIndex() throws {
        makeFixture()
        try mount()
        let second = fixture.root + "/second"
        XCTAssertEqual(mkdir(second, 0o755), 0)
        let result = QueryfsBinary.run(["mount", fixture.backing, second, "--index", indexPath])
        defer { _ = QueryfsBinary.run(["unmount", second]) }
        XCTAssertEqual(result.status, 0, result.stderrText)
        XCTAssertTrue(result.stderrText.contains("kept by another mount"), result.stderrText)
        XCTAssertEqual(RawFiles.list(second + "/by-name")?.count, Self.bundleCount + 1)
        XCTAssertEqual(try status()["note"] as? String, "written anew", "the first mount still keeps it")
    }

    /// `kill -9` of the daemon, as a crash or a power cut would: no last snapshot.
    private func killMount() throws {
        let pid = try XCTUnwrap(fixture.daemonPID())
        fixture.killDaemon(pid)
        XCTAssertTrue(eventually { kill(pid, 0) != 0 })
        fixture.unmount()
    }

    /// Changes made while mounted are journaled as they are applied; a
    /// `kill -9` loses nothing the next start cannot find again.
    func testAKilledMountIsNeverTrustedWrong() throws {
        makeFixture()
        try mount()
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed("b6.hpwebsite/payload.plist"), Array(Corpus.plist(title: "Live", archived: false, tags: ["live"]).utf8))
        corpus.bundle("live.hpwebsite", title: "Made live", tags: ["live"], mtime: 6_000)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [])
        let pid = try XCTUnwrap(fixture.daemonPID())
        fixture.killDaemon(pid)
        XCTAssertTrue(eventually { kill(pid, 0) != 0 })
        fixture.unmount()
        // The journal holds the live changes; a torn record at its end is cut off.
        XCTAssertNotNil(FileManager.default.contents(atPath: indexPath))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: indexPath))
        handle.seekToEndOfFile()
        handle.write(Data([40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]))
        handle.closeFile()
        editWhileUnmounted()
        for trust in [false, true] {
            try mount(trust ? ["--trust-index"] : [])
            if trust {
                XCTAssertTrue(eventually(timeout: 10) { (try? self.status()["reconciled"] as? Bool) == true }, log)
            } else {
                XCTAssertTrue(log.contains("cut short"), log)
            }
            assertViewsFresh()
            fixture.unmount()
        }
    }

    /// A torn journal is cut off by a new snapshot: what the next mount
    /// journals is not hidden behind the torn record.
    func testChangesAfterATornJournalAreSeen() throws {
        makeFixture()
        try mount()
        fixture.unmount()
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: indexPath))
        handle.seekToEndOfFile()
        handle.write(Data([40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]))
        handle.closeFile()
        try mount()
        Corpus(path: fixture.backing).bundle("after.hpwebsite", title: "After the tear", tags: ["three"], mtime: 8_000)
        XCTAssertTrue(eventually(timeout: 5) {
            QueryfsBinary.run(["ls", fixture.backing, "tag/three", "--index", indexPath]).stdoutText.contains("After the tear")
        })
        let live = QueryfsBinary.run(["status", fixture.backing, "--index", indexPath])
        XCTAssertTrue(live.stdoutText.contains("kept current by mount"), live.stdoutText)
    }

    /// `--index` naming something that is not an index, or an item of BACKING: left alone.
    func testAnIndexPathThatIsNotOneIsLeftAlone() throws {
        makeFixture()
        let notes = fixture.root + "/notes.txt"
        XCTAssertTrue(FileManager.default.createFile(atPath: notes, contents: Data("my notes".utf8)))
        try fixture.mount(["--index", notes, "--log", fixture.root + "/log"])
        XCTAssertTrue(log.contains("not an index file"), log)
        assertViewsFresh()
        fixture.unmount()
        XCTAssertEqual(FileManager.default.contents(atPath: notes), Data("my notes".utf8))
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "by-name", "--index", notes]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: notes), Data("my notes".utf8))
        // Inside BACKING an index would be an item; a hidden name is not.
        try fixture.mount(["--index", fixture.backed("list.index"), "--log", fixture.root + "/log"])
        XCTAssertTrue(log.contains("would be an item"), log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.backed("list.index")))
        fixture.unmount()
        try fixture.mount(["--index", fixture.backed(".queryfs-index"), "--log", fixture.root + "/log"])
        fixture.unmount()
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.backed(".queryfs-index")))
        try fixture.mount(["--index", fixture.backed(".queryfs-index")])
        XCTAssertEqual(try status()["note"] as? String, "loaded")
        assertViewsFresh()
    }

    func testACorruptIndexIsRebuiltNeverTrusted() throws {
        makeFixture()
        try mount()
        fixture.unmount()
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: indexPath))
        // A title's byte flipped in the middle of the items: a checksum tells.
        bytes[bytes.count / 2] ^= 0x20
        XCTAssertTrue(FileManager.default.createFile(atPath: indexPath, contents: bytes, attributes: [.posixPermissions: 0o600]))
        editWhileUnmounted()
        try assertTrustedStartRefusesTheIndex(saying: "not used: it is corrupt")
        XCTAssertEqual(try status()["note"] as? String, "written anew")
        fixture.unmount()
        // Truncated, empty, or not an index at all.
        for damaged in [Data(bytes.prefix(bytes.count / 3)), Data(), Data("hello".utf8)] {
            XCTAssertTrue(FileManager.default.createFile(atPath: indexPath, contents: damaged, attributes: [.posixPermissions: 0o600]))
            try mount(["--trust-index"])
            assertViewsFresh()
            fixture.unmount()
        }
    }

    func testAnotherDirectorysIndexIsForeign() throws {
        makeFixture()
        let other = MountedFixture { corpus in corpus.bundle("elsewhere.hpwebsite", title: "Elsewhere", mtime: 1) }
        XCTAssertEqual(QueryfsBinary.run(["ls", other.backing, "by-name", "--index", indexPath]).status, 0)
        try assertTrustedStartRefusesTheIndex(saying: "not this directory's")
    }

    func testOtherFieldSourcesMakeTheIndexOutdated() throws {
        makeFixture()
        try mount()
        fixture.unmount()
        // The configuration now takes titles from another key: every title changes.
        Corpus(path: fixture.backing).write(fixture.backed(".queryfs.toml"), Array("[fields]\ntitle = [\"url\"]\n".utf8))
        try assertTrustedStartRefusesTheIndex(saying: "outdated")
    }

    /// `queryfs ls BACKING` answers from the index a live mount keeps
    /// current; without a mount it compares stamps, so offline edits show.
    func testCommandsAnswerFromTheIndex() throws {
        makeFixture()
        try mount()
        let live = QueryfsBinary.run(["status", fixture.backing, "--index", indexPath])
        XCTAssertTrue(live.stdoutText.contains("kept current by mount"), live.stdoutText + live.stderrText)
        Corpus(path: fixture.backing).bundle("during.hpwebsite", title: "Made while mounted", tags: ["three"], mtime: 7_000)
        XCTAssertTrue(eventually(timeout: 5) {
            QueryfsBinary.run(["ls", fixture.backing, "tag/three", "--index", indexPath]).stdoutText.contains("Made while mounted")
        })
        fixture.unmount()
        editWhileUnmounted()
        for view in ["by-name", "tag/three", "tag/fresh", "tag/offline", "archived"] {
            XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, view, "--index", indexPath]).stdoutText,
                           QueryfsBinary.run(["ls", fixture.backing, view, "--no-index"]).stdoutText, view)
        }
        let offline = QueryfsBinary.run(["status", fixture.backing, "--index", indexPath])
        XCTAssertTrue(offline.stdoutText.contains("stamps compared"), offline.stdoutText)
    }

    /// Without `--trust-index` or a mount, `queryfs ls BACKING VIEW` answers
    /// from the view's stored order only when a stat walk finds every item
    /// as indexed (IndexedCatalog.storedView). Each kind of offline edit,
    /// alone after a fresh snapshot, must send it back to reading what changed.
    func testAStoredViewAnswersAnUntrustedCommandOnlyWhileNothingChanged() throws {
        makeFixture()
        let corpus = Corpus(path: fixture.backing)
        let edits: [(String, () throws -> Void)] = [
            ("nothing", {}),
            ("a payload rewritten at its old size and mtime", {
                let payload = self.fixture.backed("b1.hpwebsite/payload.plist")
                var old = stat()
                stat(payload, &old)
                corpus.write(payload, Array(Corpus.plist(title: "Item Y", archived: false, tags: ["three"]).utf8))
                var times = [old.st_atim, old.st_mtim]
                utimensat(AT_FDCWD, payload, &times, 0)
            }),
            ("a bundle made", { corpus.bundle("made.hpwebsite", title: "Made offline", tags: ["fresh"], mtime: 5_000) }),
            ("a bundle removed", { XCTAssertNoThrow(try FileManager.default.removeItem(atPath: self.fixture.backed("b3.hpwebsite"))) }),
            ("a bundle renamed", { rename(self.fixture.backed("b4.hpwebsite"), self.fixture.backed("renamed.hpwebsite")) }),
            ("a file added inside a bundle", { corpus.write(self.fixture.backed("b5.hpwebsite/image.jpg"), Array(repeating: 7, count: 4096)) }),
            ("a tag attribute set", {
                XCTAssertEqual(Program.run(["setfattr", "-n", "user.xdg.tags", "-v", "offline", self.fixture.backed("note.txt")]).status, 0)
            }),
        ]
        for (edit, apply) in edits {
            try mount()
            fixture.unmount()
            try apply()
            for view in ["by-name", "by-modified", "archived", "tag/three", "tag/fresh", "tag/offline"] {
                // A tag no item has yet is no view on either side: the same refusal.
                let answered = QueryfsBinary.run(["ls", "--long", fixture.backing, view, "--index", indexPath])
                let read = QueryfsBinary.run(["ls", "--long", fixture.backing, view, "--no-index"])
                XCTAssertEqual(answered.status, read.status, "\(edit): \(view): " + answered.stderrText)
                XCTAssertEqual(answered.stdoutText, read.stdoutText, "\(edit): \(view)")
            }
        }
    }

    /// `queryfs ls BACKING VIEW --trust-index` after an unmount reads the
    /// view's stored order and only its members (IndexFile.readView): the
    /// same entries and targets as reading BACKING whole, for built-in and
    /// configured views and nested tag folders; under other ignore patterns
    /// or a changed configured view, the whole index answers instead.
    func testATrustedCommandReadsAStoredViewAsTheMountListedIt() throws {
        makeFixture()
        let config = fixture.backed(".queryfs.toml")
        let corpus = Corpus(path: fixture.backing)
        corpus.bundle("nested.hpwebsite", title: "Nested tag", tags: ["lang/swift", "three"], mtime: 6_000)
        corpus.write(config, Array("[views]\nmine = \"tag:three sort:title\"\n".utf8))
        usleep(100_000)
        try mount()
        fixture.unmount()
        let views = ["by-name", "by-modified", "by-created", "unarchived", "archived", "mine", "tag/three", "tag/other",
                     "tag/lang", "tag/lang/swift", "tag:three -archived"]
        func assertSame(_ message: String, file: StaticString = #filePath, line: UInt = #line) {
            for view in views {
                let trusted = QueryfsBinary.run(["ls", "--long", fixture.backing, view, "--index", indexPath, "--trust-index"])
                let whole = QueryfsBinary.run(["ls", "--long", fixture.backing, view, "--no-index"])
                XCTAssertEqual(trusted.status, 0, trusted.stderrText, file: file, line: line)
                XCTAssertFalse(trusted.stdoutText.isEmpty, "\(message): \(view)", file: file, line: line)
                XCTAssertEqual(trusted.stdoutText, whole.stdoutText, "\(message): \(view)", file: file, line: line)
            }
        }
        assertSame("as stored")
        corpus.write(config, Array("ignore = [\"b1*\"]\n[views]\nmine = \"tag:three sort:-title\"\n".utf8))
        assertSame("ignore patterns and a view changed since")
        XCTAssertFalse(QueryfsBinary.run(["ls", fixture.backing, "by-name", "--index", indexPath, "--trust-index"]).stdoutText
            .contains(" Item 1.hpwebsite"), "an ignored item listed from the stored order")
    }

    /// `queryfs ls BACKING` with BACKING mounted under its own configuration
    /// lists the mount's folder (a query asked there makes a query folder,
    /// which reading the index never does); under another `--config` the
    /// mount's views are not BACKING's, and the command computes its own.
    func testLsOfAMountedBackingAsksTheMountWhenItsViewsAreBackings() throws {
        makeFixture()
        try mount()
        let query = "tag:three -archived"
        let asked = QueryfsBinary.run(["ls", fixture.backing, query])
        XCTAssertEqual(asked.status, 0, asked.stderrText)
        XCTAssertEqual(asked.stdoutText, QueryfsBinary.run(["ls", fixture.backing, query, "--no-index"]).stdoutText)
        XCTAssertEqual(try queryFolderCount(), 1, "the command did not ask the mount")
        for escaping in ["tag/../bundles", "./bundles", "tag/./three/.."] {
            XCTAssertFalse(QueryfsBinary.run(["ls", fixture.backing, escaping]).stdoutText.contains("b1.hpwebsite"), escaping)
        }
        Corpus(path: fixture.backing).bundle("fresh.hpwebsite", title: "Fresh one", tags: ["three"], mtime: 9_000)
        XCTAssertTrue(eventually(timeout: 5) {
            QueryfsBinary.run(["ls", fixture.backing, "tag/three"]).stdoutText.contains("Fresh one")
        })
        fixture.unmount()

        let other = fixture.root + "/other.toml"
        Corpus(path: fixture.backing).write(other, Array("[views]\nmine = \"tag:three sort:title\"\n".utf8))
        try mount(["--config", other])
        let computed = QueryfsBinary.run(["ls", fixture.backing, query])
        XCTAssertEqual(computed.status, 0, computed.stderrText)
        XCTAssertEqual(computed.stdoutText, QueryfsBinary.run(["ls", fixture.backing, query, "--no-index"]).stdoutText)
        XCTAssertTrue(computed.stdoutText.contains("Fresh one"), computed.stdoutText)
        XCTAssertEqual(try queryFolderCount(), 0, "a mount with another configuration was asked")
    }

    private func queryFolderCount() throws -> Int {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try XCTUnwrap(object["queryFolders"] as? Int)
    }
}
