import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// SPEC §5 through a real mount: flock(1) writers, bounded waits, concurrent
/// writers, fio's own verification, and kill -9 of the daemon (issue 5).
final class CoordinationMountTests: XCTestCase {
    private var fixture: MountedFixture!

    override func setUpWithError() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("item.hpwebsite", title: "Old title", tags: ["old"], mtime: 1_000)
            corpus.bundle("other.hpwebsite", title: "Other", mtime: 2_000)
            corpus.file(Array("plain.txt".utf8), contents: Array("plain\n".utf8), mtime: 3_000)
        }
        try fixture.mount(["--lock-timeout", "1"])
    }

    override func tearDown() {
        fixture?.unmount()
        if let fixture { XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "left mounted") }
        fixture = nil
    }

    /// What the views say of item.hpwebsite: its title, whether tag/new and archived/ hold it.
    private func observedState() -> (title: String, newTag: Bool, archived: Bool) {
        let byName = RawFiles.list(fixture.mounted("by-name"))?.map { String(decoding: $0, as: UTF8.self) } ?? []
        let title = byName.first { RawFiles.linkTarget(fixture.mounted("by-name/\($0)"))
            == "../bundles/item.hpwebsite" } ?? "?"
        let newTag = (RawFiles.list(fixture.mounted("tag/new")) ?? []).count == 1
        let archived = (RawFiles.list(fixture.mounted("archived")) ?? []).count == 1
        return (String(title.dropFirst(5).dropLast(".hpwebsite".count)), newTag, archived)
    }

    /// A writer holding the exclusive lock (flock(1) on BACKING/item) rewrites
    /// the bundle in three steps with pauses; readers polling the views never
    /// see any of it until the writer lets go, and then see all of it.
    func testAWriterUnderTheLockIsNeverSeenHalfWay() throws {
        XCTAssertEqual(observedState().title, "Old title")
        let payload = fixture.backed("item.hpwebsite/payload.plist")
        func plist(_ title: String, _ tags: [String], _ archived: Bool) -> String {
            Corpus.plist(title: title, archived: archived, tags: tags).replacingOccurrences(of: "'", with: "'\\''")
        }
        // The writer says it is about to let go (a file, made before its
        // unlock): an observation made before that file exists was made under
        // the lock. (Waiting for the process to exit was not that signal: a
        // process closes its files, so drops the lock, before it can be
        // reaped, and on a loaded machine the views showed the new state
        // in between.)
        let releasing = fixture.root + "/releasing"
        let script = """
            exec 9<'\(fixture.backed("item.hpwebsite"))'; flock 9
            printf '%s' '\(plist("New title", ["old"], false))' > '\(payload)'; sleep 0.4
            printf '%s' '\(plist("New title", ["new"], false))' > '\(payload)'; sleep 0.4
            printf '%s' '\(plist("New title", ["new"], true))' > '\(payload)'; sleep 0.4
            : > '\(releasing)'; flock -u 9
            """
        let writer = Program.spawn(["sh", "-c", script], stdout: fixture.root + "/w.out", stderr: fixture.root + "/w.err")
        defer { _ = Program.wait(writer) }
        var sawMix: [String] = []
        var releasedAt: Date?
        var newAt: Date?
        while true {
            let state = observedState()
            // Judged after the observation: if the writer has not said it lets go, all of it happened under the lock.
            if releasedAt == nil, access(releasing, F_OK) == 0 { releasedAt = Date() }
            if releasedAt == nil, state != ("Old title", false, false) { sawMix.append("\(state) while the lock was held") }
            if releasedAt != nil, state == ("New title", true, true) { newAt = Date(); break }
            if let releasedAt, Date().timeIntervalSince(releasedAt) > 2 { break }
            usleep(5_000)
        }
        XCTAssertEqual(sawMix, [])
        let latency = newAt.map { $0.timeIntervalSince(releasedAt!) }
        XCTAssertNotNil(latency, "the new state never appeared")
        // The 100 ms bar is measured by `make bench` (live-bench.sh); a test on a
        // loaded CI machine only checks that the release is followed promptly.
        XCTAssertLessThan(latency ?? 99, 1, "new state visible within 1 s of the release")
    }

    /// `queryfs tag MOUNT/bundles ITEM` (the mount given as BACKING) edits
    /// the directory the mount shows, under BACKING's item lock: run beside
    /// `ln -s` edits through the views, no edit is lost, none waits out the
    /// lock, and no temp file is left (found from outside: tags lost, EBUSY
    /// after 5 s, `.payload.plist.queryfs-…` left in the bundle).
    func testEditCommandsGivenTheMountEditItsBackingUnderTheSameLock() throws {
        let start = Date()
        let links = Program.spawn(["bash", "-c", (1...8).map { i in
            "mkdir -p '\(fixture.mounted("tag/y\(i)"))' && ln -s ../../bundles/item.hpwebsite '\(fixture.mounted("tag/y\(i)/x"))'"
        }.joined(separator: " && ")], stdout: "/dev/null", stderr: fixture.root + "/links.err")
        for i in 1...8 {
            let tagged = QueryfsBinary.run(["tag", fixture.mounted("bundles"), "item.hpwebsite", "--add", "c\(i)"])
            XCTAssertEqual(tagged.status, 0, tagged.stderrText)
        }
        XCTAssertEqual(Program.wait(links, timeout: 30), 0, (try? String(contentsOfFile: fixture.root + "/links.err", encoding: .utf8)) ?? "")
        XCTAssertLessThan(Date().timeIntervalSince(start), 10, "an edit waited out a lock")
        let payload = try XCTUnwrap(RawFiles.read(fixture.backed("item.hpwebsite/payload.plist")))
        let tags = try XCTUnwrap(try PropertyListSerialization.propertyList(from: Data(payload), format: nil) as? [String: Any])["tags"] as? [String]
        XCTAssertEqual(Set(tags ?? []), Set(["old"] + (1...8).flatMap { ["y\($0)", "c\($0)"] }), "an edit was lost")
        XCTAssertEqual(RawFiles.list(fixture.backed("item.hpwebsite"))?.map(\.text).sorted(), ["payload.plist"], "a temp file was left")
        // The journal is BACKING's, and so is what undo takes back.
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.mountPoint]).status, 0)
        // A view folder is no backing directory: one line says which is.
        let refused = QueryfsBinary.run(["tag", fixture.mounted("tag/y1"), "item.hpwebsite", "--add", "z"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderrText.contains("not a backing directory: give \(fixture.backing)"), refused.stderrText)
    }

    /// flock on the mount, then writing through the mount, completes.
    func testALockHolderThroughTheMountCanWrite() {
        for target in ["bundles/plain.txt", "bundles/item.hpwebsite"] {
            let inside = target.hasSuffix(".txt") ? fixture.mounted(target) : fixture.mounted(target + "/note.txt")
            let start = Date()
            let result = Program.run(["timeout", "10", "flock", fixture.mounted(target), "sh", "-c", "echo held >> '\(inside)'"])
            XCTAssertEqual(result.status, 0, "\(target): \(result.stderrText)")
            XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        }
        XCTAssertEqual(RawFiles.read(fixture.backed("plain.txt")), Array("plain\nheld\n".utf8))
        XCTAssertEqual(RawFiles.read(fixture.backed("item.hpwebsite/note.txt")), Array("held\n".utf8))
    }

    /// The lock held in BACKING: a write through the mount fails with EBUSY
    /// after the bounded wait (--lock-timeout 1), never hangs, and loses nothing.
    func testALockHeldInBackingGivesEBUSYWithinTheBound() {
        for target in ["plain.txt", "item.hpwebsite"] {
            let inside = target.hasSuffix(".txt") ? fixture.mounted("bundles/" + target) : fixture.mounted("bundles/\(target)/note.txt")
            let start = Date()
            let result = Program.run(["timeout", "10", "flock", fixture.backed(target), "bash", "-c", "echo blocked >> '\(inside)'"])
            let elapsed = Date().timeIntervalSince(start)
            XCTAssertNotEqual(result.status, 0, target)
            XCTAssertNotEqual(result.status, 124, "\(target): hung until timeout(1) killed it")
            XCTAssertTrue(result.stderrText.contains("Device or resource busy"), result.stderrText)
            XCTAssertLessThan(elapsed, 3, target)
            XCTAssertGreaterThanOrEqual(elapsed, 0.9, target)
        }
        XCTAssertEqual(RawFiles.read(fixture.backed("plain.txt")), Array("plain\n".utf8))
    }

    /// Files open for writing are in kernel passthrough mode, whose writes
    /// never reach the daemon one by one: the item's lock is held from open
    /// to close instead. A reader takes no lock.
    func testAFileOpenForWritingHoldsItsItemsLockUntilClosed() {
        func lockIsFree(_ item: String) -> Bool {
            Program.run(["flock", "-n", fixture.backed(item), "true"]).status == 0
        }
        for (item, file) in [("item.hpwebsite", "bundles/item.hpwebsite/payload.plist"), ("plain.txt", "bundles/plain.txt")] {
            let reader = open(fixture.mounted(file), O_RDONLY)
            XCTAssertGreaterThanOrEqual(reader, 0, file)
            XCTAssertTrue(lockIsFree(item), "\(file): a reader holds the lock")
            let writer = open(fixture.mounted(file), O_WRONLY | O_APPEND)
            XCTAssertGreaterThanOrEqual(writer, 0, file)
            XCTAssertFalse(lockIsFree(item), "\(file): open for writing, yet the item's lock is free")
            close(writer)
            close(reader)
            // The kernel sends the release after close(2) returns. Free once is
            // enough: the live index then reads the changed item under a shared
            // lock of a few milliseconds, which a second probe can meet (a CI
            // run failed so, in 0.1 s).
            let deadline = Date().addingTimeInterval(2)
            var freed = false
            while !freed, Date() < deadline {
                freed = lockIsFree(item)
                if !freed { usleep(10_000) }
            }
            XCTAssertTrue(freed, "\(file): the lock outlived the close")
        }
    }

    /// Open for writing, then lock the item through the mount (`exec 3>>f;
    /// flock 3`): the mount lets go of its own hold instead of waiting on it.
    func testOpeningForWritingThenLockingThroughTheMountDoesNotHang() {
        let cases = [
            ("bundles/plain.txt", "flock 3"),
            ("bundles/item.hpwebsite/note.txt", "flock '\(fixture.mounted("bundles/item.hpwebsite"))' true"),
        ]
        for (file, lock) in cases {
            let start = Date()
            let script = "exec 3>>'\(fixture.mounted(file))' && \(lock) && echo locked >&3"
            let result = Program.run(["timeout", "10", "bash", "-c", script])
            XCTAssertEqual(result.status, 0, "\(file): \(result.stderrText)")
            XCTAssertLessThan(Date().timeIntervalSince(start), 2, file)
        }
        XCTAssertEqual(RawFiles.read(fixture.backed("plain.txt")), Array("plain\nlocked\n".utf8))
        XCTAssertEqual(RawFiles.read(fixture.backed("item.hpwebsite/note.txt")), Array("locked\n".utf8))
    }

    /// Writers through bundles/ and directly in BACKING on the same files:
    /// each file ends as one writer's complete write.
    func testConcurrentWritersNeverInterleaveWithinAWrite() {
        let size = 256 * 1024
        let files = (0..<8).map { "item.hpwebsite/race-\($0)" }
        let group = DispatchGroup()
        for (side, byte) in [(fixture.mountPoint + "/bundles", UInt8(ascii: "M")), (fixture.backing, UInt8(ascii: "B"))] {
            group.enter()
            Thread {
                let data = [UInt8](repeating: byte, count: size)
                for _ in 0..<20 {
                    for file in files { _ = RawFiles.write(side + "/" + file, data) }
                }
                group.leave()
            }.start()
        }
        group.wait()
        for file in files {
            let bytes = RawFiles.read(fixture.backed(file)) ?? []
            XCTAssertEqual(bytes.count, size, file)
            XCTAssertTrue(Set(bytes).count == 1, "\(file) mixes both writers")
        }
    }

    /// fio's own verification of data written through bundles/.
    func testFioVerifiesDataWrittenThroughTheMount() throws {
        let result = Program.run(["fio", "--name=verify", "--directory=\(fixture.mounted("bundles/item.hpwebsite"))",
                                  "--rw=randwrite", "--bs=4k", "--size=16m", "--numjobs=2", "--verify=crc32c",
                                  "--do_verify=1", "--verify_fatal=1", "--verify_state_save=0", "--ioengine=psync", "--group_reporting"])
        XCTAssertEqual(result.status, 0, "fio: \(result.stdoutText.suffix(2000)) \(result.stderrText)")
        XCTAssertFalse(result.stdoutText.contains("verify: bad"), result.stdoutText)
    }

    /// kill -9 of the daemon during a write load: every write that returned
    /// is in BACKING; after `queryfs unmount` a new mount works.
    func testKillingTheDaemonLosesNoAcknowledgedWrite() throws {
        let pid = daemonPID()
        XCTAssertNotNil(pid)
        var acknowledged: [Int] = []
        for number in 0..<2_000 {
            if number == 300, let pid { fixture.killDaemon(pid) }
            let path = fixture.mounted("bundles/item.hpwebsite/ack-\(number)")
            if RawFiles.write(path, Array("write \(number)\n".utf8)) == 0 { acknowledged.append(number) } else if number > 300 { break }
        }
        XCTAssertGreaterThanOrEqual(acknowledged.count, 300)
        for number in acknowledged {
            XCTAssertEqual(RawFiles.read(fixture.backed("item.hpwebsite/ack-\(number)")), Array("write \(number)\n".utf8), "write \(number) lost")
        }
        XCTAssertEqual(QueryfsBinary.run(["unmount", fixture.mountPoint]).status, 0)
        try fixture.mount()
        XCTAssertNotNil(RawFiles.list(fixture.mounted("by-name")))
    }

    /// The pid of the daemon serving this fixture's mount.
    private func daemonPID() -> pid_t? { fixture.daemonPID() }
}
