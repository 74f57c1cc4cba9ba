import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `Tests/Tools/faultfs.py` (Debian's python3-pyfuse3) mounted as a test's
/// backing directory: a passthrough of a real folder that fails chosen
/// operations with a chosen errno on command, and with `crashModel` keeps
/// what a crash would leave. Commands go over its control socket; see the
/// script's own help for what each does.
final class FaultFS {
    /// The script beside these tests (`QUERYFS_FAULTFS` overrides it).
    static var script: String {
        if let override = ProcessInfo.processInfo.environment["QUERYFS_FAULTFS"], !override.isEmpty { return override }
        // Tests/IntegrationTests/Support/FaultFS.swift → Tests/Tools/faultfs.py
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/faultfs.py").path
    }

    /// Debian's Python, which has python3-pyfuse3 (a `python3` first on PATH may be another one).
    static let python = "/usr/bin/python3"

    /// The real folder faultfs passes through: what the operations really changed.
    let source: String
    let mountPoint: String
    let controlSocket: String
    let log: String
    private var pid: pid_t = -1

    struct StartFailure: Error {}
    struct CommandFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Mounts `source` at `mountPoint` (an empty folder) and returns once it
    /// answers; a faultfs that does not come up fails the test.
    init(source: String, mountPoint: String, crashModel: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        self.source = source
        self.mountPoint = mountPoint
        let scratch = (mountPoint as NSString).deletingLastPathComponent
        controlSocket = scratch + "/faultfs-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        log = scratch + "/faultfs.log"
        // Should this process die before its teardown, faultfs unmounts and goes too.
        var arguments = [Self.python, Self.script, "mount", source, mountPoint, "--control", controlSocket, "--log", log, "--exit-with-parent"]
        if crashModel { arguments.append("--crash-model") }
        pid = Program.spawn(arguments, stdout: log, stderr: log)
        let up = pid > 0 && eventually(timeout: 15) {
            MountTable.isMounted(mountPoint) && (try? self.command(["ping"])) != nil
        }
        guard up else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            XCTFail("faultfs did not mount \(source) at \(mountPoint) (install python3-pyfuse3: scripts/install-deps.sh pyfuse3): \(output.suffix(2000))",
                    file: file, line: line)
            stop()
            throw StartFailure()
        }
    }

    deinit { stop() }

    /// Unmounts (fusermount3 -u, lazily as the last resort) and ends the
    /// process; safe to call again. The mount table says whether it worked.
    func stop() {
        if MountTable.isMounted(mountPoint) { _ = Program.run(["fusermount3", "-u", mountPoint]) }
        if MountTable.isMounted(mountPoint) { _ = Program.run(["fusermount3", "-u", "-z", mountPoint]) }
        if pid > 0 {
            if Program.wait(pid, timeout: 5) == nil {
                kill(pid, SIGKILL)
                _ = Program.wait(pid, timeout: 5)
            }
            pid = -1
        }
        unlink(controlSocket)
    }

    // MARK: Control

    /// Sends one command (words as `faultfs.py ctl` takes them); the reply, or a throw if refused.
    @discardableResult
    func command(_ words: [String]) throws -> [String: Any] {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CommandFailure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(controlSocket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { throw CommandFailure(description: "socket path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path)
            buffer[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw CommandFailure(description: "connect \(controlSocket): \(String(cString: strerror(errno)))") }
        var request = try JSONSerialization.data(withJSONObject: words)
        request.append(0x0A)
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { throw CommandFailure(description: "send: \(String(cString: strerror(errno)))") }
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while reply.last != 0x0A {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            reply += buffer[0..<count]
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any] else {
            throw CommandFailure(description: "faultfs \(words): no reply (\(String(decoding: reply, as: UTF8.self)))")
        }
        guard object["ok"] as? Bool == true else {
            throw CommandFailure(description: "faultfs \(words): \(object["error"] ?? "refused")")
        }
        return object
    }

    /// Arms a fault: the next `op` on a path matching `path` (relative to
    /// `source`) answers `errno` (a name: EIO, ENOSPC, EDQUOT), `count` times (0: always).
    func fail(_ op: String, _ errno: String, count: Int = 1, skip: Int = 0, path: String = "*") throws {
        try command(["fail", op, errno, "count=\(count)", "skip=\(skip)", "path=\(path)"])
    }

    func clear() throws { try command(["clear"]) }

    /// How often the armed faults fired, in all.
    func fired() throws -> Int {
        ((try command(["stats"])["faults"] as? [[String: Any]]) ?? []).reduce(0) { $0 + (($1["fired"] as? Int) ?? 0) }
    }

    /// The files open through faultfs now (paths relative to `source`).
    func openFiles() throws -> [String] { (try command(["stats"])["open"] as? [String]) ?? [] }

    /// Waits until no file under `prefix` is open: a program's close(2)
    /// returns before the kernel's (asynchronous) RELEASE reaches the mount,
    /// whose close of BACKING's file flushes it once more; a fault armed
    /// before that would fire on it. Fails the test after 5 s.
    func waitUntilClosed(_ prefix: String = "", file: StaticString = #filePath, line: UInt = #line) {
        let closed = eventually(timeout: 5) { ((try? self.openFiles()) ?? [prefix]).allSatisfy { !$0.hasPrefix(prefix) } }
        XCTAssertTrue(closed, "files under '\(prefix)' still open in faultfs: \((try? openFiles()) ?? [])", file: file, line: line)
    }

    /// Mutating operations so far.
    func sequence() throws -> Int { (try command(["stats"])["sequence"] as? Int) ?? 0 }

    // MARK: Crashes (crashModel only)

    struct DurabilityPoint: CustomStringConvertible {
        var index: Int
        var kind: String
        var path: String
        var sequence: Int
        var description: String { "point \(index) (\(kind) \(path.isEmpty ? "." : path) at operation \(sequence))" }
    }

    func points() throws -> [DurabilityPoint] {
        ((try command(["points"])["points"] as? [[String: Any]]) ?? []).map {
            DurabilityPoint(index: $0["index"] as? Int ?? 0, kind: $0["kind"] as? String ?? "", path: $0["path"] as? String ?? "",
                            sequence: $0["sequence"] as? Int ?? 0)
        }
    }

    /// Writes what a crash right after durability point `index` leaves into the new folder `destination`.
    func durableState(after index: Int, into destination: String) throws {
        try command(["durable-state", String(index), destination])
    }

    /// A power cut at the (n+1)th mutating operation from now: the state then
    /// goes to `destination`, and every operation after it answers EIO.
    func crash(afterOperations count: Int, into destination: String) throws {
        try command(["crash-after", String(count), destination])
    }

    var crashed: Bool { ((try? command(["stats"]))?["crashed"] as? Bool) ?? false }
}

/// A mount test whose BACKING is faultfs over the fixture's corpus: the
/// corpus is moved to `ROOT/source`, faultfs shows it at `ROOT/backing`, and
/// queryfs mounts that. Teardown takes faults away, unmounts queryfs, then
/// faultfs, whatever the test did.
class FaultMountTestCase: MountTestCase {
    var faultfs: FaultFS?

    /// Makes the fixture and faultfs under it (not queryfs: `fixture.mount`).
    func makeFaultBacking(crashModel: Bool = false, corpus: @escaping (Corpus) -> Void, file: StaticString = #filePath, line: UInt = #line) throws {
        fixture = MountedFixture(corpus: corpus)
        let source = fixture.root + "/source"
        guard rename(fixture.backing, source) == 0, mkdir(fixture.backing, 0o755) == 0 else {
            XCTFail("cannot move the corpus aside: \(String(cString: strerror(errno)))", file: file, line: line)
            throw FaultFS.StartFailure()
        }
        faultfs = try FaultFS(source: source, mountPoint: fixture.backing, crashModel: crashModel, file: file, line: line)
    }

    var source: String { faultfs!.source }

    /// Unmounts queryfs, then faultfs, and removes the fixture: what
    /// teardown does, for a test that makes several in turn.
    func removeFaultBacking(file: StaticString = #filePath, line: UInt = #line) {
        try? faultfs?.clear()
        fixture?.unmount()
        if let fixture { XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "left mounted", file: file, line: line) }
        if let faultfs {
            faultfs.stop()
            XCTAssertFalse(MountTable.isMounted(faultfs.mountPoint), "faultfs left mounted", file: file, line: line)
        }
        faultfs = nil
        fixture = nil
    }

    override func tearDown() {
        removeFaultBacking()
        super.tearDown()
    }
}
