import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `queryfs` executable (and other programs) the way a user
/// would: a real process, its output in files (a daemonizing child may keep
/// a pipe open; files never make the test wait on it), its exit status.
enum QueryfsBinary {
    /// `QUERYFS_BIN`, else the `queryfs` built next to the test bundle
    /// (`swift test` builds every product into the same directory).
    static var path: String {
        if let override = ProcessInfo.processInfo.environment["QUERYFS_BIN"], !override.isEmpty { return override }
        let testExecutable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = (testExecutable as NSString).deletingLastPathComponent
        // On Linux the bundle is `<build>/debug/queryfsPackageTests.xctest`, an executable in the build directory.
        if directory.hasSuffix(".xctest") { directory = (directory as NSString).deletingLastPathComponent }
        return directory + "/queryfs"
    }

    struct Result {
        var status: Int32
        var stdout: [UInt8]
        var stderr: [UInt8]
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        var stderrText: String { String(decoding: stderr, as: UTF8.self) }
        /// Non-empty lines of stderr.
        var stderrLines: [String] { stderrText.split(separator: "\n").map(String.init) }
    }

    /// Runs `queryfs ARGUMENTS…` to completion.
    @discardableResult
    static func run(_ arguments: [String], prefix: [String] = []) -> Result {
        Program.run(prefix + [path] + arguments)
    }
}

enum Program {
    /// Runs a program (searched on PATH) to completion; stdin is /dev/null.
    static func run(_ arguments: [String]) -> QueryfsBinary.Result {
        let scratch = makeTemporaryDirectory(prefix: "queryfs-run")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let pid = spawn(arguments, stdout: scratch + "/out", stderr: scratch + "/err")
        let status = pid > 0 ? wait(pid) : 127
        let out = (try? Data(contentsOf: URL(fileURLWithPath: scratch + "/out"))) ?? Data()
        let err = (try? Data(contentsOf: URL(fileURLWithPath: scratch + "/err"))) ?? Data()
        return .init(status: status, stdout: [UInt8](out), stderr: [UInt8](err))
    }

    /// Starts a program and returns its pid (or -1), output appended to the files named.
    static func spawn(_ arguments: [String], stdout: String, stderr: String) -> pid_t {
        TestCache.prepare()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return -1 }
        return pid
    }

    /// Waits for `pid`; its exit status, or 128 + the signal that killed it.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Waits up to `timeout` seconds for `pid` to end; nil if it did not.
    static func wait(_ pid: pid_t, timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while Date() < deadline {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : 128 + signal
            }
            usleep(20_000)
        }
        return nil
    }
}

/// What a test runs as another user (`setpriv`): the built binary, and any
/// script or fixture that user must read, copied into a fresh folder under
/// /tmp that every user can reach (0755), removed when the test ends. The
/// build folder may be out of reach: a clone in a 0700 home (Debian's
/// default; root's own) left user 65534 "Permission denied" at the exec.
final class ReachableCopies {
    let folder: String

    /// A fresh folder, removed at `test`'s teardown.
    init(for test: XCTestCase) {
        let folder = makeTemporaryDirectory(prefix: "queryfs-reachable")
        chmod(folder, 0o755)
        self.folder = folder
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// A copy of `path` in the folder, as `name` (default: its own name),
    /// with `mode` (readable by all; executable by all by default).
    func copy(_ path: String, as name: String? = nil, mode: mode_t = 0o755) throws -> String {
        let copy = folder + "/" + (name ?? (path as NSString).lastPathComponent)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        guard chmod(copy, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return copy
    }

    /// The built `queryfs`, copied.
    func queryfs() throws -> String { try copy(QueryfsBinary.path, as: "queryfs") }
}

func makeTemporaryDirectory(prefix: String) -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// The tests' own cache directory: index files that mounts and commands
/// keep go there, never into the user's ~/.cache (set once, before the
/// first program is started; inherited by every one).
enum TestCache {
    static let folder: String = {
        let folder = makeTemporaryDirectory(prefix: "queryfs-cache")
        setenv("XDG_CACHE_HOME", folder, 1)
        return folder
    }()

    static func prepare() { _ = folder }
}
