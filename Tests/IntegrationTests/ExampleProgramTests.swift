import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The library's sample program (`examples/live-list`) and `queryfs watch`,
/// both built on `import QueryFS`, run as users run them against a real
/// folder: changes in BACKING reach them, edits through them reach BACKING.
final class ExampleProgramTests: XCTestCase {
    /// The example's output, read as it grows.
    private final class Output {
        let path: String
        init(_ path: String) { self.path = path }
        var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        /// Waits for a line holding `fragment` after `offset` characters of output.
        func waitFor(_ fragment: String, after offset: Int = 0, timeout: Double = 10) -> Bool {
            eventually(timeout: timeout) { text.dropFirst(offset).contains(fragment) }
        }
    }

    /// The names of the threads of process `pid`.
    private static func threadNames(_ pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    private func sibling(_ name: String) -> String {
        (QueryfsBinary.path as NSString).deletingLastPathComponent + "/" + name
    }

    /// A folder holding the first `count` of Bravo, Delta and Foxtrot, removed when the test ends.
    private func backing(withBundles count: Int) -> (path: String, corpus: Corpus) {
        let backing = makeTemporaryDirectory(prefix: "queryfs-example")
        addTeardownBlock { try? FileManager.default.removeItem(atPath: backing) }
        let corpus = Corpus(path: backing)
        for (name, title, mtime) in [("b", "Bravo", 2_000), ("d", "Delta", 4_000), ("f", "Foxtrot", 6_000)].prefix(count) {
            corpus.bundle(name + ".hpwebsite", title: title, mtime: mtime)
        }
        return (backing, corpus)
    }

    func testTheLiveListFollowsTheFolderAndEditsTheSelectedItem() throws {
        let (backing, corpus) = backing(withBundles: 3)

        let program = Process()
        program.executableURL = URL(fileURLWithPath: sibling("queryfs-live-list"))
        program.arguments = [backing, "by-name"]
        let input = Pipe()
        let output = Output(backing + "-out")
        XCTAssertTrue(FileManager.default.createFile(atPath: output.path, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: output.path) }
        program.standardInput = input
        program.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output.path))
        try program.run()
        defer { if program.isRunning { program.terminate() } }
        func send(_ command: String) { input.fileHandleForWriting.write(Data((command + "\n").utf8)) }

        XCTAssertTrue(output.waitFor("list: Bravo | Delta | Foxtrot"), output.text)
        XCTAssertTrue(output.text.contains("insert 0 Bravo"), "the first change inserts the whole view")

        var seen = output.text.count
        corpus.bundle("a.hpwebsite", title: "Alpha", mtime: 1_000)
        XCTAssertTrue(output.waitFor("insert 0 Alpha", after: seen), output.text)
        XCTAssertTrue(output.waitFor("list: Alpha | Bravo | Delta | Foxtrot", after: seen), output.text)

        seen = output.text.count
        corpus.bundle("b.hpwebsite", title: "Zulu", mtime: 2_000)
        XCTAssertTrue(output.waitFor("move 1 → 3 Zulu", after: seen), output.text)

        seen = output.text.count
        try FileManager.default.removeItem(atPath: backing + "/d.hpwebsite")
        XCTAssertTrue(output.waitFor("delete 1 Delta", after: seen), output.text)
        XCTAssertTrue(output.waitFor("list: Alpha | Foxtrot | Zulu", after: seen), output.text)

        // Edits through the program's own commands, back as changes.
        seen = output.text.count
        send("archive 0")
        XCTAssertTrue(output.waitFor("update 0 Alpha", after: seen), output.text)
        XCTAssertTrue(output.waitFor("list: ▪ Alpha | Foxtrot | Zulu", after: seen), output.text)
        seen = output.text.count
        send("tag 1 starred")
        XCTAssertTrue(output.waitFor("Foxtrot  #starred", after: seen), output.text)
        let alpha = WriteChecks.plist(Array(FileManager.default.contents(atPath: backing + "/a.hpwebsite/payload.plist") ?? Data()))
        XCTAssertEqual(alpha?["isArchived"] as? Bool, true)
        let foxtrot = WriteChecks.plist(Array(FileManager.default.contents(atPath: backing + "/f.hpwebsite/payload.plist") ?? Data()))
        XCTAssertEqual(foxtrot?["tags"] as? [String], ["starred"])
        send("tag 9 nothing-there")
        XCTAssertTrue(output.waitFor("error: no item 9"), output.text)

        send("quit")
        XCTAssertTrue(eventually(timeout: 5) { !program.isRunning }, "quit ends the program")
        XCTAssertEqual(program.terminationStatus, 0)
    }

    /// In a terminal the list is drawn, and redrawn as the folder changes,
    /// before any key is pressed (found from outside: the key loop held the
    /// screen's actor, and "0 items" stayed until `q`). The terminal is a
    /// pseudo-terminal python3's pty module makes.
    func testTheLiveListDrawsInATerminalBeforeAnyKey() throws {
        let backing = backing(withBundles: 2).path
        let script = """
            import os, pty, select, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], [sys.argv[1], sys.argv[2], "by-name"])
            seen = b""
            def drain(seconds):
                global seen
                end = time.time() + seconds
                while time.time() < end:
                    if select.select([fd], [], [], 0.05)[0]:
                        try: seen += os.read(fd, 65536)
                        except OSError: return
            drain(2)
            print("before a change:", b"2 items" in seen)
            open(sys.argv[2] + "/new.txt", "w").write("new")
            drain(2)
            print("after a change:", b"3 items" in seen)
            os.write(fd, b"q")
            drain(1)
            os.waitpid(pid, 0)
            """
        let result = Program.run(["python3", "-c", script, sibling("queryfs-live-list"), backing])
        XCTAssertEqual(result.stdoutText, "before a change: True\nafter a change: True\n", result.stderrText)
    }

    func testTheExampleRefusesAMissingFolderInOneLine() {
        let result = Program.run([sibling("queryfs-live-list"), "/nonexistent/queryfs-example"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderrText)
        XCTAssertTrue(result.stderrText.contains("No such file or directory"), result.stderrText)
    }

    /// A folder the user may not read is said to be one, once: another
    /// user's private mount was "cannot read the configuration", its path twice.
    func testTheExampleSaysAFolderItMayNotReadInOneLine() throws {
        let copies = ReachableCopies(for: self)
        let program = try copies.copy(sibling("queryfs-live-list"))
        let closed = copies.folder + "/closed"
        XCTAssertEqual(mkdir(closed, 0o700), 0)
        let result = Program.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", program, closed])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderrLines, ["queryfs-live-list: open \(closed): Permission denied"], result.stderrText)
    }

    /// `queryfs watch BACKING VIEW` prints each change as a JSON line (it is
    /// the library's change sequence, printed), and refuses a bad view in one line.
    func testWatchPrintsEachChangeOfAViewWithoutAMount() throws {
        let backing = makeTemporaryDirectory(prefix: "queryfs-watch")
        defer { try? FileManager.default.removeItem(atPath: backing) }
        let corpus = Corpus(path: backing)
        corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["x"], mtime: 1_000)
        let output = Output(backing + "-out")
        defer { try? FileManager.default.removeItem(atPath: output.path) }
        let pid = Program.spawn([QueryfsBinary.path, "watch", backing, "tag:x sort:title"], stdout: output.path, stderr: output.path)
        XCTAssertGreaterThan(pid, 0)
        defer { kill(pid, SIGTERM); _ = Program.wait(pid) }
        // Following once its watcher thread runs (started after the first
        // listing was read): a new bundle is then a change, not part of that listing.
        XCTAssertTrue(eventually { Self.threadNames(pid).contains("queryfs-watcher") }, "watch never started following")
        corpus.bundle("b.hpwebsite", title: "Bravo", tags: ["x"], mtime: 2_000)
        XCTAssertTrue(output.waitFor("\"insertions\""), output.text)
        let line = output.text.split(separator: "\n").first { $0.contains("insertions") }.map(String.init) ?? ""
        let change = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        XCTAssertEqual(change?["view"] as? String, "query/tag:x sort:title", line)
        let insertions = change?["insertions"] as? [[String: Any]]
        XCTAssertEqual(insertions?.compactMap { $0["index"] as? Int }, [1], line)

        let bad = QueryfsBinary.run(["watch", backing, "sort:nonsense("])
        XCTAssertEqual(bad.status, 2, "a bad view is a usage error")
        XCTAssertEqual(bad.stderrLines.count, 1, bad.stderrText)
    }
}
