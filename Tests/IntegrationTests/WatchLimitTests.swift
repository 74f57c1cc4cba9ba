import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The inotify watch limit used up (`fs.inotify.max_user_watches` lowered
/// for the test, restored after): an inotify mount still comes up, says once
/// how to raise the limit, and polls what it cannot watch, so views still
/// follow every change; a fanotify mount needs no watch per bundle at all.
final class WatchLimitTests: MountTestCase {
    private var savedLimit: String?
    private static let limitFile = "/proc/sys/fs/inotify/max_user_watches"

    override func tearDown() {
        super.tearDown()
        if let savedLimit { try? savedLimit.write(toFile: Self.limitFile, atomically: false, encoding: .utf8) }
        savedLimit = nil
    }

    /// The inotify watches this user holds now, in every process.
    private func watchesInUse() -> Int {
        var count = 0
        let uid = "\(getuid())"
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") })?.split(separator: "\t").dropFirst().first == Substring(uid)
            else { continue }
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fdinfo")) ?? [] {
                let info = (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)) ?? ""
                count += info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
            }
        }
        return count
    }

    private func limitWatches(to value: Int) throws {
        savedLimit = try String(contentsOfFile: Self.limitFile, encoding: .utf8)
        try "\(value)\n".write(toFile: Self.limitFile, atomically: false, encoding: .utf8)
    }

    private func makeFixture() {
        fixture = MountedFixture { corpus in
            for number in 0..<20 {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", archived: number % 4 == 0,
                              tags: number % 3 == 0 ? ["three"] : [], mtime: 1_000 + number)
            }
            corpus.file(Array("notes.txt".utf8), contents: Array("plain\n".utf8), mtime: 900)
        }
    }

    /// Creates, edits in place, deletes and renames in BACKING; the views
    /// must equal a fresh computation within a few polling rounds.
    private func changeAndSettle() {
        let corpus = Corpus(path: fixture.backing)
        corpus.bundle("new.hpwebsite", title: "Brand new", tags: ["three", "fresh"], mtime: 9_000)
        corpus.write(fixture.backed("b1.hpwebsite/payload.plist"),
                     Array(Corpus.plist(title: "Edited in place", archived: true, tags: ["edited"]).utf8))
        try? FileManager.default.removeItem(atPath: fixture.backed("b2.hpwebsite"))
        rename(fixture.backed("b3.hpwebsite"), fixture.backed("renamed.hpwebsite"))
        corpus.file(Array("notes.txt".utf8), contents: Array("plain, longer now\n".utf8), mtime: 9_500)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 20), [],
                       "views differ 20 s after the changes")
    }

    private func assertLogSaysHowToRaiseTheLimit(_ log: String) {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").filter { $0.contains("max_user_watches") }
        XCTAssertEqual(lines.count, 1, text)
        XCTAssertTrue(lines.first?.contains("sysctl fs.inotify.max_user_watches=") == true, text)
    }

    func testBackingThatCannotBeWatchedIsPolled() throws {
        makeFixture()
        let log = fixture.root + "/mount.log"
        try limitWatches(to: watchesInUse())  // not one more: BACKING itself cannot be watched
        try fixture.mount(["--log", log, "--notify", "inotify"])
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [])
        assertLogSaysHowToRaiseTheLimit(log)
        changeAndSettle()
    }

    func testBundlesBeyondTheLimitArePolled() throws {
        makeFixture()
        let log = fixture.root + "/mount.log"
        try limitWatches(to: watchesInUse() + 4)  // BACKING and three bundles
        try fixture.mount(["--log", log, "--notify", "inotify"])
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint), [])
        assertLogSaysHowToRaiseTheLimit(log)
        changeAndSettle()
    }

    /// The same tiny limit does not touch a fanotify mount: BACKING's one
    /// watch and the mark follow every bundle, nothing is polled, nothing warned.
    func testFanotifyNeedsNoWatchPerBundle() throws {
        try XCTSkipIf(getuid() != 0, "a filesystem mark needs CAP_SYS_ADMIN; CI runs as root")
        makeFixture()
        let log = fixture.root + "/mount.log"
        try limitWatches(to: watchesInUse() + 2)  // BACKING, and one to spare
        try fixture.mount(["--log", log, "--notify", "fanotify"])
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        XCTAssertFalse(text.contains("max_user_watches"), text)
        XCTAssertFalse(text.contains("polling"), text)
        let status = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        let fields = try XCTUnwrap(JSONSerialization.jsonObject(with: status) as? [String: Any])
        XCTAssertEqual(fields["changeNotification"] as? String, "fanotify")
        let started = Date()
        changeAndSettle()
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "changes took polling rounds to show")
    }
}
