import Foundation
import XCTest
import Synchronization
import CSystemShims
// sys/xattr.h, which Swift's Glibc module leaves out, comes with the libfuse module.
import CFuse
#if canImport(Glibc)
import Glibc
#endif

/// `bundles/`: the backing directory, read and write (SPEC §3). Every change
/// made through the mount must land in BACKING exactly, with the errno the
/// backing file system gives.
final class PassthroughTests: XCTestCase {
    private var fixture: MountedFixture!
    private var bundles: String { fixture.mounted("bundles") }

    override func setUpWithError() throws {
        fixture = MountedFixture()
        try fixture.mount()
    }

    override func tearDown() {
        fixture?.unmount()
        XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "left mounted")
        fixture = nil
    }

    func testListingEqualsTheBackingDirectoryIncludingHiddenEntries() {
        let mounted = Set(RawFiles.list(bundles)!)
        XCTAssertEqual(mounted, Set(RawFiles.list(fixture.backing)!))
        XCTAssertTrue(mounted.contains(Array(".hidden-file".utf8)))
        XCTAssertEqual(RawFiles.read(bundles + "/.hidden-file"), Array("hidden\n".utf8))
        XCTAssertEqual(Set(RawFiles.list(bundles + "/alpha.hpwebsite")!), Set(RawFiles.list(fixture.backed("alpha.hpwebsite"))!))
    }

    func testAttributesEqualTheBackingFiles() {
        for name in ["alpha.hpwebsite", "alpha.hpwebsite/payload.plist", "notes.txt", ".hidden-file"] {
            let mounted = RawFiles.lstat(bundles + "/" + name)!, backed = RawFiles.lstat(fixture.backed(name))!
            XCTAssertEqual(mounted.st_mode, backed.st_mode, name)
            XCTAssertEqual(mounted.st_size, backed.st_size, name)
            XCTAssertEqual(mounted.st_uid, backed.st_uid, name)
            XCTAssertEqual(mounted.st_nlink, backed.st_nlink, name)
            XCTAssertEqual(mounted.st_mtim.tv_sec, backed.st_mtim.tv_sec, name)
            XCTAssertEqual(mounted.st_mtim.tv_nsec, backed.st_mtim.tv_nsec, name)
        }
    }

    /// Opens and closes on several threads at once, in one item: a release
    /// must never take the backing id or item lock of an open that got the
    /// same descriptor number meanwhile (that showed as EIO on open).
    func testConcurrentOpensAndClosesInOneItemNeverFail() throws {
        let item = try XCTUnwrap(RawFiles.list(bundles)?.map { String(decoding: $0, as: UTF8.self) }.first { $0.hasSuffix(".hpwebsite") })
        let directory = bundles + "/" + item
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let data = [UInt8](repeating: 0x61, count: 4096)
            var buffer = [UInt8](repeating: 0, count: 4097)
            for round in 0..<150 {
                let path = "\(directory)/concurrent-\(worker)-\(round % 20)"
                let writer = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                guard writer >= 0 else { failures.withLock { $0.append("create \(path): \(errno)") }; return }
                _ = data.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                close(writer)
                let reader = open(path, O_RDONLY)
                guard reader >= 0 else { failures.withLock { $0.append("open \(path): \(errno)") }; return }
                let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                close(reader)
                if count != 4096 { failures.withLock { $0.append("read \(path): \(count)") } }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
    }

    func testCreateWriteAppendAndRead() {
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        XCTAssertEqual(RawFiles.write(bundles + "/alpha.hpwebsite/new.bin", bytes, mode: 0o640), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("alpha.hpwebsite/new.bin")), bytes)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("alpha.hpwebsite/new.bin"))!.st_mode & 0o777, 0o640 & ~currentUmask())
        XCTAssertEqual(RawFiles.write(bundles + "/alpha.hpwebsite/new.bin", [7, 8, 9], flags: O_WRONLY | O_APPEND), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("alpha.hpwebsite/new.bin")), bytes + [7, 8, 9])
        XCTAssertEqual(RawFiles.read(bundles + "/alpha.hpwebsite/new.bin"), bytes + [7, 8, 9])
        // O_EXCL on an existing file: EEXIST, as the backing file system says.
        XCTAssertEqual(RawFiles.write(bundles + "/alpha.hpwebsite/new.bin", [1], flags: O_WRONLY | O_CREAT | O_EXCL), EEXIST)
        // A write made in BACKING is read through the mount.
        RawFiles.write(fixture.backed("notes.txt"), Array("changed behind the mount\n".utf8))
        XCTAssertEqual(RawFiles.read(bundles + "/notes.txt"), Array("changed behind the mount\n".utf8))
    }

    /// Issue 30: a close of a file opened for writing is a FLUSH (so a
    /// network filesystem's close error reaches the writer); reads send
    /// none, nor does reading the status file.
    func testOnlyClosesOfWrittenFilesAreFlushed() throws {
        func flushes() throws -> Int {
            let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")))
            let status = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return (status["kernelRequests"] as? [String: Int])?["FLUSH"] ?? 0
        }
        let before = try flushes()
        for _ in 0..<5 { XCTAssertNotNil(RawFiles.read(bundles + "/alpha.hpwebsite/payload.plist")) }
        XCTAssertEqual(try flushes(), before, "reads and status reads sent FLUSH")
        XCTAssertEqual(RawFiles.write(bundles + "/alpha.hpwebsite/flushed.txt", [1, 2, 3]), 0)
        XCTAssertEqual(try flushes(), before + 1, "one close of a written file, one FLUSH")
    }

    /// The kernel keeps file pages and folder listings inside items across
    /// opens; every change made in BACKING must still show through the
    /// mount: a same-size rewrite within one clock tick of the first read,
    /// files added and removed in a bundle and in a folder deep inside it.
    func testChangesInBackingShowThroughTheKernelCaches() {
        let payload = "alpha.hpwebsite/payload.plist"
        let deep = "alpha.hpwebsite/a/b"
        XCTAssertEqual(mkdir(fixture.backed("alpha.hpwebsite/a"), 0o755), 0)
        XCTAssertEqual(mkdir(fixture.backed(deep), 0o755), 0)
        XCTAssertTrue(eventually(timeout: 1) { RawFiles.list(self.bundles + "/" + deep) != nil })
        for round in 0..<5 {
            // Read (and so cache) first, then change behind the mount at once.
            _ = RawFiles.read(bundles + "/" + payload)
            _ = RawFiles.list(bundles + "/alpha.hpwebsite")
            _ = RawFiles.list(bundles + "/" + deep)
            let contents = Array("version \(round) same size".utf8)
            RawFiles.write(fixture.backed(payload), contents)
            RawFiles.write(fixture.backed("alpha.hpwebsite/added-\(round)"), [1])
            RawFiles.write(fixture.backed(deep + "/deep-\(round)"), [2])
            if round > 0 {
                unlink(fixture.backed("alpha.hpwebsite/added-\(round - 1)"))
            }
            XCTAssertTrue(eventually(timeout: 1) { RawFiles.read(self.bundles + "/" + payload) == contents }, "round \(round): stale data")
            XCTAssertTrue(eventually(timeout: 1) {
                Set(RawFiles.list(self.bundles + "/alpha.hpwebsite") ?? []) == Set(RawFiles.list(self.fixture.backed("alpha.hpwebsite")) ?? [])
            }, "round \(round): stale bundle listing")
            XCTAssertTrue(eventually(timeout: 1) {
                Set(RawFiles.list(self.bundles + "/" + deep) ?? []) == Set(RawFiles.list(self.fixture.backed(deep)) ?? [])
            }, "round \(round): stale deep listing")
        }
    }

    func testPositionalWritesAndTruncate() {
        let path = bundles + "/notes.txt"
        let fd = open(path, O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(pwrite(fd, "XY", 2, 3), 2)
        XCTAssertEqual(fsync(fd), 0)
        XCTAssertEqual(fdatasync(fd), 0)
        XCTAssertEqual(ftruncate(fd, 6), 0)
        XCTAssertEqual(close(fd), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("notes.txt")), Array("plaXY ".utf8))
        XCTAssertEqual(truncate(path, 2), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("notes.txt")), Array("pl".utf8))
        XCTAssertEqual(truncate(path, 4096), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("notes.txt"))!.st_size, 4096)
    }

    func testRenameIncludingNoReplaceAndExchange() {
        XCTAssertEqual(rename(bundles + "/notes.txt", bundles + "/renamed.txt"), 0)
        XCTAssertNil(RawFiles.lstat(fixture.backed("notes.txt")))
        XCTAssertEqual(RawFiles.read(fixture.backed("renamed.txt")), Array("plain item\n".utf8))
        // A whole bundle, into another bundle.
        XCTAssertEqual(rename(bundles + "/gamma.hpwebsite", bundles + "/beta.hpwebsite/gamma-inside"), 0)
        XCTAssertNotNil(RawFiles.lstat(fixture.backed("beta.hpwebsite/gamma-inside/payload.plist")))

        RawFiles.write(bundles + "/one", Array("1".utf8))
        RawFiles.write(bundles + "/two", Array("2".utf8))
        XCTAssertEqual(qfs_renameat2(AT_FDCWD, bundles + "/one", AT_FDCWD, bundles + "/two", QFS_RENAME_NOREPLACE), -1)
        XCTAssertEqual(errno, EEXIST)
        XCTAssertEqual(qfs_renameat2(AT_FDCWD, bundles + "/one", AT_FDCWD, bundles + "/two", QFS_RENAME_EXCHANGE), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("one")), Array("2".utf8))
        XCTAssertEqual(RawFiles.read(fixture.backed("two")), Array("1".utf8))
        XCTAssertEqual(RawFiles.read(bundles + "/one"), Array("2".utf8))
        XCTAssertEqual(qfs_renameat2(AT_FDCWD, bundles + "/one", AT_FDCWD, bundles + "/three", QFS_RENAME_NOREPLACE), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("three")), Array("2".utf8))
        XCTAssertEqual(rename(bundles + "/missing", bundles + "/x"), -1)
        XCTAssertEqual(errno, ENOENT)
    }

    func testUnlinkMkdirRmdir() {
        XCTAssertEqual(unlink(bundles + "/notes.txt"), 0)
        XCTAssertNil(RawFiles.lstat(fixture.backed("notes.txt")))
        XCTAssertEqual(mkdir(bundles + "/new.hpwebsite", 0o750), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("new.hpwebsite"))!.st_mode & S_IFMT, S_IFDIR)
        XCTAssertEqual(mkdir(bundles + "/new.hpwebsite", 0o750), -1)
        XCTAssertEqual(errno, EEXIST)
        XCTAssertEqual(rmdir(bundles + "/alpha.hpwebsite"), -1)
        XCTAssertEqual(errno, ENOTEMPTY)
        XCTAssertEqual(rmdir(bundles + "/new.hpwebsite"), 0)
        XCTAssertNil(RawFiles.lstat(fixture.backed("new.hpwebsite")))
        XCTAssertEqual(unlink(bundles + "/does-not-exist"), -1)
        XCTAssertEqual(errno, ENOENT)
        // Removing a whole bundle, as `rm -r` does.
        XCTAssertEqual(unlink(bundles + "/beta.hpwebsite/payload.plist"), 0)
        XCTAssertEqual(rmdir(bundles + "/beta.hpwebsite"), 0)
        XCTAssertNil(RawFiles.lstat(fixture.backed("beta.hpwebsite")))
    }

    func testSymlinkReadlinkAndHardLink() {
        XCTAssertEqual(symlink("alpha.hpwebsite/payload.plist", bundles + "/link"), 0)
        XCTAssertEqual(RawFiles.readlink(Array(fixture.backed("link").utf8)), Array("alpha.hpwebsite/payload.plist".utf8))
        XCTAssertEqual(RawFiles.readlink(Array((bundles + "/link").utf8)), Array("alpha.hpwebsite/payload.plist".utf8))
        XCTAssertEqual(RawFiles.read(bundles + "/link"), RawFiles.read(fixture.backed("alpha.hpwebsite/payload.plist")))
        XCTAssertEqual(link(bundles + "/notes.txt", bundles + "/hard.txt"), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("hard.txt"))!.st_ino, RawFiles.lstat(fixture.backed("notes.txt"))!.st_ino)
        XCTAssertEqual(RawFiles.lstat(bundles + "/notes.txt")!.st_nlink, 2)
    }

    func testChmodChownUtimens() {
        XCTAssertEqual(chmod(bundles + "/notes.txt", 0o600), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("notes.txt"))!.st_mode & 0o7777, 0o600)
        XCTAssertEqual(RawFiles.lstat(bundles + "/notes.txt")!.st_mode & 0o7777, 0o600)
        XCTAssertEqual(chown(bundles + "/notes.txt", 12345, 54321), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("notes.txt"))!.st_uid, 12345)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("notes.txt"))!.st_gid, 54321)
        var times = [timespec(tv_sec: 1_234_567, tv_nsec: 890), timespec(tv_sec: 2_345_678, tv_nsec: 901)]
        XCTAssertEqual(utimensat(AT_FDCWD, bundles + "/notes.txt", &times, 0), 0)
        let backed = RawFiles.lstat(fixture.backed("notes.txt"))!
        XCTAssertEqual(backed.st_atim.tv_sec, 1_234_567)
        XCTAssertEqual(backed.st_mtim.tv_sec, 2_345_678)
        XCTAssertEqual(backed.st_mtim.tv_nsec, 901)
        // On a symlink itself (AT_SYMLINK_NOFOLLOW).
        XCTAssertEqual(symlink("notes.txt", bundles + "/link"), 0)
        XCTAssertEqual(utimensat(AT_FDCWD, bundles + "/link", &times, AT_SYMLINK_NOFOLLOW), 0)
        XCTAssertEqual(RawFiles.lstat(fixture.backed("link"))!.st_mtim.tv_sec, 2_345_678)
    }

    func testExtendedAttributes() {
        let path = bundles + "/notes.txt"
        XCTAssertEqual(setxattr(path, "user.queryfs.test", "value", 5, 0), 0)
        var buffer = [CChar](repeating: 0, count: 64)
        XCTAssertEqual(getxattr(fixture.backed("notes.txt"), "user.queryfs.test", &buffer, buffer.count), 5)
        XCTAssertEqual(String(decoding: buffer.prefix(5).map { UInt8(bitPattern: $0) }, as: UTF8.self), "value")
        XCTAssertEqual(getxattr(path, "user.queryfs.test", nil, 0), 5)
        XCTAssertEqual(getxattr(path, "user.queryfs.test", &buffer, buffer.count), 5)
        let listSize = listxattr(path, &buffer, buffer.count)
        XCTAssertGreaterThan(listSize, 0)
        XCTAssertTrue(String(decoding: buffer[0..<max(0, listSize)].map { UInt8(bitPattern: $0) }, as: UTF8.self).contains("user.queryfs.test"))
        XCTAssertEqual(getxattr(path, "user.missing", &buffer, buffer.count), -1)
        XCTAssertEqual(errno, ENODATA)
        XCTAssertEqual(removexattr(path, "user.queryfs.test"), 0)
        XCTAssertEqual(getxattr(fixture.backed("notes.txt"), "user.queryfs.test", &buffer, buffer.count), -1)
        // On a bundle directory too.
        XCTAssertEqual(setxattr(bundles + "/alpha.hpwebsite", "user.dir", "d", 1, 0), 0)
        XCTAssertEqual(getxattr(fixture.backed("alpha.hpwebsite"), "user.dir", &buffer, buffer.count), 1)
    }

    func testStatfsAndFlock() {
        var mounted = statvfs(), backed = statvfs()
        XCTAssertEqual(statvfs(bundles, &mounted), 0)
        XCTAssertEqual(statvfs(fixture.backing, &backed), 0)
        XCTAssertEqual(mounted.f_blocks, backed.f_blocks)
        XCTAssertEqual(mounted.f_bsize, backed.f_bsize)

        // flock through the mount is flock on the backing file: a lock taken
        // there blocks one taken in BACKING, and is released on close.
        let throughMount = open(bundles + "/notes.txt", O_RDONLY)
        XCTAssertEqual(flock(throughMount, LOCK_EX | LOCK_NB), 0)
        let direct = open(fixture.backed("notes.txt"), O_RDONLY)
        XCTAssertEqual(flock(direct, LOCK_EX | LOCK_NB), -1)
        XCTAssertEqual(errno, EWOULDBLOCK)
        XCTAssertEqual(flock(throughMount, LOCK_UN), 0)
        XCTAssertEqual(flock(direct, LOCK_EX | LOCK_NB), 0)
        let second = open(bundles + "/notes.txt", O_RDONLY)
        XCTAssertEqual(flock(second, LOCK_SH | LOCK_NB), -1)
        XCTAssertEqual(errno, EWOULDBLOCK)
        close(direct)
        XCTAssertEqual(flock(second, LOCK_SH | LOCK_NB), 0)
        close(second)
        close(throughMount)
    }

    func testErrnoIsFaithful() {
        XCTAssertNil(RawFiles.lstat(bundles + "/missing"))
        XCTAssertEqual(errno, ENOENT)
        XCTAssertEqual(open(bundles + "/notes.txt/inside", O_RDONLY), -1)
        XCTAssertEqual(errno, ENOTDIR)
        XCTAssertEqual(open(bundles + "/alpha.hpwebsite", O_WRONLY), -1)
        XCTAssertEqual(errno, EISDIR)
        XCTAssertEqual(rmdir(bundles + "/notes.txt"), -1)
        XCTAssertEqual(errno, ENOTDIR)
    }

    private func currentUmask() -> mode_t {
        let mask = umask(0)
        umask(mask)
        return mask
    }
}
