#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Logging
import QueryFSEngine
import QueryFSCollection

/// A small process that aborts the mount's FUSE connection once the daemon
/// dies, so that a `kill -9` leaves a mount that answers "Transport endpoint
/// is not connected" at once instead of one every access waits on forever.
///
/// Why: the daemon makes requests to its own mount (the event replayer
/// touches paths through it so inotify watchers hear BACKING's changes; the
/// link warmer reads links ahead of `ls -l`). A SIGKILL that lands while a
/// libfuse thread holds one of those requests leaves the requesting thread
/// waiting, uninterruptibly, for an answer no thread is left to give: the
/// process never finishes dying, so /dev/fuse is never closed (closing it is
/// what aborts a dead daemon's connection) and every access to the mount
/// waits. Killing the daemon while items changed wedged it 5 times in 10
/// (stop 26, a loop of `touch` in BACKING and a `kill -9` 0–290 ms in).
///
/// The daemon opens fusectl's `abort` file of its connection once mounted
/// and hands it to the guard, so the write reaches this connection and no
/// later one that reuses its number (fusectl forgets a connection's files
/// when it goes: a write then does nothing). The guard learns of the death
/// from PR_SET_PDEATHSIG, sent when the thread that spawned it, the daemon's
/// main thread, exits — which a killed process's main thread does even while
/// another of its threads is stuck.
package enum ConnectionGuard {
    /// `queryfs connection-guard --daemon PID`: hidden, for the daemon's use.
    package static let commandName = "connection-guard"
    /// The guard's descriptor for fusectl's `abort` file.
    static let abortDescriptor: Int32 = 3
    package static let connections = "/sys/fs/fuse/connections"

    package enum State: Sendable, Equatable {
        case running(pid: pid_t)
        case unavailable(String)
    }

    /// In the daemon, on its main thread (the guard is told when the
    /// spawning thread exits), once `mountPoint` is mounted.
    static func start(mountPoint: String, logger: Logger) -> State {
        let state: State
        do {
            let abortFD = try openAbortFile(of: mountPoint)
            defer { close(abortFD) }
            let executable = Daemon.ownExecutablePath() ?? "/proc/self/exe"
            // Not our own argv[0]: as mount(8)'s helper that is mount.queryfs,
            // which would read the arguments as a mount's.
            let arguments = ["queryfs", commandName, "--daemon", String(getpid())]
            let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid = pid_t()
            let code = qfs_spawn_with_descriptor(&pid, executable, argv, abortFD, abortDescriptor)
            guard code == 0 else { throw SystemError(errno: code, operation: "spawn", path: executable) }
            state = .running(pid: pid)
        } catch {
            state = .unavailable("\(error)")
            logger.warning("no guard for this mount's connection (\(error)): should the daemon be killed with SIGKILL while it serves itself, accesses to \(mountPoint) may wait until the connection is aborted (echo 1 > \(connections)/N/abort)")
        }
        return state
    }

    /// Whether the guard `state` names is still running (reaps it if not).
    static func isRunning(_ state: State) -> Bool {
        guard case .running(let pid) = state else { return false }
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// fusectl's `abort` file for the connection mounted at `mountPoint`
    /// (the newest mount there). fusectl is mounted first if root may.
    static func openAbortFile(of mountPoint: String) throws(SystemError) -> Int32 {
        guard let connection = connectionName(of: mountPoint) else {
            throw SystemError(errno: ENOENT, operation: "find the FUSE connection in /proc/self/mountinfo", path: mountPoint)
        }
        let path = "\(connections)/\(connection)/abort"
        var fd = open(path, O_WRONLY | O_CLOEXEC)
        if fd < 0, errno == ENOENT, geteuid() == 0,
           !MountTable.mounts().contains(where: { $0.mountPoint == connections }),
           mount("fusectl", connections, "fusectl", 0, nil) == 0
        {
            // What systemd does at boot; a container may not have it.
            fd = open(path, O_WRONLY | O_CLOEXEC)
        }
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        return fd
    }

    /// The connection's name under fusectl: the mount's device number as the
    /// kernel encodes it (major << 20 | minor), from /proc/self/mountinfo.
    package static func connectionName(of mountPoint: String, mountinfo: String? = nil) -> UInt32? {
        let text = mountinfo ?? (try? readWholeFile("/proc/self/mountinfo")) ?? ""
        var found: UInt32?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 4, MountTable.unescape(fields[4]) == mountPoint else { continue }
            let device = fields[2].split(separator: ":")
            guard device.count == 2, let major = UInt32(device[0]), let minor = UInt32(device[1]),
                  major < 1 << 12, minor < 1 << 20 else { continue }
            found = major << 20 | minor  // the last line is the mount on top
        }
        return found
    }

    /// The guard process: waits for the daemon's main thread to exit, then
    /// aborts the connection. Returns the exit status.
    package static func watch(daemon: pid_t) -> Int32 {
        // Spawned in a session of its own with SIGUSR1, SIGINT and SIGHUP
        // blocked (qfs_spawn_with_descriptor): Ctrl-C at a foreground mount
        // is the daemon's to handle, and the guard must outlive it. Ignoring
        // them also drops any that arrived while it started.
        _ = chdir("/")
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        // Then unblocked: Linux never drops a blocked signal, ignored or
        // not ("blocked signals are never ignored"), so a SIGINT sent after
        // this point stayed pending for the guard's whole life. Ignored and
        // unblocked, it is dropped as it is sent.
        var ignored = sigset_t()
        sigemptyset(&ignored)
        sigaddset(&ignored, SIGINT)
        sigaddset(&ignored, SIGHUP)
        // Fails only for an invalid `how`.
        _ = sigprocmask(SIG_UNBLOCK, &ignored, nil)
        guard qfs_wait_for_parent_death(daemon) == 0 else {
            report("cannot wait for the daemon's exit: \(String(cString: strerror(errno)))")
            return 1
        }
        // After an ordinary unmount the connection is gone and this does nothing.
        guard write(abortDescriptor, "1", 1) == 1 else {
            report("cannot abort the FUSE connection: \(String(cString: strerror(errno)))")
            return 1
        }
        return 0
    }

    /// One line on the guard's stderr: the daemon's log, or /dev/null.
    private static func report(_ message: String) {
        let line = "queryfs connection guard of process \(getppid()): \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
