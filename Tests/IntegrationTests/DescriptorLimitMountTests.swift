import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's open descriptors do not grow with the nodes the kernel
/// knows: a walk of `bundles/` (what `find`, a backup tool or a file
/// manager's search does) succeeds with the daemon held to 128 descriptors,
/// and nodes whose descriptors were let go still answer.
final class DescriptorLimitMountTests: MountTestCase {
    private static let bundleCount = 1_500

    private func makeFixture() {
        fixture = MountedFixture { corpus in
            for number in 0..<Self.bundleCount {
                corpus.bundle("b\(number).hpwebsite", title: "Item \(number)", tags: number % 7 == 0 ? ["seven"] : [],
                              mtime: 1_000 + number)
                if number % 10 == 0 {
                    mkdir(corpus.path + "/b\(number).hpwebsite/nested", 0o755)
                    corpus.write(corpus.path + "/b\(number).hpwebsite/nested/note.txt", Array("note \(number)\n".utf8))
                }
            }
        }
    }

    /// Every path under `root` with its type, size and contents (files read whole).
    private func walk(_ root: String) -> [String: String] {
        var seen: [String: String] = [:]
        var folders = [""]
        while let relative = folders.popLast() {
            guard let names = RawFiles.list(root + relative) else {
                seen[relative] = "unlistable: \(String(cString: strerror(errno)))"
                continue
            }
            for name in names {
                let path = relative + "/" + String(decoding: name, as: UTF8.self)
                guard let status = RawFiles.lstat(root + path) else {
                    seen[path] = "no stat: \(String(cString: strerror(errno)))"
                    continue
                }
                if status.st_mode & S_IFMT == S_IFDIR {
                    seen[path] = "folder"
                    folders.append(path)
                } else if let bytes = RawFiles.read(root + path) {
                    seen[path] = "file \(status.st_size) \(bytes.hashValue)"
                } else {
                    seen[path] = "unreadable: \(String(cString: strerror(errno)))"
                }
            }
        }
        return seen
    }

    private func openDescriptors(of pid: pid_t) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    func testAWalkOfBundlesSucceedsWithFewDescriptors() throws {
        makeFixture()
        try fixture.mount([], prefix: ["prlimit", "--nofile=128:128"])
        let pid = try XCTUnwrap(fixture.daemonPID())
        let expected = walk(fixture.backing)
        XCTAssertGreaterThan(expected.count, 2 * Self.bundleCount)
        let mounted = walk(fixture.mounted("bundles"))
        XCTAssertEqual(mounted.count, expected.count)
        XCTAssertEqual(mounted.filter { expected[$0.key] != $0.value }.map { "\($0.key): \($0.value)" }.sorted().prefix(5), [])
        XCTAssertLessThanOrEqual(openDescriptors(of: pid), 128)

        // The first bundles' descriptors were let go long ago: they still answer,
        // for reading, writing, renaming and removing.
        let first = fixture.mounted("bundles/b0.hpwebsite")
        XCTAssertEqual(RawFiles.write(first + "/nested/note.txt", Array("rewritten\n".utf8)), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("b0.hpwebsite/nested/note.txt")), Array("rewritten\n".utf8))
        XCTAssertEqual(rename(first + "/nested/note.txt", first + "/nested/renamed.txt"), 0)
        XCTAssertEqual(unlink(fixture.mounted("bundles/b10.hpwebsite/nested/note.txt")), 0)
        XCTAssertNil(RawFiles.lstat(fixture.backed("b10.hpwebsite/nested/note.txt")))
        XCTAssertEqual(chmod(fixture.mounted("bundles/b20.hpwebsite/payload.plist"), 0o600), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("b20.hpwebsite/payload.plist")).map { $0.st_mode & 0o777 }, 0o600)

        // And a second walk, after changes made straight in BACKING, still matches.
        Corpus(path: fixture.backing).write(fixture.backed("b30.hpwebsite/nested/note.txt"), Array("changed in BACKING\n".utf8))
        XCTAssertTrue(eventually { self.walk(self.fixture.mounted("bundles")) == self.walk(self.fixture.backing) })
        XCTAssertLessThanOrEqual(openDescriptors(of: pid), 128)
    }

    func testTheSoftLimitIsRaisedToTheHardOne() throws {
        makeFixture()
        try fixture.mount([], prefix: ["prlimit", "--nofile=256:4096"])
        let pid = try XCTUnwrap(fixture.daemonPID())
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        XCTAssertEqual(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first, "4096", String(line))
    }

    /// The kernel grows a descriptor table by waiting out an RCU grace
    /// period in the thread that needed it (10–15 ms): the daemon grows its
    /// table once at start for the node descriptors it may keep, so no
    /// request or change waits for that later.
    func testTheDescriptorTableIsGrownAtStartForTheNodesItMayKeep() throws {
        makeFixture()
        // A quarter of 4,096 for node descriptors (fewer than two per item here), and 256 more.
        try fixture.mount([], prefix: ["prlimit", "--nofile=4096:4096"])
        let pid = try XCTUnwrap(fixture.daemonPID())
        func tableSlots() -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("FDSize:") }) else { return nil }
            return Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces))
        }
        XCTAssertTrue(eventually { (tableSlots() ?? 0) >= 1_024 + 256 }, "FDSize \(tableSlots() ?? -1)")
        XCTAssertLessThan(openDescriptors(of: pid), 256, "grown, not filled")
    }
}
