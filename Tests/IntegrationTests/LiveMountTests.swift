import Foundation
import XCTest
import QueryFSTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Views follow the backing directory through a real mount, with real
/// inotify and the kernel's caches in the way (issue 4).
final class LiveMountTests: MountTestCase {
    /// Random creates, deletes, renames, whole-bundle replacements, in-place
    /// payload rewrites and deep touches, in bursts, while other threads list
    /// views; once quiet, every view equals a fresh `queryfs ls` within 1 s.
    func testStressOfChangesWhileListing() throws {
        fixture = MountedFixture { corpus in
            for number in 0..<200 {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", archived: number % 4 == 0,
                              tags: number % 3 == 0 ? ["three"] : [], mtime: 1_000 + number)
            }
        }
        try fixture.mount()
        // Prime the kernel's caches, so staleness would show.
        for path in ViewComparison.viewPaths(backing: fixture.backing) {
            _ = ViewComparison.mounted(mountPoint: fixture.mountPoint, view: path)
        }

        let stop = Atomic(false)
        let mountPoint = fixture.mountPoint
        let listers = (0..<2).map { _ in
            Thread {
                while !stop.value {
                    for view in ["by-name", "by-modified", "unarchived", "tag"] {
                        _ = RawFiles.list(mountPoint + "/" + view)
                    }
                }
            }
        }
        listers.forEach { $0.start() }
        defer { stop.value = true }

        var random = seededGenerator()
        let corpus = Corpus(path: fixture.backing)
        var next = 1_000
        for burst in 0..<12 {
            for _ in 0..<Int.random(in: 5...25, using: &random) {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: fixture.backing))?.filter { !$0.hasPrefix(".") } ?? []
                guard let victim = names.randomElement(using: &random) else { continue }
                let path = fixture.backed(victim)
                switch Int.random(in: 0..<7, using: &random) {
                case 0:
                    next += 1
                    corpus.bundle("n\(next).hpwebsite", title: "New \(next)", tags: ["new", "three"].shuffled(using: &random).dropLast(Int.random(in: 0...2, using: &random)).map { $0 },
                                  mtime: 5_000 + next)
                case 1:
                    try? FileManager.default.removeItem(atPath: path)
                case 2:
                    next += 1
                    rename(path, fixture.backed("r\(next)-" + victim))
                case 3:  // whole-bundle replacement: built beside, then swapped in
                    next += 1
                    let staging = fixture.backed(".staging-\(next)")
                    mkdir(staging, 0o755)
                    corpus.write(staging + "/payload.plist", Array(Corpus.plist(title: "Replaced \(next)", archived: Bool.random(using: &random), tags: ["replaced"]).utf8))
                    let trash = fixture.backed(".trash-\(next)")
                    if rename(path, trash) == 0 {
                        rename(staging, path)
                        try? FileManager.default.removeItem(atPath: trash)
                    }
                case 4:  // in-place payload rewrite: title, archived, tags
                    corpus.write(path + "/payload.plist", Array(Corpus.plist(title: "Rewritten \(burst) \(Int.random(in: 0..<99, using: &random))",
                        archived: Bool.random(using: &random), tags: Bool.random(using: &random) ? ["three", "x/y"] : []).utf8))
                case 5:  // a touch deep inside the bundle
                    mkdir(path + "/deep", 0o755)
                    mkdir(path + "/deep/er", 0o755)
                    corpus.write(path + "/deep/er/file", Array("\(burst)".utf8))
                default:
                    var times = [timespec(tv_sec: 0, tv_nsec: Int(UTIME_NOW_VALUE)), timespec(tv_sec: 0, tv_nsec: Int(UTIME_NOW_VALUE))]
                    _ = utimensat(AT_FDCWD, path + "/payload.plist", &times, 0)
                }
            }
            usleep(UInt32.random(in: 0...100_000, using: &random))
        }
        let differences = ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 1)
        XCTAssertEqual(differences, [], "views differ 1 s after the last change")
    }

    /// A bundle renamed in BACKING keeps its title, so its entry keeps its
    /// name; a path the kernel already resolved must still follow to the new
    /// target (the entry is another node now, not a cached stale symlink).
    func testAnEntryWhoseNameStaysFollowsARenamedBundle() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("old.hpwebsite", title: "Kept title", mtime: 5_000)
            corpus.bundle("other.hpwebsite", title: "Other", mtime: 1_000)
        }
        try fixture.mount()
        let entry = fixture.mounted("by-modified/0001 Kept title.hpwebsite")
        XCTAssertEqual(RawFiles.linkTarget(entry), "../bundles/old.hpwebsite")
        XCTAssertNotNil(RawFiles.stat(Array(entry.utf8)))
        XCTAssertEqual(rename(fixture.backed("old.hpwebsite"), fixture.backed("new.hpwebsite")), 0)
        XCTAssertTrue(eventually(timeout: 1) {
            RawFiles.linkTarget(entry) == "../bundles/new.hpwebsite"
        }, "the entry still points at the old name 1 s after the rename")
        XCTAssertNotNil(RawFiles.stat(Array(entry.utf8)), "the entry does not resolve")
    }

    /// The index leaves an item alone while the mount is writing it, but
    /// never for long: rewritten through the mount every 2 ms for 1.5 s, its
    /// title in the views is never more than 0.5 s behind, and the last one
    /// shows within 0.5 s of the last write.
    func testAnItemWrittenContinuouslyThroughTheMountIsNotStarved() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Start", mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Other", mtime: 1_000)
        }
        try fixture.mount()
        let payload = fixture.mounted("bundles/a.hpwebsite/payload.plist")
        let start = Date()
        var written: [(Date, String)] = []
        var worstLag = 0.0
        var number = 0
        while Date().timeIntervalSince(start) < 1.5 {
            number += 1
            let title = "Title \(number)"
            XCTAssertEqual(RawFiles.write(payload, Array(Corpus.plist(title: title, archived: false, tags: []).utf8)), 0)
            written.append((Date(), title))
            // How far behind is the view? The oldest write whose title it does not show yet.
            let shown = ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "by-name").first { $0.hasSuffix(".hpwebsite") && $0.contains("Title ") }
            if let shown, let index = written.lastIndex(where: { shown.contains($0.1 + ".hpwebsite") }) {
                if index + 1 < written.count { worstLag = max(worstLag, Date().timeIntervalSince(written[index + 1].0)) }
            }
            usleep(2_000)
        }
        XCTAssertLessThan(worstLag, 0.5, "the view fell \(worstLag) s behind the writes")
        let last = written.last!.1
        XCTAssertTrue(eventually(timeout: 0.5) {
            ViewComparison.mounted(mountPoint: self.fixture.mountPoint, view: "by-name").contains { $0.contains(last + ".hpwebsite") }
        }, "the last title did not show")
    }

    /// Tags set as `user.xdg.tags` (as KDE's file manager does), through the
    /// mount or in BACKING, make and unmake tag folders.
    func testExtendedAttributeTagsMakeTagFolders() throws {
        fixture = MountedFixture { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", mtime: 5_000)
            corpus.file(Array("notes.txt".utf8), contents: Array("n".utf8), mtime: 4_000)
        }
        try fixture.mount()
        XCTAssertEqual(Program.run(["setfattr", "-n", "user.xdg.tags", "-v", "kde,todo", fixture.mounted("bundles/a.hpwebsite")]).status, 0)
        XCTAssertEqual(Program.run(["setfattr", "-n", "user.xdg.tags", "-v", "todo", fixture.backed("notes.txt")]).status, 0)
        XCTAssertTrue(eventually(timeout: 1) {
            ViewComparison.mounted(mountPoint: self.fixture.mountPoint, view: "tag/todo") == ["0001 Alpha.hpwebsite", "0002 notes.txt"]
        }, "tag/todo: \(ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "tag/todo"))")
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [])
        XCTAssertEqual(Program.run(["setfattr", "-x", "user.xdg.tags", fixture.mounted("bundles/a.hpwebsite")]).status, 0)
        XCTAssertTrue(eventually(timeout: 1) { RawFiles.lstat(self.fixture.mounted("tag/kde")) == nil }, "tag/kde outlived its last tag")
    }

    /// The git-sync case: a reading list's history checked out commit by
    /// commit, oldest first; after each checkout every view of the mount
    /// (tag folders appearing and vanishing included) equals `queryfs ls`.
    /// Set QUERYFS_HISTORY_BUNDLE to replay a git bundle (e.g. shared/data/hpdata.bundle).
    func testCheckingOutEveryCommitThroughTheMount() throws {
        let scratch = makeTemporaryDirectory(prefix: "queryfs-history")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let repository = scratch + "/repo"
        if let bundle = ProcessInfo.processInfo.environment["QUERYFS_HISTORY_BUNDLE"] {
            XCTAssertEqual(Program.run(["git", "clone", "-q", bundle, repository]).status, 0)
        } else {
            try History.write(in: repository, commits: 25)
        }
        let commits = Program.run(["git", "-C", repository, "rev-list", "--reverse", "HEAD"]).stdoutText
            .split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(commits.count, 10)

        fixture = MountedFixture { _ in }
        try FileManager.default.removeItem(atPath: fixture.backing)
        XCTAssertEqual(Program.run(["git", "clone", "-q", repository, fixture.backing]).status, 0)
        XCTAssertEqual(Program.run(["git", "-C", fixture.backing, "checkout", "-q", commits[0]]).status, 0)
        try fixture.mount()
        for (number, commit) in commits.enumerated() {
            XCTAssertEqual(Program.run(["git", "-C", fixture.backing, "checkout", "-q", commit]).status, 0)
            let differences = ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 2)
            XCTAssertEqual(differences, [], "commit \(number) \(commit)")
            if !differences.isEmpty { return }
        }
    }
}

/// A small thread-safe flag.
final class Atomic<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}

/// UTIME_NOW from <sys/stat.h> (GNU-only in Swift's Glibc module).
let UTIME_NOW_VALUE = (1 << 30) - 1

/// A reading list's life in git: bundles added, retitled, archived, tagged, deleted.
enum History {
    static func write(in path: String, commits: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        _ = Program.run(["git", "init", "-q", path])
        var live: [String] = []
        let tags = ["Tag Number 0", "Tag Number 1", "rock/metal", "Work", "work"]
        let corpus = Corpus(path: path)
        for number in 0..<commits {
            let action = live.count < 4 ? 0 : number * 7 % 5
            switch action {
            case 0, 1:
                let name = "B\(number).hpwebsite"
                live.append(name)
                corpus.bundle(name, title: "Item \(number)", tags: [tags[number % tags.count]], mtime: 1_000 + number)
            case 2:
                corpus.bundle(live[number % live.count], title: "Edited \(number)", archived: number % 2 == 0,
                              tags: Array(tags.prefix(number % 3)), mtime: 1_000 + number)
            case 3:
                let name = live.remove(at: number % live.count)
                try FileManager.default.removeItem(atPath: path + "/" + name)
            default:
                corpus.bundle(live[number % live.count], title: "Archived \(number)", archived: true, mtime: 1_000 + number)
            }
            _ = Program.run(["git", "-C", path, "add", "-A"])
            _ = Program.run(["git", "-C", path, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "step \(number)"])
        }
    }
}
