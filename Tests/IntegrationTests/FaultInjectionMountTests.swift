import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A storage engineer's tests (issue 30): BACKING is faultfs
/// (`Tests/Tools/faultfs.py`), which fails a chosen operation with EIO,
/// ENOSPC or EDQUOT, and queryfs is mounted on it. Under each fault, through
/// `bundles/` and through view edits:
///
/// - the caller gets the error, with its errno;
/// - no payload is half-written or lost: it is the old bytes or the new,
///   read back by Foundation's own plist parser, and the new only if the
///   caller was told so (a view edit may also leave the new bytes, if
///   `queryfs undo` takes them back);
/// - the journal stays consistent: every line parses, and undoing every
///   edit brings back every payload's first bytes;
/// - the mount keeps serving: views list, and equal a fresh reading.
///
/// Each fault must fire (faultfs counts it), so no case passes by missing it.
final class FaultInjectionMountTests: FaultMountTestCase {
    private static let errnos = ["EIO", "ENOSPC", "EDQUOT"]

    private func mount() throws {
        try makeFaultBacking { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["t"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", archived: true, tags: ["t", "u"], mtime: 4_000)
            corpus.bundle("c.hpwebsite", title: "Gamma", mtime: 3_000)
            corpus.write(corpus.path + "/c.hpwebsite/notes.md", Array("first notes\n".utf8))
            corpus.file(Array("notes.txt".utf8), contents: Array("plain\n".utf8), mtime: 1_000)
        }
        try fixture.mount(["--log", fixture.root + "/mount.log"])
    }

    // MARK: Helpers

    private func code(_ name: String) -> Int32 {
        ["EIO": EIO, "ENOSPC": ENOSPC, "EDQUOT": EDQUOT][name]!
    }

    /// What the payload file of `item` holds in BACKING (the folder under faultfs).
    private func payload(_ item: String) -> [UInt8]? { RawFiles.read(source + "/\(item)/payload.plist") }

    /// The entry of `item` in a view folder of the mount.
    private func entry(_ view: String, _ item: String) -> String? {
        (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).first { RawFiles.linkTarget(fixture.mounted("\(view)/\($0)"))?.hasSuffix("/" + item) == true }
    }

    /// Whether the armed fault fired, waiting a little: the kernel sends a
    /// RELEASE (and the mount's own close of BACKING's file) after close(2) returned.
    private func firedOnce() -> Bool {
        eventually(timeout: 2) { (try? self.faultfs!.fired()) == 1 }
    }

    /// Every view lists through the mount (no error, no hang): the mount keeps serving.
    private func assertServing(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for view in ["by-name", "by-modified", "tag", "tag/t", "archived", "unarchived", "bundles"] {
            let names = RawFiles.list(fixture.mounted(view))
            XCTAssertNotNil(names, "\(what): ls \(view): \(String(cString: strerror(errno)))", file: file, line: line)
            if view == "by-name" { XCTAssertEqual(names?.count, 4, "\(what): by-name", file: file, line: line) }
        }
    }

    private func assertEveryViewSettles(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 15), [], what, file: file, line: line)
    }

    // MARK: bundles/

    /// A payload replaced through `bundles/` the careful way, with each step
    /// failing in turn: the step's errno reaches the program, and the payload
    /// is the old bytes unless the program was told the rename happened.
    func testASaveThroughBundlesReportsEveryFaultAndKeepsThePayloadWhole() throws {
        try mount()
        // The operation faultfs fails, and the step of the save that must report it.
        let steps = [("create", "create"), ("write", "write"), ("fsync", "fsync"), ("flush", "close"), ("rename", "rename"),
                     ("fsyncdir", "fsync folder")]
        var round = 0
        for (op, step) in steps {
            for name in Self.errnos {
                round += 1
                let what = "\(op) \(name)"
                let old = try XCTUnwrap(payload("c.hpwebsite"))
                let new = Array(Corpus.plist(title: "Saved \(round)", archived: false, tags: ["saved"]).utf8)
                let glob = op == "fsyncdir" ? "c.hpwebsite" : "c.hpwebsite/.save-*"
                faultfs!.waitUntilClosed("c.hpwebsite/")
                try faultfs!.fail(op, name, path: glob)
                let failure = WriteChecks.save(new, as: fixture.mounted("bundles/c.hpwebsite/payload.plist"),
                                   temporary: fixture.mounted("bundles/c.hpwebsite/.save-\(round)"))
                XCTAssertTrue(firedOnce(), "\(what): the fault did not fire")
                try faultfs!.clear()
                XCTAssertEqual(failure?.step, step, "\(what): the step that failed (\(failure.map { "\($0.step): \(String(cString: strerror($0.errno)))" } ?? "none: the program was told it all worked"))")
                XCTAssertEqual(failure?.errno, code(name), "\(what): errno")
                let now = payload("c.hpwebsite")
                XCTAssertNotNil(WriteChecks.plist(now), "\(what): the payload does not parse")
                let renamed = failure == nil || failure?.step == "fsync folder"
                if renamed {
                    XCTAssertEqual(now, new, "\(what): told the rename happened, the payload is not the new one")
                } else {
                    XCTAssertEqual(now, old, "\(what): told the save failed, the payload changed")
                }
                XCTAssertFalse((RawFiles.list(source + "/c.hpwebsite") ?? []).map(\.text).contains(".save-\(round)"), "\(what): the new file was left")
                XCTAssertEqual(RawFiles.read(fixture.mounted("bundles/c.hpwebsite/payload.plist")), now, "\(what): the mount reads other bytes than BACKING holds")
                assertServing(what)
            }
        }
        // Faults gone, the same save works.
        XCTAssertNil(WriteChecks.save(Array(Corpus.plist(title: "Clean", archived: false, tags: []).utf8), as: fixture.mounted("bundles/c.hpwebsite/payload.plist"),
                          temporary: fixture.mounted("bundles/c.hpwebsite/.save-clean")))
        XCTAssertEqual(WriteChecks.plist(payload("c.hpwebsite"))?["webTitle"] as? String, "Clean")
        assertEveryViewSettles("after the saves")
    }

    /// Shell tools writing in place (`dd conv=fsync`, `cp`, a Python write
    /// and fsync): each fault shows as a non-zero exit naming the error; an
    /// open that fails truncates nothing; what BACKING holds is what the
    /// mount reads.
    func testInPlaceWritesByShellToolsReportTheFault() throws {
        try mount()
        let data = fixture.root + "/data"
        XCTAssertEqual(RawFiles.write(data, Array(repeating: 0x61, count: 20_000)), 0)
        let target = fixture.mounted("bundles/c.hpwebsite/notes.md")
        let python = """
            import os, sys
            fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
            os.write(fd, b"b" * 5000)
            os.fsync(fd)
            os.close(fd)
            """
        let tools: [(String, [String])] = [
            ("dd", ["dd", "if=\(data)", "of=\(target)", "bs=4096", "conv=fsync"]),
            ("cp", ["cp", data, target]),
            ("python", [FaultFS.python, "-c", python, target]),
        ]
        // open-write: an open for writing (before any truncation); flush: close(2).
        var cases: [(String, String, Int)] = []
        for (index, name) in Self.errnos.enumerated() {
            cases += [("open-write", name, index), ("write", name, index), ("fsync", name, index), ("flush", name, index)]
        }
        for (op, name, index) in cases {
            // cp does not fsync: it gets the other faults.
            let (tool, arguments) = op == "fsync" ? tools[[0, 2, 0][index]] : tools[index]
            let what = "\(tool) under \(op) \(name)"
            let before = try XCTUnwrap(RawFiles.read(source + "/c.hpwebsite/notes.md"))
            faultfs!.waitUntilClosed("c.hpwebsite/")
            // dd moves its output to descriptor 1 (dup2) and closes the one
            // open gave it, ignoring that close's result: its close(2) that
            // counts is the second.
            try faultfs!.fail(op, name, skip: op == "flush" && tool == "dd" ? 1 : 0, path: "c.hpwebsite/notes.md")
            let result = Program.run(arguments)
            XCTAssertTrue(firedOnce(), "\(what): the fault did not fire")
            try faultfs!.clear()
            XCTAssertNotEqual(result.status, 0, "\(what): exited 0, the fault unreported")
            XCTAssertTrue(result.stderrText.contains(String(cString: strerror(code(name)))), "\(what): \(result.stderrText)")
            let now = RawFiles.read(source + "/c.hpwebsite/notes.md")
            if op == "open-write" { XCTAssertEqual(now, before, "\(what): a failed open changed the file") }
            XCTAssertEqual(RawFiles.read(fixture.mounted("bundles/c.hpwebsite/notes.md")), now, "\(what): the mount reads other bytes than BACKING holds")
            assertServing(what)
        }
        XCTAssertEqual(Program.run(tools[1].1).status, 0, "cp without a fault")
        XCTAssertEqual(RawFiles.read(source + "/c.hpwebsite/notes.md"), RawFiles.read(data))
        assertEveryViewSettles("after the tools")
    }

    // MARK: View edits

    private struct EditCase {
        var op: String
        var path: String
        /// The edit must reach this operation (else it may, and then must report it).
        var mustFire: Bool
    }

    /// `ln -s`, `rm` and `mv` in views under faults at every step of the
    /// edit — its new payload beside the old (create, write, fsync, close,
    /// rename), the journal (open, write, close), a plain file's tag
    /// attribute: the edit answers the errno, the payload is whole (old, or
    /// new if undo takes it back), every journal line parses, and undoing
    /// every edit gives every file its first bytes back.
    func testViewEditsUnderFaultsReportTheErrorAndCanAllBeUndone() throws {
        try mount()
        let items = ["a.hpwebsite", "b.hpwebsite", "c.hpwebsite"]
        // The journal exists from here on (its first append is a create).
        XCTAssertEqual(symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/u/x")), 0)
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        var first: [String: [UInt8]] = [:]
        for item in items { first[item] = try XCTUnwrap(payload(item)) }
        let firstTags = WriteChecks.tagAttribute(source + "/notes.txt")

        let temporary = "*.hpwebsite/.payload.plist.queryfs-*"
        let faults = [
            EditCase(op: "create", path: temporary, mustFire: true),
            EditCase(op: "write", path: temporary, mustFire: true),
            EditCase(op: "fsync", path: temporary, mustFire: true),
            EditCase(op: "flush", path: temporary, mustFire: true),
            EditCase(op: "rename", path: temporary, mustFire: true),
            EditCase(op: "fsyncdir", path: "*.hpwebsite", mustFire: false),
            EditCase(op: "open-write", path: ".queryfs-journal", mustFire: true),
            EditCase(op: "write", path: ".queryfs-journal", mustFire: true),
            EditCase(op: "flush", path: ".queryfs-journal", mustFire: true),
            EditCase(op: "fsync", path: ".queryfs-journal", mustFire: false),
        ]
        // Each edit: what it does, and whether a payload shows it done.
        let edits: [(String, () -> Int32, ([String: Any]) -> Bool)] = [
            ("ln -s c into tag/t", { symlink("../../bundles/c.hpwebsite", self.fixture.mounted("tag/t/x")) },
             { ($0["tags"] as? [String])?.contains("t") == true }),
            ("rm a from tag/t", { unlink(self.fixture.mounted("tag/t/" + (self.entry("tag/t", "a.hpwebsite") ?? "missing"))) },
             { ($0["tags"] as? [String])?.contains("t") == false }),
            ("mv b to a new title", {
                rename(self.fixture.mounted("by-name/" + (self.entry("by-name", "b.hpwebsite") ?? "missing")), self.fixture.mounted("by-name/Retitled"))
            }, { $0["webTitle"] as? String == "Retitled" }),
        ]
        let edited = ["ln -s c into tag/t": "c.hpwebsite", "rm a from tag/t": "a.hpwebsite", "mv b to a new title": "b.hpwebsite"]
        var round = 0
        for fault in faults {
            for (what, edit, done) in edits {
                let name = Self.errnos[round % Self.errnos.count]
                round += 1
                let label = "\(what) under \(fault.op) \(name) at \(fault.path)"
                let item = edited[what]!
                let old = try XCTUnwrap(payload(item))
                faultfs!.waitUntilClosed()
                try faultfs!.fail(fault.op, name, path: fault.path)
                let result = edit() == 0 ? 0 : errno
                let fired = fault.mustFire ? (firedOnce() ? 1 : 0) : try faultfs!.fired()
                try faultfs!.clear()
                if fault.mustFire { XCTAssertEqual(fired, 1, "\(label): the fault did not fire") }
                if fired > 0 { XCTAssertEqual(result, code(name), "\(label): errno (0: the edit said it worked)") }
                let now = payload(item)
                let value = WriteChecks.plist(now)
                XCTAssertNotNil(value, "\(label): the payload does not parse")
                if let value, now != old { XCTAssertTrue(done(value), "\(label): the payload changed, but not to the edit's result") }
                if result != 0, now != old {
                    // Allowed only if the edit can be undone: checked below.
                    print("\(label): failed with \(String(cString: strerror(result))) but left the new payload")
                }
                XCTAssertEqual(WriteChecks.journalProblems(in: source), [], label)
                XCTAssertTrue(((RawFiles.list(source + "/" + item) ?? []).map(\.text)).allSatisfy { !$0.contains(".queryfs-") },
                              "\(label): a temporary file was left in the bundle")
                assertServing(label)
                // Undo everything so far: every payload is as it was first.
                let undo = QueryfsBinary.run(["undo", fixture.backing, "--since", "1h"])
                XCTAssertEqual(undo.status, 0, "\(label): undo: \(undo.stderrText)")
                var restored = false
                for other in items where payload(other) != first[other]! {
                    XCTFail("\(label): after undo, \(other) is not as it was: \(String(decoding: payload(other) ?? [], as: UTF8.self))")
                    // Put back (through faultfs, so the mount hears it) for the next case.
                    XCTAssertEqual(RawFiles.write(fixture.backed("\(other)/payload.plist"), first[other]!), 0)
                    restored = true
                }
                if restored { assertEveryViewSettles("\(label): after putting the payloads back") }
            }
        }
        // A plain file's tags are its attribute: a failed setxattr is the edit's errno.
        for name in Self.errnos {
            faultfs!.waitUntilClosed()
            try faultfs!.fail("setxattr", name, path: "notes.txt")
            let result = symlink("../../bundles/notes.txt", fixture.mounted("tag/t/x")) == 0 ? 0 : errno
            XCTAssertEqual(try faultfs!.fired(), 1, "setxattr \(name): the fault did not fire")
            try faultfs!.clear()
            XCTAssertEqual(result, code(name), "ln -s notes.txt under setxattr \(name)")
            XCTAssertEqual(WriteChecks.tagAttribute(source + "/notes.txt"), firstTags, "setxattr \(name): the attribute changed")
            assertServing("setxattr \(name)")
        }
        // Faults gone: an edit works and the mount shows it.
        XCTAssertEqual(symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/t/x")), 0)
        XCTAssertEqual((WriteChecks.plist(payload("c.hpwebsite"))?["tags"] as? [String]) ?? [], ["t"])
        assertEveryViewSettles("after the edits")
    }
}
