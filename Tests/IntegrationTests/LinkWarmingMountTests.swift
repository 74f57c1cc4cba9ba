import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The first long listing of a large view: the mount reads the links ahead
/// of `ls -l` (LinkWarmer). What it must not do is change what is shown, nor
/// leave threads behind, nor trip over a view that changes while it reads.
final class LinkWarmingMountTests: MountTestCase {
    private static let bundleCount = 3_000

    private func makeFixture() {
        fixture = MountedFixture { corpus in
            for number in 0..<Self.bundleCount {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", tags: number % 2 == 0 ? ["even"] : [],
                              mtime: 1_000 + number)
            }
        }
    }

    /// The daemon's link-reading threads (named queryfs-links) alive now.
    private func readingThreads(_ pid: pid_t) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).filter {
            (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8))?.hasPrefix("queryfs-links") == true
        }.count
    }

    /// Thread stacks the daemon has mapped: glibc puts one guard page below
    /// each (an anonymous mapping with no access), and keeps a joinable
    /// thread's stack until it is joined, so dead threads nobody joined
    /// show here and not in /proc/PID/task.
    private func mappedStacks(_ pid: pid_t) -> Int {
        ((try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? "").split(separator: "\n").filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 5, fields[1] == "---p", let range = fields.first?.split(separator: "-"), range.count == 2,
                  let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16) else { return false }
            return end - start == 4096
        }.count
    }

    private func threads(_ pid: pid_t) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).count
    }

    /// `ls -l` parsed: entry name → link target.
    private func longListing(_ view: String) -> [String: String] {
        let result = Program.run(["ls", "-l", fixture.mounted(view)])
        XCTAssertEqual(result.status, 0, result.stderrText)
        var targets: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") where line.hasPrefix("l") {
            guard let arrow = line.range(of: " -> ") else { continue }
            let before = line[..<arrow.lowerBound]
            // The name starts after the time column; names here have no " -> ".
            let name = before.split(separator: " ", maxSplits: 8, omittingEmptySubsequences: true).last.map(String.init) ?? ""
            targets[name] = String(line[arrow.upperBound...])
        }
        return targets
    }

    func testAFirstLongListingShowsEveryTargetAndLeavesNoThreads() throws {
        makeFixture()
        try fixture.mount()
        let pid = try XCTUnwrap(fixture.daemonPID())
        let expected = QueryfsBinary.run(["ls", "--long", fixture.backing, "by-name"]).stdoutText.split(separator: "\n")
            .map { $0.split(separator: "\t", maxSplits: 1).map(String.init) }
        XCTAssertEqual(expected.count, Self.bundleCount)
        let before = try readlinkRequests()
        let shown = longListing("by-name")
        XCTAssertEqual(shown.count, Self.bundleCount)
        for fields in expected { XCTAssertEqual(shown[fields[0]], fields[1], fields[0]) }
        XCTAssertTrue(eventually { self.readingThreads(pid) == 0 }, "reading threads left: \(readingThreads(pid))")
        // The sixteen reading threads are gone with their stacks: a soak of
        // 30 minutes left 24,784 dead threads' stacks mapped (282 MB).
        // glibc keeps up to 40 MiB of freed stacks for reuse: five of 8 MiB.
        XCTAssertLessThanOrEqual(mappedStacks(pid), threads(pid) + 5, "stacks of threads that ended are still mapped")
        // Each target was asked for once, by `ls` or by the warmer: the
        // listing was read once, not again at each readlink answered.
        let first = try readlinkRequests() - before
        XCTAssertLessThanOrEqual(first, Self.bundleCount + 10)
        XCTAssertGreaterThanOrEqual(first, Self.bundleCount)
        // The kernel may drop cached symlink pages by itself between two
        // listings (this machine runs DAMON's proactive reclaim, the likely
        // cause: a full CI run saw 118 of 3,000 read again, runs of this
        // test alone none), so the check is of two listings in a row: the
        // daemon invalidated nothing, and the second asks for no target.
        XCTAssertEqual(longListing("by-name").count, Self.bundleCount)
        let afterSecond = try readlinkRequests()
        XCTAssertLessThanOrEqual(afterSecond - before - first, Self.bundleCount / 10, "a second ls -l read most targets again")
        XCTAssertEqual(longListing("by-name").count, Self.bundleCount)
        XCTAssertEqual(try readlinkRequests() - afterSecond, 0, "an ls -l right after another is served from the kernel's cache")
    }

    /// READLINK requests the kernel sent since the mount (the status file's `kernelRequests`).
    private func readlinkRequests() throws -> Int {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
        let status = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (status["kernelRequests"] as? [String: Int])?["READLINK"] ?? 0
    }

    func testAViewChangingWhileItsLinksAreReadStaysRight() throws {
        makeFixture()
        try fixture.mount()
        // Start a long listing of `tag/even`, and change the view under it.
        let corpus = Corpus(path: fixture.backing)
        let lister = Program.spawn(["ls", "-l", fixture.mounted("tag/even")], stdout: "/dev/null", stderr: fixture.root + "/ls-err")
        for number in stride(from: 0, to: 200, by: 2) {
            corpus.write(fixture.backed("b\(number).hpwebsite/payload.plist"),
                         Array(Corpus.plist(title: "Moved \(number)", archived: false, tags: []).utf8))
        }
        // An entry whose item left the view between readdir and lstat is gone,
        // as a file deleted mid-listing is on any filesystem (ls exits 1 and
        // says "No such file or directory"); nothing else may go wrong.
        let status = Program.wait(lister)
        let complaints = ((try? String(contentsOfFile: fixture.root + "/ls-err", encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { !$0.contains("No such file or directory") }
        XCTAssertTrue(status == 0 || status == 1, "ls -l exited \(status)")
        XCTAssertEqual(complaints, [])
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10,
                                             including: { $0 == "tag/even" || $0 == "by-name" }), [])
        let shown = longListing("tag/even")
        XCTAssertEqual(shown.count, Self.bundleCount / 2 - 100)
        XCTAssertTrue(shown.values.allSatisfy { $0.hasPrefix("../../bundles/b") }, "\(shown.values.prefix(3))")
    }
}
