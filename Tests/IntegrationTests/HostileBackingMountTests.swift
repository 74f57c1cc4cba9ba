import Foundation
import QueryFSTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A backing directory full of what a careless or hostile user (or a sync
/// tool) can leave there — names of every kind, payloads that once trapped or
/// stalled the daemon, files that are not files — mounted for real: every
/// item is listed, every bad one is reported by `queryfs status`, the daemon
/// stays alive and idle, and later changes (to the hostile items too) show.
final class HostileBackingMountTests: MountTestCase {
    private static func binaryPayload(_ corpus: Corpus, _ name: String, _ build: (inout BinaryPlistBuilder) -> Int) {
        var builder = BinaryPlistBuilder()
        let top = build(&builder)
        mkdir(corpus.path + "/" + name, 0o755)
        corpus.write(corpus.path + "/" + name + "/payload.plist", builder.bytes(top: top))
    }

    private static func xmlPayload(_ corpus: Corpus, _ name: [UInt8], _ body: String) {
        let directory = Array((corpus.path + "/").utf8) + name
        directory.withCString { _ = mkdir($0, 0o755) }
        corpus.write(directory + Array("/payload.plist".utf8), Array("<plist version=\"1.0\">\(body)</plist>".utf8))
    }

    /// A dictionary `{key: value}` in a binary plist.
    private static func single(_ builder: inout BinaryPlistBuilder, _ key: String, _ value: Int) -> Int {
        let keyReference = builder.string(key)
        return builder.dictionary([(keyReference, value)])
    }

    /// Items that are fine, however odd their names.
    static let oddNames: [[UInt8]] = [
        Array("caf".utf8) + [0xE9, 0xFF, 0xFE] + Array(".hpwebsite".utf8),     // not UTF-8
        Array("line\nbreak.hpwebsite".utf8),
        Array(String(repeating: "x", count: 245).utf8) + Array(".hpwebsite".utf8),  // 255 bytes
        [0x01, 0x7F] + Array("ctl.hpwebsite".utf8),
        Array("-rf .hpwebsite".utf8),
        Array(" spaced .hpwebsite".utf8),
        Array("0001 looks like a rank.hpwebsite".utf8),
        Array("..dots".utf8),                                                  // hidden: not an item
    ]

    /// Items whose payload is bad, each reported by `queryfs status` under its name.
    static let reported = ["deep-binary.b", "deep-xml.b", "deep-json.b", "shared.b", "many-tags.b", "huge.b", "truncated.b",
                           "payload-is-a-folder.b", "fifo-payload.b"]

    private static func hostile(_ corpus: Corpus) {
        for number in 0..<20 {
            corpus.bundle("good-\(number).hpwebsite", title: "Good \(number)", tags: number % 2 == 0 ? ["even"] : [], mtime: 1_000 + number)
        }
        for name in oddNames {
            xmlPayload(corpus, name, "<dict><key>title</key><string>\(String(repeating: "/", count: 1_000))</string></dict>")
        }
        // Dates and numbers outside every range: these trapped at mount and on the next change.
        for (name, seconds) in [("inf.b", Double.infinity), ("minus-inf.b", -.infinity), ("nan-date.b", .nan), ("huge-date.b", 1e300)] {
            binaryPayload(corpus, name) { single(&$0, "d", $0.date(seconds)) }
        }
        xmlPayload(corpus, Array("nan.b".utf8), "<dict><key>n</key><real>nan</real><key>title</key><string>NaN</string></dict>")
        xmlPayload(corpus, Array("number.b".utf8), "<dict><key>n</key><real>2</real></dict>")
        // Depth and expansion.
        binaryPayload(corpus, "deep-binary.b") { builder in
            var inner = builder.array([])
            for _ in 0..<200_000 { inner = builder.array([inner]) }
            return inner
        }
        xmlPayload(corpus, Array("deep-xml.b".utf8), String(repeating: "<array>", count: 100_000) + String(repeating: "</array>", count: 100_000))
        mkdir(corpus.path + "/deep-json.b", 0o755)
        corpus.write(corpus.path + "/deep-json.b/payload.json", Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8))
        binaryPayload(corpus, "shared.b") { builder in
            var inner = builder.string("leaf")
            for _ in 0..<40 { inner = builder.array([inner, inner]) }
            return single(&builder, "tags", inner)
        }
        xmlPayload(corpus, Array("entities.b".utf8), "<dict><key>title</key><string>\(String(repeating: "&amp;", count: 250_000))</string></dict>")
        xmlPayload(corpus, Array("many-tags.b".utf8),
                   "<dict><key>tags</key><array>\((0..<20_000).map { "<string>t\($0)</string>" }.joined())</array></dict>")
        // Files that are not what they are named.
        mkdir(corpus.path + "/huge.b", 0o755)
        close(open(corpus.path + "/huge.b/payload.plist", O_CREAT | O_WRONLY, 0o644))
        truncate(corpus.path + "/huge.b/payload.plist", 17 << 20)
        mkdir(corpus.path + "/truncated.b", 0o755)
        corpus.write(corpus.path + "/truncated.b/payload.plist", Array("bplist00".utf8) + [0xD1, 0x01])
        mkdir(corpus.path + "/payload-is-a-folder.b", 0o755)
        mkdir(corpus.path + "/payload-is-a-folder.b/payload.plist", 0o755)
        mkdir(corpus.path + "/fifo-payload.b", 0o755)
        mkfifo(corpus.path + "/fifo-payload.b/payload.plist", 0o644)
        mkfifo(corpus.path + "/a-fifo", 0o644)
        mknod(corpus.path + "/a-device", S_IFCHR | 0o644, (1 << 8) | 3)  // 1:3, as /dev/null
        mknod(corpus.path + "/a-socket", S_IFSOCK | 0o644, 0)
        symlink("/dev/zero", corpus.path + "/a-link-to-dev-zero")
        var deep = corpus.path + "/deep-folders.b"
        for level in 0..<70 {
            mkdir(deep, 0o755)
            deep += "/\(level)"
        }
        corpus.write(corpus.path + "/.queryfs.toml", Array("""
            [views]
            numbers = "sort:payload.n,name"
            dates = "sort:-payload.d,name"
            """.utf8))
    }

    /// Seconds of CPU the process has used (user and system).
    private func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func testAHostileBackingDirectoryIsListedReportedAndStaysLive() throws {
        fixture = MountedFixture(corpus: Self.hostile)
        try fixture.mount()
        let items = (RawFiles.list(fixture.backing) ?? []).filter { $0.first != UInt8(ascii: ".") }
        XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, items.count, "every item is listed")
        // Every view but the 1,024 one-item folders of many-tags.b (a `queryfs ls` each); their names are compared.
        let compared: (String) -> Bool = { !$0.hasPrefix("tag/t") }
        XCTAssertEqual(ViewComparison.differences(backing: fixture.backing, mountPoint: fixture.mountPoint, including: compared), [])
        // Every good item, under its (sanitized) title; every odd name reaches its bundle.
        let byName = (RawFiles.list(fixture.mounted("by-name")) ?? []).map(\.text)
        for number in 0..<20 { XCTAssertTrue(byName.contains { $0.hasSuffix(" Good \(number).hpwebsite") }, "Good \(number)") }
        for entry in RawFiles.list(fixture.mounted("by-name")) ?? [] {
            XCTAssertNotNil(RawFiles.lstat(Array(fixture.mounted("by-name/").utf8) + entry), entry.text)
            XCTAssertNotNil(RawFiles.readlink(Array(fixture.mounted("by-name/").utf8) + entry), entry.text)
        }
        let status = QueryfsBinary.run(["status", fixture.backing])
        XCTAssertEqual(status.status, 0, status.stderrText)
        // BACKING is mounted: the daemon answers, every problem by item in its JSON.
        XCTAssertTrue(status.stdoutText.hasPrefix("mounted at: \(fixture.mountPoint)"), status.stdoutText)
        for name in Self.reported { XCTAssertTrue(status.stdoutText.contains("{\"item\":\"\(name)\""), "\(name) not reported:\n\(status.stdoutText)") }
        XCTAssertEqual(RawFiles.list(fixture.mounted("tag/t0"))?.count, 1)
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/t2000")), "tags past the limit are not used")

        // Alive and idle: no work left behind (a stalled parse or a busy loop would show).
        let pid = try XCTUnwrap(fixture.daemonPID())
        let before = try XCTUnwrap(cpuSeconds(pid))
        sleep(2)
        let used = try XCTUnwrap(cpuSeconds(pid)) - before
        XCTAssertLessThan(used, 0.2, "the daemon used \(used) s of CPU in 2 s while nothing changed")

        // Later changes show, to the hostile items too: the NaN item moves, a new one comes.
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed("nan.b/payload.plist"), Array("<plist><dict><key>n</key><real>1</real></dict></plist>".utf8))
        corpus.write(fixture.backed("inf.b/payload.plist"), Array("<plist><dict><key>d</key><date>2024-01-01T00:00:00Z</date></dict></plist>".utf8))
        corpus.bundle("later.hpwebsite", title: "Later", mtime: 9_000)
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 3, including: compared), [])
        XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, items.count + 1)
        XCTAssertTrue(MountTable.isMounted(fixture.mountPoint))
        XCTAssertNotNil(fixture.daemonPID(), "the daemon is gone")
    }
}
