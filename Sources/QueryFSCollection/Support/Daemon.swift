#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Running the mount in the background without fork(): fork after the Swift
/// runtime started threads is unsafe, and so is libfuse's fuse_daemonize.
/// Instead the command spawns itself in the foreground (`-f`) with a pipe
/// on descriptor 3, and returns once the child says the mount is ready — or
/// prints the child's one-line error.
package enum Daemon {
    /// The descriptor the child reports readiness on.
    package static let readyDescriptor: Int32 = 3

    package enum Outcome: Equatable, Sendable {
        case ready
        /// The child said why, on its stderr too.
        case failed(String)
        /// The child ended without a word (killed, or crashed before its
        /// handler could speak): the parent says so, or the command failed
        /// in silence (found from outside: SIGKILL during the start, exit 2, nothing printed).
        case ended(String)
    }

    /// Spawns `/proc/self/exe` with `arguments` and waits for its report.
    package static func spawnAndWait(arguments: [String]) -> Outcome {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { return .failed("cannot create a pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Order matters: the read end may itself be descriptor 3.
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], readyDescriptor)
        // Only descriptor 3 may stay open on the write end, or EOF never comes.
        if pipeFDs[1] != readyDescriptor { posix_spawn_file_actions_addclose(&actions, pipeFDs[1]) }

        // The real path, not /proc/self/exe: the kernel names the process
        // after the file it runs, and `ps`/`pgrep queryfs` should find it.
        let executable = ownExecutablePath() ?? "/proc/self/exe"
        let argv: [UnsafeMutablePointer<CChar>?] = ([CommandLine.arguments.first ?? "queryfs"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(pipeFDs[1])
        defer { close(pipeFDs[0]) }
        guard spawned == 0 else { return .failed("cannot start the mount process: \(String(cString: strerror(spawned)))") }

        var message: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = retryingOnEINTR { read(pipeFDs[0], &buffer, buffer.count) }
            if count <= 0 { break }
            message += buffer[0..<count]
            if message.last == UInt8(ascii: "\n") { break }  // one line is the whole report
        }
        let text = String(decoding: message, as: UTF8.self).trimmingTrailingNewlines
        if text == "ready" { return .ready }
        var status: Int32 = 0
        _ = retryingOnEINTR { waitpid(pid, &status, 0) }
        if text.hasPrefix("error: ") { return .failed(String(text.dropFirst("error: ".count))) }
        let how = status & 0x7F != 0 ? "was killed by signal \(status & 0x7F) (\(String(cString: strsignal(status & 0x7F))))"
            : "ended with status \((status >> 8) & 0xFF)"
        return .ended("the mount process \(how) before the mount was ready; nothing is mounted")
    }

    /// This program's file, if it still exists under that name.
    package static func ownExecutablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // A binary replaced since it started (an upgrade) reads "… (deleted)".
        guard access(path, X_OK) == 0 else { return nil }
        return path
    }

    /// In the child: report readiness (or an error) and close the pipe.
    package static func report(_ outcome: Outcome, on fd: Int32) {
        let text: String
        switch outcome {
        case .ready: text = "ready\n"
        case .failed(let message), .ended(let message): text = "error: \(message)\n"
        }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// In the child, once ready: leave the terminal's session and point the
    /// standard descriptors at /dev/null (or the log file, for stderr).
    package static func detach(logPath: String?) {
        _ = setsid()
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            dup2(null, 0)
            dup2(null, 1)
            if logPath == nil { dup2(null, 2) }
            if null > 2 { close(null) }
        }
        if let logPath {
            let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            if log >= 0 {
                dup2(log, 2)
                close(log)
            }
        }
    }
}

extension String {
    var trimmingTrailingNewlines: String {
        var result = self
        while result.hasSuffix("\n") { result.removeLast() }
        return result
    }
}
