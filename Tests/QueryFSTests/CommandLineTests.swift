import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
import CSystemShims

/// `queryfs ls`, `views` and `status` end to end (SPEC §4, issue 2): the
/// built binary run as a user runs it.
final class CommandLineTests: FixtureTestCase {
    struct Run {
        var status: Int32
        var stdout: [UInt8]
        var stderr: [UInt8]
        var output: String { String(decoding: stdout, as: UTF8.self) }
        var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        var errorLines: [String] { String(decoding: stderr, as: UTF8.self).split(separator: "\n").map(String.init) }
    }

    /// `QUERYFS_BIN`; else the `queryfs` built beside this test bundle (the same
    /// build); else `<package>/.build/debug/queryfs`, found from this file's path.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["QUERYFS_BIN"], !path.isEmpty { return path }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
            let sibling = directory.appendingPathComponent("queryfs").path
            if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug/queryfs").path
    }()

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            XCTFail("no queryfs binary at \(Self.binary): run `swift build` first, or set QUERYFS_BIN")
            throw CocoaError(.fileNoSuchFile)
        }
    }

    /// Runs `queryfs ARGUMENTS…` to completion, its output captured in files
    /// beside (not inside) the backing directory.
    func run(_ arguments: [String]) throws -> Run {
        let outPath = backing + ".stdout", errPath = backing + ".stderr"
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: outPath, contents: nil))
        XCTAssertTrue(FileManager.default.createFile(atPath: errPath, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
        process.waitUntilExit()
        let out = try Data(contentsOf: URL(fileURLWithPath: outPath))
        let err = try Data(contentsOf: URL(fileURLWithPath: errPath))
        return Run(status: process.terminationStatus, stdout: [UInt8](out), stderr: [UInt8](err))
    }

    /// Asserts the one-line failure: exit 2, one `queryfs: ` line on stderr, nothing on stdout.
    func assertFailure(_ arguments: [String], mentions: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try run(arguments)
        XCTAssertEqual(result.status, 2, "\(arguments)", file: file, line: line)
        XCTAssertEqual(result.stdout, [], "\(arguments): stdout \(result.output)", file: file, line: line)
        XCTAssertEqual(result.errorLines.count, 1, "\(arguments): \(result.errorLines)", file: file, line: line)
        XCTAssertTrue(result.errorLines.first?.hasPrefix("queryfs: ") ?? false, "\(result.errorLines)", file: file, line: line)
        XCTAssertEqual(result.stderr.last, 0x0A, "ends with a newline", file: file, line: line)
        if let mentions {
            XCTAssertTrue(result.errorLines.first?.contains(mentions) ?? false, "\(result.errorLines) mentions \(mentions)", file: file, line: line)
        }
    }

    private func makeReadingList() {
        hipstapaper("A1.hpwebsite", title: "Item 10", tags: ["rock/metal", "Work"], mtime: 1000)
        hipstapaper("B2.hpwebsite", title: "item 07", archived: true, tags: ["rock∕metal"], mtime: 3000)
        hipstapaper("C3.hpwebsite", title: "Item 7", tags: ["work"], mtime: 2000)
        hipstapaper("D4.hpwebsite", title: "Item 2", mtime: 4000)
        writeFile("notes.txt", "plain")
        setMTime(path("notes.txt"), seconds: 500)
    }

    // MARK: ls

    func testLsPrintsTheEntriesInOrder() throws {
        makeReadingList()
        let result = try run(["ls", backing, "by-name"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stderr, [])
        XCTAssertEqual(result.lines, [
            "0001 Item 2.hpwebsite", "0002 Item 7.hpwebsite", "0003 item 07.hpwebsite", "0004 Item 10.hpwebsite", "0005 notes.txt",
        ])
        XCTAssertEqual(try run(["ls", backing, "by-modified"]).lines, [
            "0001 Item 2.hpwebsite", "0002 item 07.hpwebsite", "0003 Item 7.hpwebsite", "0004 Item 10.hpwebsite", "0005 notes.txt",
        ])
        XCTAssertEqual(try run(["ls", backing, "unarchived"]).lines, [
            "0001 Item 2.hpwebsite", "0002 Item 7.hpwebsite", "0003 Item 10.hpwebsite", "0004 notes.txt",
        ])
        XCTAssertEqual(try run(["ls", backing, "archived/"]).lines, ["0001 item 07.hpwebsite"])
        XCTAssertEqual(try run(["ls", backing, "tag/rock∕metal"]).lines, ["0001 item 07.hpwebsite"], "the division slash is part of a name")
        XCTAssertEqual(try run(["ls", backing, "tag/rock/metal"]).lines, ["0001 Item 10.hpwebsite"], "a nested tag's folder")
        XCTAssertEqual(try run(["ls", backing, "tag/rock"]).lines, ["0001 Item 10.hpwebsite"], "and the folder above it")
        XCTAssertEqual(try run(["ls", backing, "tag/Work"]).lines, ["0001 Item 10.hpwebsite"])
        XCTAssertEqual(try run(["ls", backing, "tag/work"]).lines, ["0001 Item 7.hpwebsite"])
        // Every view agrees with the engine.
        let catalog = try catalog()
        for view in catalog.views {
            XCTAssertEqual(try run(["ls", backing, view.pathString]).lines, catalog.entries(of: view).map(\.nameString), view.pathString)
        }
    }

    /// A tag folder listed from the index's stored order is named as the
    /// configuration says (found from outside: `desktop-entries = ["tag/*"]`
    /// gave `.desktop` names the first time, symlink names after).
    func testDesktopEntryNamesHoldWhenTheIndexAnswers() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["t"])
        writeFile(".queryfs.toml", "desktop-entries = [\"tag/*\"]\n")
        // The index where commands keep it by default (`--index` reads views another way).
        let cache = backing + ".cache"
        let saved = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"]
        setenv("XDG_CACHE_HOME", cache, 1)
        defer {
            if let saved { setenv("XDG_CACHE_HOME", saved, 1) } else { unsetenv("XDG_CACHE_HOME") }
            try? FileManager.default.removeItem(atPath: cache)
        }
        // `views` evaluates every view: the index it writes stores every tag folder's order.
        XCTAssertEqual(try run(["views", backing]).status, 0)
        for extra in [[], [], ["--trust-index"]] {
            let listed = try run(["ls", backing, "tag/t"] + extra)
            XCTAssertEqual(listed.status, 0, listed.errorLines.joined())
            XCTAssertEqual(listed.lines, ["0001 Alpha.desktop"], "\(extra)")
        }
    }

    /// A saved query is a view without a mount too: `views` lists it as
    /// `query/Q`, and `ls BACKING query/Q` lists it (found from outside:
    /// neither did; `ls` said "unknown field 'query'").
    func testSavedQueriesAreViewsWithoutAMount() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["swift"])
        hipstapaper("b.b", title: "Beta")
        writeFile(".queryfs.toml", "queries = [\"tag:swift\"]\n")
        let views = try run(["views", backing, "--no-index"])
        XCTAssertEqual(views.status, 0, views.errorLines.joined())
        XCTAssertTrue(views.lines.contains("query/tag:swift\t1"), views.output)
        let listed = try run(["ls", backing, "query/tag:swift", "--no-index"])
        XCTAssertEqual(listed.status, 0, listed.errorLines.joined())
        XCTAssertEqual(listed.lines, ["0001 Alpha.b"])
        // `query/Q` is the query Q even where a configured view is named Q.
        writeFile(".queryfs.toml", "queries = [\"tag:swift\"]\n[views]\n\"tag:swift\" = \"title:Beta\"\n")
        XCTAssertEqual(try run(["ls", backing, "query/tag:swift", "--no-index"]).lines, ["0001 Alpha.b"])
        XCTAssertEqual(try run(["ls", backing, "tag:swift", "--no-index"]).lines, ["0001 Beta.b"], "the view by its own path")
    }

    func testLsLongAddsATabAndTheTarget() throws {
        makeReadingList()
        XCTAssertEqual(try run(["ls", "--long", backing, "by-name"]).lines, [
            "0001 Item 2.hpwebsite\t../bundles/D4.hpwebsite",
            "0002 Item 7.hpwebsite\t../bundles/C3.hpwebsite",
            "0003 item 07.hpwebsite\t../bundles/B2.hpwebsite",
            "0004 Item 10.hpwebsite\t../bundles/A1.hpwebsite",
            "0005 notes.txt\t../bundles/notes.txt",
        ])
        XCTAssertEqual(try run(["ls", backing, "tag/rock∕metal", "--long"]).lines, [
            "0001 item 07.hpwebsite\t../../bundles/B2.hpwebsite",
        ])
        XCTAssertEqual(try run(["ls", backing, "tag/rock/metal", "--long"]).lines, [
            "0001 Item 10.hpwebsite\t../../../bundles/A1.hpwebsite",
        ], "three levels down")
        XCTAssertEqual(try run(["ls", "--long", "--absolute-links", "/mnt/reading", backing, "tag/work"]).lines, [
            "0001 Item 7.hpwebsite\t/mnt/reading/bundles/C3.hpwebsite",
        ])
    }

    func testLsWritesNamesThatAreNotUTF8ByteForByte() throws {
        let name: [UInt8] = Array("odd".utf8) + [0xFF, 0xFE] + Array(".hpwebsite".utf8)
        makeDirectory(named: name)
        writeFile(named: name + Array("/payload.json".utf8), Array("{\"title\": \"Odd/one\\tout\"}".utf8))
        let result = try run(["ls", "--long", backing, "by-name"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, Array("0001 Odd∕one out.hpwebsite\t../bundles/".utf8) + name + [0x0A])
    }

    /// A named index's own folder is made, but no folders above it: a
    /// mistyped path is one line and exit 2, and nothing appears (found from
    /// outside: root made /nonexist/dir).
    func testAnIndexIsKeptOnlyWhereItsFoldersFolderExists() throws {
        hipstapaper("a.hpwebsite", title: "A")
        let result = try run(["ls", backing, "by-name", "--index", path("no/such/x.index")])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(String(decoding: result.stderr, as: UTF8.self).contains("there is no folder \(path("no")) to keep it in"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("no")))
        let made = try run(["ls", backing, "by-name", "--index", path(".made/x.index")])
        XCTAssertEqual(made.status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path(".made/x.index")), "its own folder is made")
    }

    /// `-0`: an item named with a newline stays one entry for `xargs -0`.
    func testLsNullEndsEachEntryWithANul() throws {
        writeFile("two\nlines.txt", "plain")
        writeFile("one.txt", "plain")
        let result = try run(["ls", "-0", "--long", backing, "by-name"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, Array("0001 one.txt\t../bundles/one.txt\u{0}0002 two lines.txt\t../bundles/two\nlines.txt\u{0}".utf8))
        XCTAssertEqual(try run(["ls", "--null", backing, "by-name"]).stdout, Array("0001 one.txt\u{0}0002 two lines.txt\u{0}".utf8))
    }

    func testLsOfAnEmptyViewPrintsNothing() throws {
        hipstapaper("a.hpwebsite", title: "A")
        let result = try run(["ls", backing, "archived"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, [])
        XCTAssertEqual(result.stderr, [])
        // An empty backing directory: every built-in view exists, empty.
        removeTree(path("a.hpwebsite"))
        for view in ["by-name", "by-modified", "by-created", "unarchived", "archived"] {
            let empty = try run(["ls", backing, view])
            XCTAssertEqual(empty.status, 0, view)
            XCTAssertEqual(empty.stdout, [], view)
        }
    }

    func testLsShowsItemsWithBrokenPayloads() throws {
        hipstapaper("good.hpwebsite", title: "Good")
        bundle("broken.hpwebsite", file: "payload.plist", contents: Array("<dict><key>webTitle".utf8))
        let result = try run(["ls", backing, "by-name"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.lines, ["0001 broken.hpwebsite", "0002 Good.hpwebsite"])
    }

    // MARK: views

    func testViewsListsEveryViewWithItsCount() throws {
        makeReadingList()
        let result = try run(["views", backing])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.lines, [
            "by-name\t5", "by-modified\t5", "by-created\t5", "unarchived\t4", "archived\t1", "conflicts\t0",
            "tag/Work\t1", "tag/rock\t1", "tag/rock/metal\t1", "tag/rock∕metal\t1", "tag/work\t1",
        ])
    }

    /// `.queryfs.toml` beside the bundles: configured views (nested too) in
    /// `views` and `ls`, field aliases, ignore patterns; `--config` instead;
    /// a broken file is one line with file:line:column and exit 2.
    func testTheConfigurationFileAddsViewsAliasesAndIgnores() throws {
        makeReadingList()
        _ = writeFile("scratch.tmp", "not an item")
        bundle("k.hpwebsite", plistBody: "<dict><key>headline</key><string>Keyed</string><key>keywords</key><array><string>work</string></array></dict>")
        _ = writeFile(".queryfs.toml", """
            ignore = ["*.tmp"]
            [fields]
            title = ["headline", "title", "webTitle"]
            tags = ["tags", "keywords"]
            [views]
            "lower/work" = "tag:work sort:title"
            metal = "tag:rock/metal"
            """)
        let views = try run(["views", backing])
        XCTAssertEqual(views.status, 0)
        XCTAssertTrue(views.lines.contains("lower/work\t2"), "\(views.lines)")
        XCTAssertTrue(views.lines.contains("metal\t1"), "\(views.lines)")  // the tag as written, not its folder name
        XCTAssertTrue(views.lines.contains("by-name\t6"), "ignored file counted: \(views.lines)")
        XCTAssertTrue(try run(["ls", backing, "lower/work"]).lines.contains { $0.hasSuffix(" Keyed.hpwebsite") })

        _ = writeFile("other.toml", "[views]\nx = \"tag:a colour=red\"\n")
        let broken = try run(["ls", backing, "by-name", "--config", path("other.toml")])
        XCTAssertEqual(broken.status, 2)
        XCTAssertEqual(broken.errorLines.count, 1)
        XCTAssertTrue(broken.errorLines.first?.hasPrefix("queryfs: \(path("other.toml")):2:12: view 'x': unknown field 'colour'") == true,
                      "\(broken.errorLines)")
    }

    func testViewsOfAnEmptyBackingDirectory() throws {
        XCTAssertEqual(try run(["views", backing]).lines,
                       ["by-name\t0", "by-modified\t0", "by-created\t0", "unarchived\t0", "archived\t0", "conflicts\t0"])
    }

    // MARK: status

    func testStatusSummarizesAndNamesEveryProblem() throws {
        makeReadingList()
        bundle("broken.hpwebsite", file: "payload.json", contents: Array("{\"title\": ".utf8))
        makeDirectory("bare.hpwebsite")
        bundle("typed.hpwebsite", plistBody: "<dict><key>title</key><integer>5</integer></dict>")
        let result = try run(["status", backing])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stderr, [])
        let lines = result.lines
        XCTAssertTrue(lines.contains("items: 8 (7 bundles, 1 plain file)"), "\(lines)")
        XCTAssertTrue(lines.contains("archived: 1, unarchived: 7"), "\(lines)")
        XCTAssertTrue(lines.contains("tags: 5"), "tag folders, nested ones too: \(lines)")
        XCTAssertTrue(lines.contains("payload problems: 3 items"), "\(lines)")
        let problems = lines.filter { $0.hasPrefix("  ") }
        XCTAssertEqual(problems.count, 3, "\(lines)")
        XCTAssertTrue(problems[0].hasPrefix("  bare.hpwebsite: "), problems[0])
        XCTAssertTrue(problems[1].hasPrefix("  broken.hpwebsite: payload.json"), problems[1])
        XCTAssertTrue(problems[2].hasPrefix("  typed.hpwebsite: payload.plist"), problems[2])
    }

    func testStatusOfAHealthyDirectoryListsNoProblems() throws {
        makeReadingList()
        let lines = try run(["status", backing]).lines
        XCTAssertTrue(lines.contains("payload problems: 0 items"), "\(lines)")
        XCTAssertEqual(lines.filter { $0.hasPrefix("  ") }, [])
    }

    // MARK: Errors: one line, exit 2

    func testAnUnknownViewIsOneLineAndExitStatus2() throws {
        makeReadingList()
        try assertFailure(["ls", backing, "by-title"], mentions: "by-title")
        try assertFailure(["ls", backing, "tag/nobody"], mentions: "the tag 'nobody'")
        try assertFailure(["ls", backing, "tag/rock/nothing"])
        try assertFailure(["ls", backing, "tag"])
        try assertFailure(["ls", backing, "bundles"])
        // Found from outside: an empty view (a script's unset variable)
        // listed every item, and a query starting with '-' printed the help, both with status 0.
        try assertFailure(["ls", backing, ""], mentions: "the view is empty")
        try assertFailure(["ls", backing, " "], mentions: "the view is empty")
        try assertFailure(["watch", backing, ""], mentions: "the view is empty")
        try assertFailure(["ls", backing, "-archived"], mentions: "queryfs ls BACKING -- -archived")
        XCTAssertEqual(try run(["ls", backing, "--", "-archived"]).status, 0)
        try assertFailure(["tag", backing, "x", "--add", "-dash"], mentions: "give it as --add=-dash")
        try assertFailure(["tag", backing, "x", "--add", "-x"], mentions: "give it as --add=-x")
        try assertFailure(["tag", backing, "x", "--remove", "-1"], mentions: "give it as --remove=-1")
        // An option that takes any word says itself what is wrong with it, not "goes after --".
        try assertFailure(["undo", backing, "--since", "-5m"], mentions: "'-5m' is not a date")
        // An option after `--` is said to be one (found from outside: only "Unexpected argument").
        try assertFailure(["ls", backing, "--", "-archived", "--long"], mentions: "--long comes after `--`")
    }

    func testAMissingBackingDirectoryIsOneLineAndExitStatus2() throws {
        let missing = backing + "/no/such/dir"
        try assertFailure(["ls", missing, "by-name"], mentions: missing)
        try assertFailure(["views", missing], mentions: missing)
        try assertFailure(["status", missing], mentions: missing)
    }

    /// Output that cannot be written (a full disk: /dev/full; stdout
    /// closed) is one line and exit 2, as `ls` has it: found from outside,
    /// a truncated list exited 0.
    func testOutputThatCannotBeWrittenIsOneLineAndExitStatus2() throws {
        makeReadingList()
        for arguments in [["ls", backing, "by-name"], ["views", backing], ["status", backing]] {
            let (status, text) = try Self.runIntoAFullDisk(arguments)
            XCTAssertEqual(status, 2, "\(arguments)")
            XCTAssertEqual(text, "queryfs: cannot write the output: No space left on device\n", "\(arguments)")
        }
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec \"$0\" ls \"$1\" by-name >&-", Self.binary, backing]
        let errors = Pipe()
        shell.standardError = errors
        try shell.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        XCTAssertEqual(shell.terminationStatus, 2)
        XCTAssertEqual(text, "queryfs: cannot write the output: Bad file descriptor\n")
    }

    /// `queryfs ARGUMENTS…` with its output to /dev/full: its status and what it said on stderr.
    static func runIntoAFullDisk(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// A limited address space (`ulimit -v`) is no crash: found from
    /// outside, a scan's threads took a malloc arena each, 64 MB of
    /// address space apiece, and the command crashed at 24 MB resident.
    func testALimitedAddressSpaceIsNoCrash() throws {
        for index in 0..<2000 { hipstapaper(String(format: "item%04d.b", index), title: "Item \(index)", tags: ["t"]) }
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "ulimit -v 150000 && exec \"$0\" ls \"$1\" by-name --no-index", Self.binary, backing]
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        XCTAssertEqual(shell.terminationStatus, 0)
        XCTAssertEqual(text.split(separator: "\n").count, 2000)
    }

    func testABackingDirectoryThatIsAFileIsOneLineAndExitStatus2() throws {
        let file = writeFile("plain-file", "not a directory")
        try assertFailure(["ls", file, "by-name"], mentions: file)
        try assertFailure(["views", file], mentions: file)
        try assertFailure(["status", file], mentions: file)
        try assertFailure(["history", file], mentions: "is not a directory")
        try assertFailure(["tag", file, "x", "--add", "y"], mentions: "is not a directory")
    }

    func testATagNoItemHasIsSaidToBeOne() throws {
        makeReadingList()
        try assertFailure(["ls", backing, "tag/nobody"], mentions: "no item in \(backing) has the tag 'nobody'")
    }
}

/// The edit commands without a mount (issue 14): `tag`, `archive`,
/// `unarchive`, `set`, `history`, `undo`, with every way to name an item.
final class EditCommandTests: FixtureTestCase {
    /// Runs `queryfs ARGUMENTS…`, or with `executable` the program given
    /// (`ARGUMENTS` then start with its own name, left out).
    private func run(_ arguments: [String], executable: String = CommandLineTests.binary) throws -> CommandLineTests.Run {
        let outPath = backing + ".stdout", errPath = backing + ".stderr"
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: outPath, contents: nil), outPath)
        XCTAssertTrue(FileManager.default.createFile(atPath: errPath, contents: nil), errPath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = executable == CommandLineTests.binary ? arguments : Array(arguments.dropFirst())
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
        process.waitUntilExit()
        return CommandLineTests.Run(status: process.terminationStatus, stdout: [UInt8](try Data(contentsOf: URL(fileURLWithPath: outPath))),
                                    stderr: [UInt8](try Data(contentsOf: URL(fileURLWithPath: errPath))))
    }

    func testEditCommandsHistoryAndUndo() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["t"])
        hipstapaper("b.b", title: "Beta")
        writeFile("notes.txt", "plain")
        let original = FileManager.default.contents(atPath: path("a.b/payload.plist"))
        // By name, by a path into BACKING, by a path inside the item.
        XCTAssertEqual(try run(["tag", backing, "a.b", path("b.b"), path("notes.txt"), "--add", "new", "--remove", "t"]).status, 0)
        XCTAssertEqual(try scanItem("a.b").tags, ["new"])
        XCTAssertEqual(try scanItem("b.b").tags, ["new"])
        XCTAssertEqual(try scanItem("notes.txt").tags, ["new"])
        XCTAssertEqual(try run(["archive", backing, path("a.b/payload.plist")]).status, 0)
        XCTAssertTrue(try scanItem("a.b").archived)
        XCTAssertEqual(try run(["set", backing, "b.b", "title=Retitled", "payload.kind=article", "payload.n=3"]).status, 0)
        XCTAssertEqual(try scanItem("b.b").title, "Retitled")
        let history = try run(["history", backing])
        XCTAssertEqual(history.status, 0)
        XCTAssertTrue(history.output.contains("\ta.b\tarchived\tfalse -> true"), history.output)
        XCTAssertTrue(history.output.contains("\tb.b\tpayload.kind\t(none) -> \"article\""), history.output)
        // Undo all: every payload as it was, and each change taken back printed as history lists it.
        let undo = try run(["undo", backing, "--since", "1h"])
        XCTAssertEqual(undo.status, 0)
        XCTAssertTrue(undo.output.contains("\ta.b\tarchived\ttrue -> false\t(undoes "), undo.output)
        XCTAssertTrue(undo.output.contains("\tb.b\tpayload.kind\t\"article\" -> (none)\t(undoes "), undo.output)
        let afterUndo = try run(["history", backing]).output
        for line in undo.output.split(separator: "\n") { XCTAssertTrue(afterUndo.contains(line), "\(line) not in the history") }
        XCTAssertEqual(FileManager.default.contents(atPath: path("a.b/payload.plist")), original)
        XCTAssertEqual(try scanItem("b.b").title, "Beta")
        XCTAssertEqual(try scanItem("notes.txt").tags, [])
        let nothing = try run(["undo", backing])
        XCTAssertEqual(nothing.status, 0, "nothing left to undo is no error")
        XCTAssertEqual(nothing.output, "")
        XCTAssertTrue(String(decoding: nothing.stderr, as: UTF8.self).contains("nothing to undo in \(backing)"))
    }

    /// Removing a tag the item does not carry is said; when it carries tags
    /// nested below it (`a/b` for `a`), the command fails and names them
    /// (found from outside: exit 0, nothing changed, the item still in tag/a/).
    func testRemovingATagTheItemDoesNotCarryIsSaid() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["lang/swift", "kept"])
        let nested = try run(["tag", backing, "a.b", "--remove", "lang"])
        XCTAssertEqual(nested.status, 2)
        XCTAssertEqual(nested.errorLines, ["queryfs: a.b: does not carry tag 'lang' itself, only 'lang/swift': remove that by name"])
        let absent = try run(["tag", backing, "a.b", "--remove", "other", "--remove", "kept"])
        XCTAssertEqual(absent.status, 0)
        XCTAssertEqual(absent.errorLines, ["queryfs: a.b: does not carry tag 'other': nothing to remove"])
        XCTAssertEqual(try scanItem("a.b").tags, ["lang/swift"])
    }

    /// `a//b` and `a/b` are one tag, as their folder is: added as the folder
    /// names it, and removed by either name (found from outside: kept as
    /// typed, `tag:a/b` matched nothing and `--remove a/b` was a silent no-op).
    func testATagIsAddedAndRemovedAsItsFolderNamesIt() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["/lead", "x//y", " sp "])
        XCTAssertEqual(try run(["tag", backing, "a.b", "--add", "c//d/", "--add", "q/ r", "--remove", "lead", "--remove", "x/y",
                                "--remove", "sp"]).status, 0)
        XCTAssertEqual(try scanItem("a.b").tags, ["c/d", "q/r"], "blanks around a part are the folder's as well")
    }

    /// Another program's lock on the journal stops a command over several
    /// items at the first: it waited the lock timeout once per item
    /// (found from outside: 100 items would have waited 8 minutes).
    func testAJournalLockedElsewhereStopsACommandOverSeveralItemsAtOnce() throws {
        hipstapaper("a.b", title: "Alpha")
        hipstapaper("b.b", title: "Beta")
        hipstapaper("c.b", title: "Gamma")
        XCTAssertTrue(FileManager.default.createFile(atPath: path(EditJournal.fileName), contents: nil, attributes: [.posixPermissions: 0o600]))
        let holder = open(path(EditJournal.fileName), O_RDONLY | O_CLOEXEC)
        defer { close(holder) }
        XCTAssertEqual(flock(holder, LOCK_EX), 0)
        let tagged = try run(["tag", backing, "a.b", "b.b", "c.b", "--add", "x", "--lock-timeout", "0.5"])
        XCTAssertEqual(tagged.status, 2)
        XCTAssertEqual(tagged.errorLines.filter { $0.contains("still locked") }.count, 1, "\(tagged.errorLines)")
        for item in ["a.b", "b.b", "c.b"] { XCTAssertEqual(try scanItem(item).tags, [], item) }
    }

    /// A command over several items edits all or none: an item it cannot
    /// name, or cannot edit as asked, stops it before anything is written
    /// (found from outside: the others were edited, exit 2, nothing said).
    func testACommandOverSeveralItemsChangesAllOrNone() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["lang/swift"])
        hipstapaper("b.b", title: "Beta", tags: ["lang"])
        let missing = try run(["tag", backing, "b.b", "nosuch", "--add", "zz"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.errorLines.last, "queryfs: nothing was changed: the command edits all its items or none")
        let nested = try run(["tag", backing, "a.b", "b.b", "--remove", "lang"])
        XCTAssertEqual(nested.status, 2)
        XCTAssertEqual(try scanItem("b.b").tags, ["lang"], "untouched")
        // An item that cannot hold the edit (its tags a map) stops the others too, and is named.
        bundle("m.b", plistBody: "<dict><key>webTitle</key><string>M</string><key>tags</key><dict><key>x</key><integer>1</integer></dict></dict>")
        let map = try run(["tag", backing, "a.b", "m.b", "b.b", "--add", "z"])
        XCTAssertEqual(map.status, 2)
        XCTAssertTrue(map.errorLines.contains { $0.hasPrefix("queryfs: m.b: ") }, "\(map.errorLines)")
        XCTAssertEqual(try scanItem("a.b").tags, ["lang/swift"])
        XCTAssertEqual(try scanItem("b.b").tags, ["lang"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path(EditJournal.fileName)), "nothing journaled")
    }

    /// An action is undone whole or not at all: when one of its items
    /// changed since in the field it edited, none is taken back (found from
    /// outside: the newer items were, and the action was left half undone).
    func testAnActionWithAnItemChangedSinceIsNotUndoneInPart() throws {
        hipstapaper("a.b", title: "Alpha")
        hipstapaper("b.b", title: "Beta")
        hipstapaper("c.b", title: "Gamma")
        XCTAssertEqual(try run(["tag", backing, "a.b", "b.b", "c.b", "--add", "x"]).status, 0)
        hipstapaper("b.b", title: "Beta", tags: ["x", "byhand"])
        let undo = try run(["undo", backing])
        XCTAssertEqual(undo.status, 2)
        XCTAssertTrue(undo.errorLines.contains { $0.contains("b.b: tags changed since this edit") }, "\(undo.errorLines)")
        XCTAssertEqual(try scanItem("a.b").tags, ["x"])
        XCTAssertEqual(try scanItem("c.b").tags, ["x"], "none of the action is taken back")
    }

    /// `undo --since` a time after every edit says there is none since then,
    /// not that all are undone (found from outside).
    func testUndoSinceATimeWithNoEditSaysSo() throws {
        hipstapaper("a.b", title: "Alpha")
        XCTAssertEqual(try run(["tag", backing, "a.b", "--add", "x"]).status, 0)
        let undo = try run(["undo", backing, "--since", "2099-01-01"])
        XCTAssertEqual(undo.status, 0)
        XCTAssertEqual(undo.errorLines, ["queryfs: nothing to undo in \(backing): no edit is journaled since then"])
        XCTAssertEqual(try scanItem("a.b").tags, ["x"])
    }

    /// One command over several items is one action: one `undo` takes it
    /// back from all of them (it took back the last item only).
    func testOneUndoTakesBackACommandOverSeveralItems() throws {
        hipstapaper("a.b", title: "Alpha")
        hipstapaper("b.b", title: "Beta")
        hipstapaper("c.b", title: "Gamma")
        XCTAssertEqual(try run(["tag", backing, "c.b", "--add", "first"]).status, 0)
        XCTAssertEqual(try run(["tag", backing, "a.b", "b.b", "--add", "both"]).status, 0)
        let undo = try run(["undo", backing])
        XCTAssertEqual(undo.status, 0, undo.errorLines.joined(separator: "\n"))
        XCTAssertEqual(undo.output.split(separator: "\n").count, 2, undo.output)
        XCTAssertEqual(try scanItem("a.b").tags, [])
        XCTAssertEqual(try scanItem("b.b").tags, [])
        XCTAssertEqual(try scanItem("c.b").tags, ["first"], "the command before is a later undo's")
        XCTAssertEqual(try run(["undo", backing, "--last", "1"]).status, 0)
        XCTAssertEqual(try scanItem("c.b").tags, [])
    }

    /// An item whose name is not UTF-8 is named on the command line by its
    /// bytes (found from outside: the name reached the command as U+FFFD,
    /// and no file has that name). The shell makes the name: Process takes Strings.
    func testAnItemWhoseNameIsNotUTF8CanBeTagged() throws {
        let name: [UInt8] = Array("B".utf8) + [0xFF] + Array(".txt".utf8)
        XCTAssertGreaterThanOrEqual((Array((backing + "/").utf8) + name).withCString { creat($0, 0o644) }, 0)
        let script = "\"$0\" tag \"$1\" \"$1/$(printf 'B\\377.txt')\" --add t && \"$0\" tag \"$1\" \"$(printf 'B\\377.txt')\" --add u"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, CommandLineTests.binary, backing]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        for tag in ["t", "u"] { XCTAssertEqual(try run(["ls", backing, "tag/" + tag]).output.split(separator: "\n").count, 1, tag) }
    }

    /// Undo is a stack: past an edit it cannot take back, the older ones
    /// stay as they are, and it says so (found from outside: on a full disk
    /// each later undo was made unjournaled, and the next `undo` found the
    /// files matching no edit).
    func testUndoStopsAtTheFirstEditItCannotTakeBack() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["t"])
        hipstapaper("b.b", title: "Beta")
        XCTAssertEqual(try run(["tag", backing, "b.b", "--add", "older"]).status, 0)
        XCTAssertEqual(try run(["tag", backing, "a.b", "--add", "newer"]).status, 0)
        // Another program changes the tags the newer edit set: it cannot be taken back.
        hipstapaper("a.b", title: "Alpha", tags: ["someone else's"])
        let undo = try run(["undo", backing, "--last", "2"])
        XCTAssertEqual(undo.status, 2)
        let errors = String(decoding: undo.stderr, as: UTF8.self)
        XCTAssertTrue(errors.contains("1 older edit is left as it is"), errors)
        XCTAssertEqual(try scanItem("b.b").tags, ["older"], "the older edit stays")
    }

    /// A nested key that feeds the URL (`webLocation.relative`) is journaled
    /// as its top-level key, and undone field by field once the payload
    /// changed otherwise (found from outside: journaled with no change, and
    /// its undo did nothing but say "already as before").
    func testANestedURLKeyIsJournaledAndUndoneAfterOtherChanges() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["t"])
        XCTAssertEqual(try run(["set", backing, "a.b", "payload.webLocation.relative=https://changed.example"]).status, 0)
        XCTAssertEqual(try scanItem("a.b").url, "https://changed.example")
        let history = try run(["history", backing]).output
        XCTAssertTrue(history.contains("\ta.b\tpayload.webLocation\t{\"relative\": \"https://example.com/a.b\"} -> {\"relative\": \"https://changed.example\"}"), history)
        // Another change to the payload: the byte-for-byte undo no longer applies.
        XCTAssertEqual(try run(["tag", backing, "a.b", "--add", "other"]).status, 0)
        let undo = try run(["undo", backing, "--last", "2"])
        XCTAssertEqual(undo.status, 0, String(decoding: undo.stderr, as: UTF8.self))
        XCTAssertEqual(try scanItem("a.b").url, "https://example.com/a.b")
        XCTAssertEqual(try scanItem("a.b").tags, ["t"])
    }

    /// An edit journaled but never written (a crash between the record and
    /// the file, or put back by hand): `undo` says so, marks it undone, and
    /// the next `undo` reaches the edit before it (found from outside: it
    /// picked the same record at every run, silently).
    func testUndoOfAnEditThatIsNotThereMovesOn() throws {
        hipstapaper("a.b", title: "Alpha", tags: ["t"])
        hipstapaper("b.b", title: "Beta")
        let untouched = try XCTUnwrap(FileManager.default.contents(atPath: path("b.b/payload.plist")))
        XCTAssertEqual(try run(["tag", backing, "a.b", "--add", "one"]).status, 0)
        XCTAssertEqual(try run(["tag", backing, "b.b", "--add", "two"]).status, 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: path("b.b/payload.plist"), contents: untouched))
        let first = try run(["undo", backing])
        XCTAssertEqual(first.status, 0)
        XCTAssertTrue(first.output.contains("\tb.b\talready as before the edit; nothing to take back"), first.output)
        XCTAssertTrue(try run(["history", backing]).output.contains("\tb.b\t(no change: already as before the edit)\t(undoes "))
        let second = try run(["undo", backing])
        XCTAssertEqual(second.status, 0)
        XCTAssertTrue(second.output.contains("\ta.b\ttags\t[\"t\", \"one\"] -> [\"t\"]\t(undoes "), second.output)
        XCTAssertEqual(try scanItem("a.b").tags, ["t"])
    }

    /// An edit killed at any of its flushes (`strace` kills it at the Nth
    /// `fsync`: the journal's, the new payload's, the note's, the folder's)
    /// leaves each item as it was or as edited, and nothing else in the
    /// user's folders: the new bytes go to a file without a name until they
    /// are on disk (found from outside: a killed edit left a hidden
    /// `.payload.plist.queryfs-PID-N` beside the payload for good).
    func testAnEditKilledAtAnyFlushLeavesNoTemporaryFileBehind() throws {
        let strace = try XCTUnwrap(["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) },
                                   "strace is needed (scripts/install-deps.sh strace)")
        let note = Array("---\ntitle: A note\ntags: [t]  # kept\n---\nBody\n".utf8)
        var completed = false
        for flush in 1...12 where !completed {
            let run = backing + "/run-\(flush)"
            try FileManager.default.createDirectory(atPath: run + "/a.b", withIntermediateDirectories: true)
            let payload = try PropertyListSerialization.data(fromPropertyList: ["title": "Alpha", "tags": ["t"]], format: .xml, options: 0)
            XCTAssertTrue(FileManager.default.createFile(atPath: run + "/a.b/payload.plist", contents: payload))
            XCTAssertTrue(FileManager.default.createFile(atPath: run + "/note.md", contents: Data(note)))
            let result = try self.run([strace, "-f", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:signal=SIGKILL:when=\(flush)",
                                       CommandLineTests.binary, "tag", run, "a.b", "note.md", "--add", "new"], executable: strace)
            completed = result.status == 0
            for folder in [run, run + "/a.b"] {
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".queryfs-") && $0 != ".queryfs-journal" }
                XCTAssertEqual(leftovers, [], "killed at flush \(flush): nothing left in \(folder)")
            }
            let items = try Scanner().scan(directory: run)
            for item in items {
                XCTAssertTrue(item.tags == ["t"] || item.tags == ["t", "new"], "\(item.name) at flush \(flush): \(item.tags)")
                XCTAssertEqual(item.problems, [], "\(item.name) at flush \(flush) is whole")
            }
        }
        XCTAssertTrue(completed, "with enough flushes let through, the edit completes")
    }

    /// An edit and its undo keep the payload's extended attributes: what
    /// other tools keep in `user.*` and the access control list (found from
    /// outside: both were dropped, and a collaborator the ACL let write the
    /// payload could not after the edit).
    func testAnEditAndItsUndoKeepThePayloadsAttributesAndACL() throws {
        hipstapaper("a.b", title: "Alpha")
        writeFile("note.md", "---\ntitle: Note\n---\nBody\n")
        // user::rw- user:1002:rw- group::r-- mask::rw- other::r--
        let acl = "0x0200000001000600ffffffff02000600ea03000004000400ffffffff10000600ffffffff20000400ffffffff"
        for file in ["a.b/payload.plist", "note.md"] {
            for (name, value) in [("user.xdg.origin.url", "https://example.org"), ("system.posix_acl_access", acl)] {
                let set = try run(["/usr/bin/setfattr", "-n", name, "-v", value, path(file)], executable: "/usr/bin/setfattr")
                XCTAssertEqual(set.status, 0, String(decoding: set.stderr, as: UTF8.self))
            }
        }
        let before = try ["a.b/payload.plist", "note.md"].map { try attributes(path($0)) }
        XCTAssertEqual(before[0].count, 2, "\(before[0])")
        XCTAssertEqual(try run(["tag", backing, "a.b", "note.md", "--add", "new"]).status, 0)
        XCTAssertEqual(try scanItem("a.b").tags, ["new"])
        XCTAssertEqual(try ["a.b/payload.plist", "note.md"].map { try attributes(path($0)) }, before, "after the edit")
        XCTAssertEqual(try run(["undo", backing, "--since", "1h"]).status, 0)
        XCTAssertEqual(try scanItem("a.b").tags, [])
        XCTAssertEqual(try ["a.b/payload.plist", "note.md"].map { try attributes(path($0)) }, before, "after the undo")
    }

    /// Every extended attribute of `file`, by name (`getfattr -d -m -`).
    private func attributes(_ file: String) throws -> [String] {
        let result = try run(["/usr/bin/getfattr", "-d", "-m", "-", "-e", "hex", file], executable: "/usr/bin/getfattr")
        return result.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init).sorted()
    }

    /// `undo` replays only a journal of the caller's or root's: anyone who
    /// owns the file can write any line into it (found from outside).
    func testUndoRefusesAJournalAnotherUserOwns() throws {
        try XCTSkipIf(geteuid() != 0, "needs root to give the journal to another user")
        hipstapaper("a.b", title: "Alpha")
        XCTAssertEqual(try run(["tag", backing, "a.b", "--add", "new"]).status, 0)
        XCTAssertEqual(chown(path(".queryfs-journal"), 65534, 65534), 0)
        let undo = try run(["undo", backing])
        XCTAssertEqual(undo.status, 2)
        XCTAssertEqual(undo.errorLines.count, 1, "\(undo.errorLines)")
        XCTAssertTrue(undo.errorLines.first?.contains("belongs to user 65534") == true, "\(undo.errorLines)")
        XCTAssertEqual(try scanItem("a.b").tags, ["new"], "nothing taken back")
        XCTAssertEqual(try run(["history", backing]).status, 0, "history still reads it")
        // Nor does an edit append its copies of the files to it.
        let appended = try run(["tag", backing, "a.b", "--add", "more"])
        XCTAssertEqual(appended.status, 2)
        XCTAssertTrue(appended.errorLines.first?.contains("belongs to user 65534") == true, "\(appended.errorLines)")
        XCTAssertEqual(try scanItem("a.b").tags, ["new"])
    }

    /// An editor's save (a new file renamed over the note, no lock taken)
    /// made while a tag edit is under way is never overwritten: the edit
    /// finds the note replaced before its rename, writes nothing, reads the
    /// note again and edits that (found from outside: a third of the edits
    /// in a loop rolled the note back to the version before the save). The
    /// edit is held at its first flush by `strace` while the test saves.
    func testAnEditorsSaveMadeDuringATagEditIsKept() throws {
        let strace = try XCTUnwrap(["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) })
        writeFile("n.md", "---\ntags: [c0]\n---\nedit 0\n")
        let trace = backing + ".trace"
        defer { unlink(trace) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: strace)
        process.arguments = ["-f", "-o", trace, "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=2000000:when=1",
                             CommandLineTests.binary, "tag", backing, "n.md", "--add", "t1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Held at the journal's flush, after it read the note: the editor saves now.
        let deadline = Date().addingTimeInterval(20)
        while !((try? String(contentsOfFile: trace, encoding: .utf8))?.contains("fsync(") ?? false), Date() < deadline { usleep(20_000) }
        writeFile(".n.md.editor", "---\ntags: [c0]\n---\nedit 1, by the editor\n")
        XCTAssertEqual(rename(path(".n.md.editor"), path("n.md")), 0)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: path("n.md")).map { String(decoding: $0, as: UTF8.self) },
                       "---\ntags: [c0, t1]\n---\nedit 1, by the editor\n", "the save kept, the tag added to it")
        let history = try run(["history", backing]).output.split(separator: "\n")
        XCTAssertEqual(history.count, 1, "one edit journaled, the attempt that found the save cut: \(history)")
    }

    /// A write that fails before anything is replaced (here the new file's
    /// naming, made to fail with ENOSPC by `strace`, as on a full disk)
    /// leaves the item as it was and no journal record, and says "not
    /// changed" (found from outside: "may have been made", and a phantom
    /// edit in the history that the next undo was spent on). A note named
    /// near 255 bytes is edited like any other (its temporary file's name
    /// was 26 bytes longer, found from outside).
    func testAWriteThatFailsBeforeItsRenameIsNotJournaled() throws {
        let strace = try XCTUnwrap(["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) })
        writeFile("n.md", "---\ntags: [a]\n---\n")
        let failed = try run([strace, "-f", "-o", "/dev/null", "-e", "trace=linkat", "-e", "inject=linkat:error=ENOSPC",
                              CommandLineTests.binary, "tag", backing, "n.md", "--add", "b"], executable: strace)
        XCTAssertEqual(failed.status, 2)
        XCTAssertTrue(failed.errorLines.first?.contains("not changed") == true, "\(failed.errorLines)")
        XCTAssertEqual(try scanItem("n.md").tags, ["a"])
        XCTAssertEqual(try run(["history", backing]).output, "", "nothing journaled")
        let long = String(repeating: "x", count: 240) + ".md"
        writeFile(long, "---\ntags: [a]\n---\n")
        XCTAssertEqual(try run(["tag", backing, long, "--add", "b"]).status, 0)
        XCTAssertEqual(try scanItem(long).tags, ["a", "b"])
    }

    /// Undos run at once take turns: each takes back its own edit (found
    /// from outside: of five parallel undos two took back edits, the others
    /// chose the same one and found nothing to do).
    func testParallelUndosEachTakeBackAnEdit() throws {
        for index in 1...5 { hipstapaper("i\(index).b", title: "Item \(index)") }
        for index in 1...5 { XCTAssertEqual(try run(["tag", backing, "i\(index).b", "--add", "v\(index)"]).status, 0) }
        let undos = try (1...5).map { _ -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
            process.arguments = ["undo", backing]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        for process in undos {
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
        }
        for index in 1...5 { XCTAssertEqual(try scanItem("i\(index).b").tags, [], "i\(index).b") }
    }

    /// A `.md` that is not UTF-8 text (UTF-16, binary) gets no front matter
    /// block put in front of its bytes: its tags go to its attribute, as
    /// a plain file's (found from outside: the block made it unreadable).
    func testANoteThatIsNotUTF8TextIsTaggedThroughItsAttribute() throws {
        let utf16: [UInt8] = [0xFF, 0xFE] + Array("# Hello\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let binary: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 0, 1, 2, 3]
        writeFile("u.md", utf16)
        writeFile("elf.md", binary)
        XCTAssertEqual(try run(["tag", backing, "u.md", "elf.md", "--add", "q"]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: path("u.md")).map { [UInt8]($0) }, utf16)
        XCTAssertEqual(FileManager.default.contents(atPath: path("elf.md")).map { [UInt8]($0) }, binary)
        XCTAssertEqual(try scanItem("u.md").tags, ["q"])
        XCTAssertEqual(try scanItem("elf.md").tags, ["q"])
        // UTF-8 with a byte order mark is text: its block goes after the mark.
        writeFile("bom.md", [0xEF, 0xBB, 0xBF] + Array("# Hello\nbody\n".utf8))
        XCTAssertEqual(try run(["tag", backing, "bom.md", "--add", "q"]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: path("bom.md")).map { [UInt8]($0) },
                       [0xEF, 0xBB, 0xBF] + Array("---\ntags:\n  - q\n---\n# Hello\nbody\n".utf8))
        XCTAssertEqual(try scanItem("bom.md").title, "Hello")
    }

    /// `set NOTE payload.KEY=VALUE` sets that key of the note's front matter
    /// (found from outside: refused as if the note were a plain file).
    func testSetPayloadKeyOfANoteWritesItsFrontMatter() throws {
        writeFile("n.md", "---\ntitle: N\nstatus: draft  # kept\n---\nBody\n")
        let set = try run(["set", backing, "n.md", "payload.status=done"])
        XCTAssertEqual(set.status, 0, "\(set.errorLines)")
        XCTAssertEqual(FileManager.default.contents(atPath: path("n.md")).map { String(decoding: $0, as: UTF8.self) },
                       "---\ntitle: N\nstatus: done  # kept\n---\nBody\n")
        // Journaled as the key it changed (found from outside: "no change").
        XCTAssertTrue(try run(["history", backing]).output.contains("\tn.md\tpayload.status\t\"draft\" -> \"done\""))
        XCTAssertEqual(try run(["undo", backing]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: path("n.md")).map { String(decoding: $0, as: UTF8.self) },
                       "---\ntitle: N\nstatus: draft  # kept\n---\nBody\n")
        // Numbers too (found from outside: "a integer cannot be written"); a key is not removed.
        XCTAssertEqual(try run(["set", backing, "n.md", "payload.rating=5", "payload.score=2.5"]).status, 0)
        let text = FileManager.default.contents(atPath: path("n.md")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        XCTAssertTrue(text.contains("\nrating: 5\n") && text.contains("\nscore: 2.5\n"), text)
        let removal = try run(["set", backing, "n.md", "payload.rating="])
        XCTAssertEqual(removal.status, 2)
        XCTAssertTrue(removal.errorLines.first?.contains("does not remove them") == true, "\(removal.errorLines)")
    }

    /// A name with a newline or tab stays one field of one line in
    /// `history` (escaped), as it did not (found from outside).
    func testHistoryKeepsOneEditALine() throws {
        hipstapaper("two\nlines\tand tab.b", title: "Odd")
        XCTAssertEqual(try run(["tag", backing, "two\nlines\tand tab.b", "--add", "x"]).status, 0)
        let lines = try run(["history", backing]).lines
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.contains("\ttwo\\nlines\\tand tab.b\ttags\t") == true, "\(lines)")
    }

    /// Found from outside: in a recursive collection, `sub/n.md` with `sub`
    /// a link to a folder named the link `sub` as the item, and a race that
    /// put the folder back tagged the folder itself. A path that goes on
    /// past a link or a file names no item.
    func testAPathThroughALinkInARecursiveCollectionNamesNoItem() throws {
        writeFile(".queryfs.toml", "recursive = true\n")
        writeFile("sub/n.md", "---\ntitle: N\n---\n")
        let elsewhere = makeDirectory("../elsewhere-\(getpid())")
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        writeFile("../elsewhere-\(getpid())/n.md", "---\ntitle: E\n---\n")
        XCTAssertEqual(symlink(elsewhere, path("sublink")), 0)
        for item in ["sublink/n.md", path("sublink/n.md")] {
            let refused = try run(["tag", backing, item, "--add", "x"])
            XCTAssertEqual(refused.status, 2, item)
            XCTAssertEqual(refused.errorLines.count, 1, "\(item): \(refused.errorLines)")
            XCTAssertTrue(refused.errorLines.first?.contains("not an item") == true, "\(refused.errorLines)")
        }
        XCTAssertEqual(try run(["tag", backing, "sub/n.md", "--add", "x"]).status, 0, "a real folder's note still is one")
        for folder in ["sublink", "sub"] {
            XCTAssertEqual(qfs_getxattrat(AT_FDCWD, path(folder), "user.xdg.tags", nil, 0), -1, folder)
        }
        XCTAssertEqual(try String(contentsOfFile: elsewhere + "/n.md", encoding: .utf8), "---\ntitle: E\n---\n")
    }

    /// A key that feeds a field, changed with the field left as it was
    /// (an empty tag list made a string), is journaled as the key, not as
    /// "no change".
    func testAFieldsKeyChangedWithTheFieldAsItWasIsJournaled() throws {
        hipstapaper("a.b", title: "Alpha")
        XCTAssertEqual(try run(["set", backing, "a.b", "payload.tags=foo"]).status, 0)
        XCTAssertTrue(try run(["history", backing]).output.contains("\ta.b\tpayload.tags\t[] -> \"foo\""))
    }

    /// A tag in a note's text (`#dup`) and its front matter both is the
    /// text's to remove: taken from the front matter alone it stayed, and
    /// the command said it had gone (found from outside).
    func testATagWrittenInTheTextTooIsNotTakenFromTheFrontMatterAlone() throws {
        writeFile(".queryfs.toml", "format = \"obsidian\"\n")
        let note = "---\ntitle: Both\ntags: [dup]\n---\nText #dup here.\n"
        writeFile("both.md", note)
        let refused = try run(["tag", backing, "both.md", "--remove", "dup"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.errorLines.first?.contains("is written in the note's text") == true, "\(refused.errorLines)")
        XCTAssertEqual(try String(contentsOfFile: path("both.md"), encoding: .utf8), note)
    }

    /// The block a note's first tag made goes whole when that tag is taken
    /// back field by field (the body changed since): it left `tags: []`.
    func testUndoingANotesFirstTagAfterItsBodyChangedTakesTheBlockAway() throws {
        writeFile("n.md", "Just a body line.\n")
        XCTAssertEqual(try run(["tag", backing, "n.md", "--add", "first"]).status, 0)
        let tagged = try String(contentsOfFile: path("n.md"), encoding: .utf8)
        XCTAssertTrue(tagged.hasPrefix("---\n"), tagged)
        writeFile("n.md", tagged + "appended\n")
        XCTAssertEqual(try run(["undo", backing]).status, 0)
        XCTAssertEqual(try String(contentsOfFile: path("n.md"), encoding: .utf8), "Just a body line.\nappended\n")
    }

    /// What an item cannot hold is said as what the item is (a note was "a plain file").
    func testWhatAnItemCannotHoldIsSaidAsWhatItIs() throws {
        writeFile("n.md", "---\ntitle: x\n---\n")
        let refused = try run(["set", backing, "n.md", "payload.a.b=1"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.errorLines.first?.contains("n.md is a note: its front matter takes top-level keys only") == true, "\(refused.errorLines)")
    }

    /// An undo whose output cannot be written is made all the same, and
    /// says so: a script retrying on status 2 took back a second edit.
    func testAnUndoWhoseOutputIsLostSaysItWasMade() throws {
        hipstapaper("a.b", title: "Alpha")
        XCTAssertEqual(try run(["set", backing, "a.b", "title=One"]).status, 0)
        XCTAssertEqual(try run(["set", backing, "a.b", "title=Two"]).status, 0)
        let (status, text) = try CommandLineTests.runIntoAFullDisk(["undo", backing])
        XCTAssertEqual(status, 2)
        XCTAssertTrue(text.contains("cannot write the output") && text.contains("undone all the same"), text)
        XCTAssertEqual(try scanItem("a.b").title, "One")
    }

    /// A journal that is a FIFO is said to be no regular file (each edit failed with "Invalid argument").
    func testAJournalThatIsNoRegularFileIsSaidToBeOne() throws {
        let payload = hipstapaper("a.b", title: "Alpha") + "/payload.plist"
        let before = FileManager.default.contents(atPath: payload)
        XCTAssertEqual(mkfifo(path(".queryfs-journal"), 0o600), 0)
        let refused = try run(["tag", backing, "a.b", "--add", "x"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.errorLines.count, 1, "\(refused.errorLines)")
        XCTAssertTrue(refused.errorLines.first?.contains("not a regular file") == true, "\(refused.errorLines)")
        XCTAssertEqual(FileManager.default.contents(atPath: payload), before)
    }

    func testEditCommandMistakesAreOneLine() throws {
        hipstapaper("a.b", title: "Alpha")
        writeFile("notes.txt", "plain")
        for arguments in [["tag", backing, "a.b"], ["tag", backing, "missing.b", "--add", "x"], ["archive", backing, "notes.txt"],
                          ["set", backing, "a.b", "colour=red"], ["set", backing, "a.b", "archived=maybe"], ["undo", backing, "--since", "soon"],
                          ["tag", backing, "/etc/passwd", "--add", "x"], ["archive", backing + "/nope", "a.b"],
                          // Tags that would have no folder under tag/.
                          ["tag", backing, "a.b", "--add", ""], ["tag", backing, "a.b", "--add", "a/../b"], ["tag", backing, "a.b", "--add", "/"],
                          // One tag both added and removed (it was added, silently).
                          ["tag", backing, "a.b", "--add", "x", "--remove", "x"], ["tag", backing, "a.b", "--add", "a//b", "--remove", "a/b"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.errorLines.count, 1, "\(arguments): \(result.errorLines)")
            XCTAssertTrue(result.errorLines.first?.hasPrefix("queryfs: ") == true, "\(arguments)")
        }
        XCTAssertEqual(try scanItem("a.b").tags, [], "nothing written")
    }
}

/// A mistyped view names the one it most likely meant.
final class NearestViewTests: XCTestCase {
    func testAMistypedViewNamesTheNearest() {
        let paths = ["by-name", "by-modified", "by-created", "unarchived", "archived", "tag/swift", "tag/rust"]
        XCTAssertEqual(NearestView.suggestion(for: "by-nmae", among: paths), "by-name", "two letters swapped")
        XCTAssertEqual(NearestView.suggestion(for: "tag/swfit", among: paths), "tag/swift")
        XCTAssertEqual(NearestView.suggestion(for: "unarchive", among: paths), "unarchived")
        XCTAssertNil(NearestView.suggestion(for: "by-nothing", among: paths), "too far")
        XCTAssertNil(NearestView.suggestion(for: "title:x", among: paths), "a query")
        XCTAssertEqual(NearestView.distance(Array("abc"), Array("acb")), 1)
        XCTAssertEqual(NearestView.distance(Array(""), Array("ab")), 2)
    }
}
