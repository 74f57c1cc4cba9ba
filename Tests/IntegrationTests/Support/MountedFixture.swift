import Foundation
import QueryFSTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A temporary root holding `backing/` (the fixture corpus) and `mnt/` (an
/// empty mount point). `mount()` really mounts with the built binary; the
/// fixture always unmounts (lazily as the last resort) and removes itself,
/// whatever the test did.
final class MountedFixture {
    let root: String
    let backing: String
    let mountPoint: String
    private(set) var isMounted = false

    init(corpus: (Corpus) -> Void = Corpus.standard) {
        root = makeTemporaryDirectory(prefix: "queryfs-it")
        backing = root + "/backing"
        mountPoint = root + "/mnt"
        mkdir(backing, 0o755)
        mkdir(mountPoint, 0o755)
        // Reachable by others, whatever the umask: some tests mount or act
        // as other users (the binary they run: `ReachableCopies`).
        for folder in [root, backing, mountPoint] { chmod(folder, 0o755) }
        corpus(Corpus(path: backing))
    }

    /// `queryfs mount BACKING MNT EXTRA…`: must succeed (a test that cannot mount fails).
    /// `prefix` runs it under another program (`prlimit --nofile=…`).
    func mount(_ extra: [String] = [], prefix: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = QueryfsBinary.run(["mount", backing, mountPoint] + extra, prefix: prefix)
        isMounted = MountTable.isMounted(mountPoint)
        guard result.status == 0 else {
            XCTFail("queryfs mount failed (\(result.status)): \(result.stderrText)", file: file, line: line)
            throw MountFailure()
        }
        guard isMounted else {
            XCTFail("queryfs mount exited 0 but \(mountPoint) is not in /proc/mounts", file: file, line: line)
            throw MountFailure()
        }
    }

    struct MountFailure: Error {}

    /// The daemon serving this mount (the process whose command line names
    /// the mount point with `-f`), or nil.
    func daemonPID() -> pid_t? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains("mount"), arguments.contains("-f"), arguments.contains(mountPoint) { return pid }
        }
        return nil
    }

    /// SIGKILLs the daemon, and keeps the test from hanging on what that can
    /// leave: a daemon thread caught inside a request to its own mount (the
    /// event replayer touches paths through it) can never finish dying, so
    /// the kernel keeps the connection and every later access waits. If the
    /// process has not gone within 3 s, the connection is aborted through
    /// fusectl (mounted if need be), as an administrator would.
    func killDaemon(_ pid: pid_t) {
        kill(pid, SIGKILL)
        let mountPoint = self.mountPoint
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(3)
            while Date() < deadline {
                // Dead once no thread is left but zombies (or the process is reaped).
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
                let living = tasks.filter { task in
                    let stat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8)) ?? ""
                    // The state follows the command name's closing parenthesis.
                    return stat.split(separator: ")").last?.split(separator: " ").first.map { $0 != "Z" && $0 != "X" } ?? false
                }
                if living.isEmpty { return }
                usleep(50_000)
            }
            Self.abortConnection(of: mountPoint)
        }
    }

    /// Aborts the FUSE connection behind `mountPoint` (fusectl's `abort`).
    static func abortConnection(of mountPoint: String) {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.split(separator: " ").dropFirst(4).first.map { MountTable.unescape(String($0)) } == mountPoint }),
              let device = line.split(separator: " ").dropFirst(2).first, let minor = device.split(separator: ":").last
        else { return }
        let connections = "/sys/fs/fuse/connections"
        if !FileManager.default.fileExists(atPath: connections + "/\(minor)") {
            // Whether it worked shows at the open of the abort file below, which says why not.
            _ = Program.run(["mount", "-t", "fusectl", "none", connections])
        }
        // Written in place: FileManager.createFile writes a temporary file and
        // renames it, which sysfs refuses, so the abort never happened and a
        // wedged test waited until it was aborted by hand (535 s in a CI run).
        let fd = open(connections + "/\(minor)/abort", O_WRONLY)
        guard fd >= 0 else { return print("fusectl abort of \(mountPoint): open: \(String(cString: strerror(errno)))") }
        if write(fd, "1", 1) != 1 { print("fusectl abort of \(mountPoint): write: \(String(cString: strerror(errno)))") }
        close(fd)
    }

    /// Resident memory of the daemon, in bytes (VmRSS), or nil.
    func daemonResidentBytes() -> Int? {
        guard let pid = daemonPID(), let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// Unmounts however it can: `queryfs unmount`, then `fusermount3 -u -z`.
    func unmount() {
        guard MountTable.isMounted(mountPoint) else { isMounted = false; return }
        QueryfsBinary.run(["unmount", mountPoint])
        // Each step's success is read from the mount table, not its exit status.
        if MountTable.isMounted(mountPoint) { _ = Program.run(["fusermount3", "-u", "-z", mountPoint]) }
        if MountTable.isMounted(mountPoint) { _ = Program.run(["umount", "-l", mountPoint]) }
        isMounted = false
    }

    deinit {
        unmount()
        try? FileManager.default.removeItem(atPath: root)
    }

    // MARK: Paths

    func mounted(_ relative: String) -> String { mountPoint + "/" + relative }
    func backed(_ relative: String) -> String { backing + "/" + relative }
}

/// Reads /proc/mounts (mount points there are octal-escaped).
enum MountTable {
    static func mountPoints() -> [String] {
        guard let text = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 1 else { return nil }
            return unescape(String(fields[1]))
        }
    }

    static func isMounted(_ path: String) -> Bool { mountPoints().contains(path) }

    static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let value = UInt8(String(decoding: utf8[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Writes fixture bundles: small XML plist payloads, chosen mtimes, and
/// names as raw bytes (non-UTF-8 included).
struct Corpus {
    let path: String

    /// A corpus exercising every view: tags (one with a slash), archived
    /// and not, a plain-file item, a malformed payload, hidden entries, a
    /// non-UTF-8 name, and enough items that listings span several readdir replies.
    static func standard(_ corpus: Corpus) {
        corpus.bundle("alpha.hpwebsite", title: "Alpha 2", tags: ["rock/metal", "swift"], mtime: 1_000)
        corpus.bundle("beta.hpwebsite", title: "alpha 10", archived: true, tags: ["swift"], mtime: 2_000)
        corpus.bundle("gamma.hpwebsite", title: "Gamma/Slash\tTab", mtime: 3_000)
        corpus.bundle(Array("caf".utf8) + [0xE9, 0x2D, 0xFF] + Array(".hpwebsite".utf8),
                      title: "Caf\u{E9} bytes", tags: ["bytes"], mtime: 4_000)
        corpus.file(Array("notes.txt".utf8), contents: Array("plain item\n".utf8), mtime: 5_000)
        corpus.file(Array(".hidden-file".utf8), contents: Array("hidden\n".utf8), mtime: 6_000)
        let broken = corpus.path + "/broken.hpwebsite"
        mkdir(broken, 0o755)
        corpus.write(broken + "/payload.plist", Array("<plist><dict><key>webTitle".utf8))
        corpus.setMTime(broken + "/payload.plist", 7_000)
        for number in 1...150 {
            corpus.bundle("item-\(number).hpwebsite", title: "Item \(number)", archived: number % 3 == 0,
                          tags: number % 5 == 0 ? ["five"] : [], mtime: 10_000 + number * 7 % 151)
        }
    }

    func bundle(_ name: String, title: String, archived: Bool = false, tags: [String] = [], mtime: Int) {
        bundle(Array(name.utf8), title: title, archived: archived, tags: tags, mtime: mtime)
    }

    func bundle(_ name: [UInt8], title: String, archived: Bool = false, tags: [String] = [], mtime: Int) {
        let directoryBytes = Array((path + "/").utf8) + name
        // An existing bundle is written over (tests rewrite bundles by name).
        if directoryBytes.withCString({ mkdir($0, 0o755) }) != 0 && errno != EEXIST {
            XCTFail("fixture bundle: mkdir: \(String(cString: strerror(errno)))")
        }
        write(directoryBytes + Array("/payload.plist".utf8), Array(Self.plist(title: title, archived: archived, tags: tags).utf8))
        setMTime(directoryBytes + Array("/payload.plist".utf8), mtime)
        setMTime(directoryBytes, mtime)
    }

    func file(_ name: [UInt8], contents: [UInt8], mtime: Int) {
        let full = Array((path + "/").utf8) + name
        write(full, contents)
        setMTime(full, mtime)
    }

    static func plist(title: String, archived: Bool, tags: [String]) -> String {
        HipstapaperPlist.xml(title: title, archived: archived, tags: tags)
    }

    func write(_ path: String, _ bytes: [UInt8]) { write(Array(path.utf8), bytes) }

    func write(_ path: [UInt8], _ bytes: [UInt8]) {
        let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        precondition(fd >= 0, "cannot create fixture file")
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if written != bytes.count { XCTFail("fixture file: wrote \(written) of \(bytes.count) bytes: \(String(cString: strerror(errno)))") }
        close(fd)
    }

    func setMTime(_ path: String, _ seconds: Int) { setMTime(Array(path.utf8), seconds) }

    func setMTime(_ path: [UInt8], _ seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        if path.withCString({ utimensat(AT_FDCWD, $0, &times, AT_SYMLINK_NOFOLLOW) }) != 0 {
            XCTFail("fixture mtime: \(String(cString: strerror(errno)))")
        }
    }
}

extension Array where Element == UInt8 {
    /// The bytes as a NUL-terminated C string (names need not be UTF-8).
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (self + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}
