import Foundation
import XCTest
import QueryFSTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Crash consistency (issue 30): BACKING is faultfs with its crash model —
/// a file's contents are durable once it is fsync'ed, a folder's entries
/// once the folder is — and an edit session runs through queryfs: `ln -s`,
/// `rm` and `mv` in views, `queryfs tag` and `queryfs undo` (journal
/// appends), and a careful save through `bundles/` by another program.
/// Whatever a crash leaves must be a state the user was told about: the
/// state before some command or after it, never a mix of a later change
/// with an earlier one lost (a command over several items may be half
/// done), every payload whole, every journal line whole, and undoing every
/// journaled edit must give the first state back.
final class CrashConsistencyMountTests: FaultMountTestCase {
    typealias State = [String: [UInt8]]

    /// Items written by something that does not journal (its changes are not undone).
    private static let unjournaled: Set<String> = ["f.hpwebsite"]

    private static func corpus(_ corpus: Corpus) {
        corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["t"], mtime: 6_000)
        corpus.bundle("b.hpwebsite", title: "Beta", tags: ["t", "u"], mtime: 5_000)
        corpus.bundle("c.hpwebsite", title: "Gamma", mtime: 4_000)
        corpus.bundle("d.hpwebsite", title: "Delta", tags: ["u"], mtime: 3_000)
        corpus.bundle("e.hpwebsite", title: "Epsilon", mtime: 2_000)
        corpus.bundle("f.hpwebsite", title: "Phi", mtime: 1_500)
        corpus.file(Array("notes.txt".utf8), contents: Array("plain\n".utf8), mtime: 1_000)
    }

    // MARK: The session

    private func entry(_ view: String, _ item: String) -> String {
        (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).first { RawFiles.linkTarget(fixture.mounted("\(view)/\($0)"))?.hasSuffix("/" + item) == true }
            ?? "(no entry of \(item) in \(view))"
    }

    private func queryfs(_ arguments: [String]) -> Bool {
        let result = QueryfsBinary.run(arguments)
        if result.status != 0 { print("queryfs \(arguments.joined(separator: " ")): \(result.stderrText)") }
        return result.status == 0
    }

    /// The commands of the session, in order; each says whether it worked.
    private func session() -> [(String, () -> Bool)] {
        let mounted = fixture.mounted
        let backing = fixture.backing
        return [
            ("ln -s c into tag/t", { symlink("../../bundles/c.hpwebsite", mounted("tag/t/x")) == 0 }),
            ("rm a from tag/t", { unlink(mounted("tag/t/" + self.entry("tag/t", "a.hpwebsite"))) == 0 }),
            ("mv b to a new title", { rename(mounted("by-name/" + self.entry("by-name", "b.hpwebsite")), mounted("by-name/Bee retitled")) == 0 }),
            ("mv d from tag/u to tag/t", {
                let name = self.entry("tag/u", "d.hpwebsite")
                return rename(mounted("tag/u/" + name), mounted("tag/t/" + name)) == 0
            }),
            ("rm e from unarchived", { unlink(mounted("unarchived/" + self.entry("unarchived", "e.hpwebsite"))) == 0 }),
            ("queryfs undo", { self.queryfs(["undo", backing]) }),
            ("ln -s notes.txt into tag/t", { symlink("../../bundles/notes.txt", mounted("tag/t/x")) == 0 }),
            ("save f through bundles/", {
                let bytes = Array(Corpus.plist(title: "Phi saved", archived: true, tags: ["saved"]).utf8)
                let failure = WriteChecks.save(bytes, as: mounted("bundles/f.hpwebsite/payload.plist"), temporary: mounted("bundles/f.hpwebsite/.payload.new"))
                if let failure { print("save f: \(failure.step): \(String(cString: strerror(failure.errno)))") }
                return failure == nil
            }),
            ("queryfs tag a --add crash", { self.queryfs(["tag", backing, "a.hpwebsite", "--add", "crash"]) }),
            ("ln -s c into archived", { symlink("../bundles/c.hpwebsite", mounted("archived/x")) == 0 }),
            ("queryfs undo --last 2", { self.queryfs(["undo", backing, "--last", "2"]) }),
            ("mv c to a new title", { rename(mounted("by-name/" + self.entry("by-name", "c.hpwebsite")), mounted("by-name/Sea retitled")) == 0 }),
        ]
    }

    /// Runs the commands until one fails. The states the user was told
    /// about — before the first command, then after each (read from the
    /// folder under faultfs: what the commands really did) — their names, and
    /// the one that failed.
    private func run(_ commands: [(String, () -> Bool)]) -> (states: [State], names: [String], failed: String?) {
        var states = [snapshot(source)]
        var names: [String] = []
        for (name, command) in commands {
            let worked = command()
            names.append(name)
            states.append(snapshot(source))
            if !worked { return (states, names, name) }
        }
        return (states, names, nil)
    }

    /// What the user sees of the list in `folder`: each bundle's payload
    /// bytes, a plain file's bytes, and any item's tag attribute.
    private func snapshot(_ folder: String) -> State {
        var state: State = [:]
        for name in (RawFiles.list(folder) ?? []).map(\.text) where !name.hasPrefix(".") {
            let path = folder + "/" + name
            if let status = RawFiles.lstat(path), status.st_mode & S_IFMT == S_IFDIR {
                state[name] = RawFiles.read(path + "/payload.plist") ?? Array("(no payload)".utf8)
            } else {
                state[name] = RawFiles.read(path) ?? Array("(unreadable)".utf8)
            }
            if let tags = WriteChecks.tagAttribute(path) { state[name + " @user.xdg.tags"] = tags }
        }
        return state
    }

    // MARK: Checks

    /// What is wrong with the crashed state in `folder`, against the states
    /// the user was told about (`states[k]`: after `names[k - 1]`). Reads only.
    private func stateProblems(_ folder: String, _ states: [State], _ names: [String]) -> [String] {
        var problems: [String] = []
        let durable = snapshot(folder)
        for (key, bytes) in durable.sorted(by: { $0.key < $1.key }) where key.hasSuffix(".hpwebsite") && WriteChecks.plist(bytes) == nil {
            problems.append("\(key): the payload does not parse: \(String(decoding: bytes.prefix(80), as: UTF8.self))")
        }
        let keys = Set(states.flatMap(\.keys)).union(durable.keys).sorted()
        let told = states.indices.contains { k in
            keys.allSatisfy { durable[$0] == states[k][$0] || (k + 1 < states.count && durable[$0] == states[k + 1][$0]) }
        }
        if !told {
            let each = keys.map { key -> String in
                let matching = states.indices.filter { states[$0][key] == durable[key] }
                return "\(key) \(matching.isEmpty ? "as in no state" : "as in states \(matching.map(String.init).joined(separator: ","))")"
            }
            let legend = names.enumerated().map { "\($0.offset + 1) after '\($0.element)'" }.joined(separator: ", ")
            problems.append("not a state the user was told about: \(each.joined(separator: "; ")) (state 0 is the start, \(legend))")
        }
        problems += WriteChecks.journalProblems(in: folder)
        let views = QueryfsBinary.run(["views", folder, "--no-index"])
        if views.status != 0 { problems.append("queryfs views: \(views.stderrText)") }
        return problems
    }

    /// Undoes every journaled edit in `folder` (`queryfs undo --since 1d`);
    /// what is then not as it first was.
    private func undoProblems(_ folder: String, _ states: [State]) -> [String] {
        var problems: [String] = []
        let undo = QueryfsBinary.run(["undo", folder, "--since", "1d"])
        if undo.status != 0 { problems.append("queryfs undo --since 1d: \(undo.stderrText)") }
        let undone = snapshot(folder)
        let keys = Set(states[0].keys).union(undone.keys).sorted()
        for key in keys where !Self.unjournaled.contains(String(key.prefix { $0 != " " })) && undone[key] != states[0][key] {
            problems.append("after undoing every edit, \(key) is not as it first was: \(String(decoding: (undone[key] ?? []).prefix(300), as: UTF8.self))")
        }
        return problems
    }

    // MARK: Tests

    /// One session, and every crash it can end in: the durable state at
    /// each durability point (each fsync of a file or a folder) of it.
    func testEveryCrashPointOfAnEditSessionIsAStateTheUserWasToldAbout() throws {
        try makeFaultBacking(crashModel: true, corpus: Self.corpus)
        try fixture.mount()
        let (states, names, failed) = run(session())
        XCTAssertNil(failed, "without a crash every command works")
        let points = try faultfs!.points()
        print("\(points.count) crash points: \(points.map(\.description).joined(separator: ", "))")
        XCTAssertGreaterThan(points.count, 2, "the session made nothing durable")
        let crashes = fixture.root + "/crashes"
        XCTAssertEqual(mkdir(crashes, 0o755), 0)
        for point in points {
            let folder = crashes + "/\(point.index)"
            try faultfs!.durableState(after: point.index, into: folder)
            XCTAssertEqual(stateProblems(folder, states, names), [], "a crash right after \(point)")
            XCTAssertEqual(undoProblems(folder, states), [], "a crash right after \(point)")
        }
    }

    /// Power cuts at random operations of the session (one in each part of
    /// it: `QUERYFS_CRASH_ROUNDS`, 3 by default; `QUERYFS_CRASH_SEED` picks
    /// them, 30 by default, "random" for a new one): after the cut every
    /// operation fails, the session stops at its first failed command, and
    /// the durable state, mounted, shows a state the user was told about,
    /// equal to a fresh reading, and every edit in it can be undone.
    func testPowerCutsAtRandomPointsLeaveAMountableStateTheUserWasToldAbout() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["QUERYFS_CRASH_SEED"] == "random" ? UInt64.random(in: 0...UInt64.max)
            : UInt64(environment["QUERYFS_CRASH_SEED"] ?? "") ?? 30
        let rounds = max(1, Int(environment["QUERYFS_CRASH_ROUNDS"] ?? "") ?? 3)
        var generator = SplitMix64(seed: seed)
        // A session without a cut counts its operations.
        try makeFaultBacking(crashModel: true, corpus: Self.corpus)
        try fixture.mount()
        let start = try faultfs!.sequence()
        XCTAssertNil(run(session()).failed, "without a crash every command works")
        let total = try faultfs!.sequence() - start
        removeFaultBacking()
        print("power cuts: seed \(seed), \(rounds) rounds, \(total) operations in the session")
        for round in 0..<rounds {
            let low = total * round / rounds, high = max(low + 1, total * (round + 1) / rounds)
            let cut = low + Int(generator.next() % UInt64(high - low))
            let label = "a power cut at operation \(cut + 1) of \(total) (seed \(seed), round \(round))"
            try makeFaultBacking(crashModel: true, corpus: Self.corpus)
            try fixture.mount()
            let scratch = makeTemporaryDirectory(prefix: "queryfs-crash")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try faultfs!.crash(afterOperations: cut, into: scratch + "/state")
            let (states, names, failed) = run(session())
            XCTAssertTrue(faultfs!.crashed, "\(label): no cut happened")
            print("\(label): '\(failed ?? "no command")' failed")
            removeFaultBacking()
            // The machine back up: the durable state mounted.
            fixture = MountedFixture { _ in }
            XCTAssertEqual(rmdir(fixture.backing), 0)
            XCTAssertEqual(rename(scratch + "/state", fixture.backing), 0, "\(label): nothing written out")
            try fixture.mount()
            XCTAssertEqual(stateProblems(fixture.backing, states, names), [], label)
            XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [], label)
            XCTAssertEqual(undoProblems(fixture.backing, states), [], label)
            XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [], "\(label), undone")
            removeFaultBacking()
        }
    }
}

