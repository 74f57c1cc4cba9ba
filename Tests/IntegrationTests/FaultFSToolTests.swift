import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// faultfs itself (`Tests/Tools/faultfs.py`), without queryfs: the fault
/// and crash tests trust it, so a fault that fires elsewhere than asked, or
/// a crash model that keeps what was never made durable, must fail here
/// rather than pass or fail a daemon test for the wrong reason.
final class FaultFSToolTests: FaultMountTestCase {
    private func start(crashModel: Bool = false) throws {
        try makeFaultBacking(crashModel: crashModel) { corpus in
            corpus.file(Array("a".utf8), contents: Array("old a".utf8), mtime: 1_000)
            corpus.file(Array("b".utf8), contents: Array("old b".utf8), mtime: 1_000)
        }
    }

    private var mounted: String { fixture.backing }

    /// Writes through faultfs; 0 or the errno of the first call that failed (open, write, fsync or close).
    private func write(_ name: String, _ text: String, flags: Int32 = O_WRONLY | O_TRUNC, sync: Bool = false) -> Int32 {
        let fd = open(mounted + "/" + name, flags, 0o644)
        guard fd >= 0 else { return errno }
        let bytes = Array(text.utf8)
        if bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) != bytes.count {
            let code = errno
            close(fd)
            return code
        }
        if sync, fsync(fd) != 0 {
            let code = errno
            close(fd)
            return code
        }
        return close(fd) == 0 ? 0 : errno
    }

    private func syncFolder(_ relative: String = "") -> Int32 {
        let fd = open(mounted + (relative.isEmpty ? "" : "/" + relative), O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? 0 : errno
    }

    func testAFaultFiresAtItsOperationAndPathAsOftenAsAsked() throws {
        try start()
        try faultfs!.fail("write", "ENOSPC", path: "a")
        XCTAssertEqual(write("b", "new b"), 0, "another path")
        XCTAssertEqual(write("a", "new a"), ENOSPC)
        XCTAssertEqual(RawFiles.read(source + "/a"), [], "opened with O_TRUNC, then the write failed: nothing written")
        XCTAssertEqual(write("a", "new a"), 0, "count=1: once")
        try faultfs!.clear()
        try faultfs!.fail("fsync", "EDQUOT", count: 0, skip: 1)
        XCTAssertEqual(write("a", "1", sync: true), 0, "skip=1: the first passes")
        XCTAssertEqual(write("a", "2", sync: true), EDQUOT)
        XCTAssertEqual(write("b", "3", sync: true), EDQUOT, "count=0: always")
        try faultfs!.clear()
        try faultfs!.fail("close", "EIO", path: "b")
        XCTAssertEqual(write("b", "4"), EIO, "close(2) answers the flush's errno")
        XCTAssertEqual(RawFiles.read(source + "/b"), Array("4".utf8), "a flush fault loses nothing written")
        try faultfs!.fail("rename", "EIO")
        XCTAssertEqual(rename(mounted + "/a", mounted + "/c"), -1)
        XCTAssertEqual(errno, EIO)
        XCTAssertNotNil(RawFiles.lstat(source + "/a"), "a failed rename changes nothing")
        try faultfs!.fail("create", "ENOSPC")
        XCTAssertEqual(write("new", "x", flags: O_WRONLY | O_CREAT | O_EXCL), ENOSPC)
        XCTAssertNil(RawFiles.lstat(source + "/new"))
        try faultfs!.fail("open-write", "EIO", path: "b")
        XCTAssertNotNil(RawFiles.read(mounted + "/b"), "an open for reading passes")
        XCTAssertEqual(write("b", "5"), EIO)
        XCTAssertEqual(RawFiles.read(source + "/b"), Array("4".utf8), "the failed open truncated nothing")
        XCTAssertThrowsError(try faultfs!.fail("frobnicate", "EIO"), "an unknown operation is refused")
        XCTAssertThrowsError(try faultfs!.fail("write", "ENOTANERRNO"), "an unknown errno is refused")
        // The faults still armed (clear forgot the first two): flush, rename, create, open-write.
        XCTAssertEqual(try faultfs!.fired(), 4)
    }

    func testTheCrashModelKeepsOnlyWhatWasMadeDurable() throws {
        try start(crashModel: true)
        let states = fixture.root + "/states"
        XCTAssertEqual(mkdir(states, 0o755), 0)
        var number = 0
        /// The durable state now, read back as name → contents.
        func durable() throws -> [String: String] {
            number += 1
            let folder = "\(states)/\(number)"
            try faultfs!.durableState(after: -1, into: folder)
            var files: [String: String] = [:]
            for name in (RawFiles.list(folder) ?? []).map(\.text) {
                files[name] = RawFiles.read(folder + "/" + name).map { String(decoding: $0, as: UTF8.self) } ?? "(folder)"
            }
            return files
        }
        XCTAssertEqual(try durable(), ["a": "old a", "b": "old b"], "the start is durable")
        XCTAssertEqual(write("a", "new a"), 0)
        XCTAssertEqual(try durable(), ["a": "old a", "b": "old b"], "written, not fsync'ed")
        XCTAssertEqual(write("a", "new a", sync: true), 0)
        XCTAssertEqual(try durable()["a"], "new a", "fsync'ed")
        XCTAssertEqual(write("c", "made", flags: O_WRONLY | O_CREAT | O_EXCL, sync: true), 0)
        XCTAssertNil(try durable()["c"], "a new file's entry waits for its folder's fsync")
        XCTAssertEqual(write("d", "never synced", flags: O_WRONLY | O_CREAT | O_EXCL), 0)
        XCTAssertEqual(syncFolder(), 0)
        XCTAssertEqual(try durable()["c"], "made")
        XCTAssertEqual(try durable()["d"], "", "an entry durable, its contents not: empty")
        // The careful save: the new file renamed over the old.
        XCTAssertEqual(write(".b.new", "saved b", flags: O_WRONLY | O_CREAT | O_EXCL, sync: true), 0)
        XCTAssertEqual(rename(mounted + "/.b.new", mounted + "/b"), 0)
        XCTAssertEqual(try durable()["b"], "old b", "renamed, the folder not fsync'ed: the old file")
        XCTAssertEqual(syncFolder(), 0)
        var files = try durable()
        XCTAssertEqual(files["b"], "saved b")
        XCTAssertNil(files[".b.new"])
        // Folders: a new one is empty until it is fsync'ed itself.
        XCTAssertEqual(mkdir(mounted + "/f", 0o755), 0)
        XCTAssertEqual(write("f/inside", "x", flags: O_WRONLY | O_CREAT | O_EXCL, sync: true), 0)
        XCTAssertEqual(syncFolder(), 0)
        files = try durable()
        XCTAssertEqual(files["f"], "(folder)")
        XCTAssertEqual(RawFiles.list("\(states)/\(number)/f")?.count, 0, "f's own entries were never made durable")
        XCTAssertEqual(syncFolder("f"), 0)
        _ = try durable()
        XCTAssertEqual(RawFiles.read("\(states)/\(number)/f/inside"), Array("x".utf8))
        // Each fsync is a point; a state after any of them can be written out.
        let points = try faultfs!.points()
        XCTAssertEqual(points.first?.kind, "start")
        XCTAssertEqual(points.filter { $0.kind == "fsync" }.count, 4)
        XCTAssertEqual(points.filter { $0.kind == "fsyncdir" }.count, 4)
        // A power cut after two more operations: the third fails, and all after it.
        try faultfs!.crash(afterOperations: 2, into: fixture.root + "/cut")
        XCTAssertEqual(write("a", "cut", sync: true), EIO, "the truncation and the write happen, the fsync is the third")
        XCTAssertTrue(faultfs!.crashed)
        XCTAssertNil(RawFiles.read(mounted + "/b"), "reads fail too after a crash")
        XCTAssertEqual(RawFiles.read(fixture.root + "/cut/a"), Array("new a".utf8), "the cut lost the unsynced write")
    }
}
