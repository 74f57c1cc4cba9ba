import ArgumentParser
import Logging
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// `queryfs mount BACKING MOUNTPOINT`: returns once the mount is live and
/// every view is complete; `-f` keeps it in the foreground.
struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount BACKING's views at MOUNTPOINT.",
        discussion: "Returns once the mount is live and every view reflects BACKING. "
            + "Unmount with `queryfs unmount MOUNTPOINT` (or fusermount3 -u). "
            + "Items are the entries at the top of BACKING (at any depth with `recursive = true`): bundles (folders holding payload.plist or payload.json: "
            + "title/webTitle, tags, archived/isArchived, url/webLocation.relative), notes (*.md, *.markdown, *.txt and the like: "
            + "YAML `---` or TOML `+++` front matter gives title (else the first # heading), tags (a list or one string), "
            + "archived, url, created (else date); edits are written back into it), files with sidecars (`sidecars = [\"xmp\", \"json\"]`: "
            + "X.jpg.xmp or X.xmp gives tags, rating, label, title; X.info.json yt-dlp's fields), and any other file (its user.xdg.tags attribute). "
            + "BACKING/.queryfs.toml may name a preset: format = \"obsidian\", \"archivebox\", \"darktable\", \"digikam\", \"yt-dlp\" or \"hipstapaper\". See queryfs(5).")

    @Argument(help: "The backing directory: bundles, notes, files.") var backing: String
    @Argument(help: "An empty directory to mount on.", completion: .directory) var mountPoint: String
    @Flag(name: .shortAndLong, help: "Stay in the foreground (SIGINT/SIGTERM unmount).") var foreground = false
    @Option(name: .short, help: "FUSE mount options, comma-separated (allow_other, ro, nonempty, and the others of mount.fuse3(8)).")
    var options: [String] = []
    @Flag(name: .customLong("absolute-links"), help: "Make view symlinks absolute (MOUNTPOINT/bundles/NAME).")
    var absoluteLinks = false
    // `parsing: .unconditional` on numbers: `-1` is the value (refused by `validate()` in words), not "Missing value".
    @Option(name: .customLong("lock-timeout"), parsing: .unconditional, help: "Seconds a write through bundles/ waits for an item's lock before failing with EBUSY.")
    var lockTimeout: Double = 5
    @Flag(name: .customLong("no-coordination"), help: "Do not take item locks for writes through bundles/ (for benchmarks).")
    var noCoordination = false
    @Flag(name: .customLong("no-passthrough"), help: "Serve file reads and writes through the daemon, not kernel passthrough (for comparison).")
    var noPassthrough = false
    @Option(name: .customLong("config"), help: "The configuration file (default: BACKING/.queryfs.toml when there is one).")
    var configFile: String?
    @Option(name: .customLong("payload-key"), help: "A payload key path (webLocation.relative) that query/ folders may filter or sort on; repeatable.")
    var payloadKeys: [String] = []
    @Option(name: .customLong("age-recount"), parsing: .unconditional, help: "Views with relative ages (modified>7d) are evaluated again every hundredth of the age, at least this many seconds apart.")
    var ageRecount: Double = 60
    @Option(name: .customLong("query-folders"), parsing: .unconditional, help: "How many ad-hoc query/ folders stay live; the least recently used beyond it are dropped (made again when looked up).")
    var queryFolderLimit = 256
    @Flag(name: .customLong("no-events"), help: "Raise no inotify events for changes made in BACKING (file managers then need a refresh to see them).")
    var noEvents = false
    @Option(name: .customLong("notify"), help: ArgumentHelp(
        "How changes inside bundles are heard: auto (fanotify where the mount may, else inotify), fanotify (or fail), inotify.",
        valueName: "auto|fanotify|inotify"))
    var notification: ChangeNotification = .automatic
    @Option(name: .customLong("poll"), parsing: .unconditional, help: ArgumentHelp(
        "Poll every item every SECONDS besides notifications (default: 5 on network filesystems (NFS, SMB, sshfs, any FUSE), where notifications hear only this machine; 0: never).",
        valueName: "seconds"))
    var pollSeconds: Double?
    @Option(name: .customLong("poll-share"), parsing: .unconditional, help: ArgumentHelp(
        "The share of its time the poller may be busy, in percent (default 10): more finds changes made elsewhere sooner, at that cost in CPU and server load.",
        valueName: "percent"))
    var pollShare: Double = 10
    @OptionGroup var index: IndexOptions
    @Option(name: .customLong("log"), help: "Append log lines to this file (default: stderr in the foreground, none in the background).")
    var logPath: String?
    @Option(name: .customLong("ready-fd"), help: .hidden) var readyFD: Int32?

    func validate() throws {
        guard ageRecount > 0, ageRecount.isFinite else { throw ValidationError("--age-recount takes a number of seconds above 0") }
        guard queryFolderLimit >= 1 else { throw ValidationError("--query-folders takes a number of folders, at least 1") }
        guard lockTimeout >= 0, lockTimeout.isFinite else { throw ValidationError("--lock-timeout takes a number of seconds, 0 or more") }
        if let pollSeconds, !(pollSeconds == 0 || pollSeconds >= 0.1 && pollSeconds <= 86_400) {
            throw ValidationError("--poll takes a number of seconds from 0.1 to 86400, or 0 (never)")
        }
        guard pollShare >= 1, pollShare <= 100 else { throw ValidationError("--poll-share takes a percentage from 1 to 100") }
    }

    func run() throws {
        guard foreground else { return runInBackground() }
        var sessionOptions = FuseSession.Options(backing: backing, mountPoint: mountPoint)
        sessionOptions.fuseOptions = options.flatMap { $0.split(separator: ",").map(String.init) }
        sessionOptions.absoluteLinks = absoluteLinks
        sessionOptions.lockTimeout = lockTimeout
        sessionOptions.coordinatesWrites = !noCoordination
        sessionOptions.kernelPassthrough = !noPassthrough
        sessionOptions.payloadKeys = payloadKeys
        sessionOptions.configFile = configFile
        sessionOptions.ageRecountSeconds = ageRecount
        sessionOptions.queryFolderLimit = queryFolderLimit
        sessionOptions.events = !noEvents
        sessionOptions.reloadsOnHangup = readyFD != nil
        sessionOptions.changeNotification = notification
        sessionOptions.pollSeconds = pollSeconds
        sessionOptions.pollShare = pollShare / 100
        sessionOptions.index = index.settings(for: backing)
        let logFile = logPath
        let mountLog = MountLog(path: logFile)
        let logger = Logger(label: "queryfs.mount") { _ in MountLogHandler(log: mountLog) }
        let progress = MountProgress(backing: backing, logger: logger)
        sessionOptions.progress = { read, total in progress.report(read: read, of: total) }
        let session = FuseSession(options: sessionOptions, logger: logger)
        // Under systemd (Type=notify) the unit is started only once every view is complete.
        SystemdNotify.send(["STATUS=Indexing \(backing)"])
        do {
            try session.run {
                if case .failed(let reason) = SystemdNotify.send(["READY=1", "STATUS=Serving \(backing) at \(mountPoint)"]) {
                    // systemd will time the unit out: the log says why.
                    logger.warning("cannot tell systemd the mount is ready: \(reason)")
                }
                if let readyFD {
                    // Out of the terminal's session before the parent returns: a
                    // terminal closed right after `mount` (script(1) ending) would
                    // otherwise send SIGHUP, which unmounts.
                    Daemon.detach(logPath: logFile)
                    Daemon.report(.ready, on: readyFD)
                }
            }
            SystemdNotify.send(["STOPPING=1"])
        } catch {
            if let readyFD { Daemon.report(.failed(error.description), on: readyFD) }
            printError(error.description)
            Glibc.exit(2)
        }
    }

    /// Spawns the foreground mount as a child and waits for it to be ready.
    /// The child is given the command line this one was parsed from, with
    /// `-f --ready-fd N` put right after `mount` (before any `--`), so
    /// every option reaches it as the user wrote it: an option added later
    /// cannot be forgotten here.
    private func runInBackground() {
        let given = ParsedCommandLine.arguments
        guard given.first == configuration.commandName else {
            printError("cannot start the background mount: the command line does not start with `mount` (\(given.first ?? "nothing"))")
            Glibc.exit(2)
        }
        let arguments = ["mount", "-f", "--ready-fd", String(Daemon.readyDescriptor)] + given.dropFirst()
        switch Daemon.spawnAndWait(arguments: arguments) {
        case .ready: return
        case .failed: Glibc.exit(2)  // the child already printed its one line
        case .ended(let why):
            printError(why)
            Glibc.exit(2)
        }
    }

    private var configuration: CommandConfiguration { Self.configuration }
}

/// The command line as parsed, after the mount helper's translation
/// (`queryfs BACKING MOUNTPOINT -o …` becomes `mount BACKING MOUNTPOINT …`).
enum ParsedCommandLine {
    static let arguments: [String] = (try? MountHelper.commandLine(from: CommandLine.arguments)) ?? []
}

/// `queryfs unmount MOUNTPOINT`.
struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unmount", abstract: "Unmount a queryfs mount.")

    @Argument(help: "The mount point.") var mountPoint: String

    func run() throws {
        try reportingFailures {
            // fusectl's name for the connection, found before it is unmounted.
            let connection = ConnectionGuard.connectionName(of: resolvedPath(mountPoint) ?? mountPoint)
            let lives = { () -> Bool? in
                guard let connection, access(ConnectionGuard.connections, F_OK) == 0 else { return nil }
                return access("\(ConnectionGuard.connections)/\(connection)", F_OK) == 0
            }
            let daemon = MountStatusFile.daemonProcess(of: mountPoint)
            switch Unmounter.unmount(mountPoint, connectionLives: lives) {
            case .unmounted:
                if let daemon { Self.waitForExit(of: daemon) }
            case .detachedWhileBusy:
                // Said, not silent: the daemon lives on until the folder is let go (a shell's cwd there).
                printError("\(mountPoint) was in use: it is taken out of the file tree now, and its daemon ends when the last program using it lets go")
            case .failed(let failure): throw Failure(failure)
            }
        }
    }
}

extension UnmountCommand {
    /// Waits (up to 10 s) for the daemon to end: it writes its index after
    /// the unmount, and BACKING stays busy until it ends (found from
    /// outside: `queryfs unmount M && umount BACKING_FS` said "target is busy").
    static func waitForExit(of pid: pid_t) {
        for _ in 0..<1000 {
            guard kill(pid, 0) == 0 || errno == EPERM else { return }
            // A zombie has ended (its parent has yet to collect it).
            if let state = try? readWholeFile("/proc/\(pid)/stat"), let close = state.lastIndex(of: ")"),
               state[close...].dropFirst(2).first == "Z" { return }
            usleep(10_000)
        }
    }
}

extension ChangeNotification: ExpressibleByArgument {}
