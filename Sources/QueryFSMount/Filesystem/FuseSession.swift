#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import Logging
import QueryFSEngine
import QueryFSCollection

/// One mount, from preflight to unmount: builds the live catalog (so every
/// view is complete before the mount is visible), creates the FUSE session,
/// mounts, reports readiness, and serves requests on worker threads until
/// unmounted or signalled (SIGINT, SIGTERM, SIGHUP).
package struct FuseSession {
    package struct Options: Sendable {
        package var backing: String
        package var mountPoint: String
        package var fuseOptions: [String] = []
        package var absoluteLinks = false
        package var maxThreads: UInt32 = 16
        /// Longest wait for an item's lock before a write through bundles/ fails with EBUSY.
        package var lockTimeout = 5.0
        /// Whether writes through bundles/ take the items' locks.
        package var coordinatesWrites = true
        /// Whether regular files under bundles/ open in kernel passthrough
        /// mode where the kernel allows it (Linux 6.9+, CAP_SYS_ADMIN).
        package var kernelPassthrough = true
        /// Payload key paths to keep for `query/` folders that filter or sort on them.
        package var payloadKeys: [String] = []
        /// The configuration file (nil: BACKING/.queryfs.toml when there is one).
        package var configFile: String?
        /// The shortest wait between two recounts of relative ages (nil: a minute).
        package var ageRecountSeconds: Double?
        /// How many ad-hoc `query/` folders (not saved) are kept live.
        package var queryFolderLimit = 256
        /// Whether changes made in BACKING raise inotify events on the mount (`EventReplayer`).
        package var events = true
        /// How the insides of bundles are followed (fanotify where it may, else inotify).
        package var changeNotification = ChangeNotification.automatic
        /// Seconds between polling rounds of every item (nil: on network filesystems only; 0: never).
        package var pollSeconds: Double?
        /// The share of its time the poller may be busy (0.1: 10 %).
        package var pollShare = 0.1
        /// The index file kept for BACKING (nil: none).
        package var index: IndexSettings?
        /// SIGHUP reads the configuration again, as daemons have it, instead
        /// of unmounting: a daemon in the background, with no terminal to
        /// hang up (a foreground mount still ends with its terminal).
        package var reloadsOnHangup = false
        /// Told how far the first scan is (items read, of how many), from the scan's threads.
        package var progress: (@Sendable (Int, Int) -> Void)?
        package init(backing: String, mountPoint: String) {
            self.backing = backing
            self.mountPoint = mountPoint
        }
    }

    package let options: Options
    /// What every layer of the mount reports (the watcher, the replay, the
    /// kernel's refusals), each line at the level its caller gives it.
    let logger: Logger

    /// A mount whose lines go to `logger` (swift-log): the command decides
    /// where — the `--log` file, stderr, or the journal.
    package init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }


    /// Mounts, calls `ready` once the mount is live, serves until unmounted,
    /// then unmounts. Throws (with nothing mounted) if it cannot mount.
    package func run(ready: () -> Void) throws(MountPreflight.Failure) {
        guard let backing = resolvedPath(options.backing) else {
            throw MountPreflight.Failure("backing directory \(options.backing): \(String(cString: strerror(errno)))")
        }
        let allowNonEmpty = options.fuseOptions.contains("nonempty")
        // Placement first: a mount point inside BACKING (or BACKING itself) is
        // rarely empty, and "use -o nonempty" only led on to this refusal.
        if let early = resolvedPath(options.mountPoint) { try MountPreflight.checkPlacement(backing: backing, mountPoint: early) }
        try MountPreflight.checkMountPoint(options.mountPoint, allowNonEmpty: allowNonEmpty, backing: backing)
        guard let mountPoint = resolvedPath(options.mountPoint) else {
            throw MountPreflight.Failure("mount point \(options.mountPoint): \(String(cString: strerror(errno)))")
        }
        try MountPreflight.checkBacking(backing)
        try MountPreflight.checkPlacement(backing: backing, mountPoint: mountPoint)
        let mountPointClaim = try MountPreflight.claimMountPoint(mountPoint)
        defer { close(mountPointClaim) }
        try MountPreflight.checkFuseDevice()
        // Before anything opens: the passthrough table sizes its descriptor cache from it.
        let descriptors = DescriptorLimit.raiseSoftLimit()
        // Below this the mount came up and then answered reads and edits
        // with EMFILE (found from outside, at `ulimit -n 32`): said at once instead.
        if descriptors > 0, descriptors < rlim_t(MountPreflight.minimumDescriptors) {
            throw MountPreflight.Failure("the limit on open files is \(descriptors) (ulimit -n): a mount needs at least \(MountPreflight.minimumDescriptors)")
        }
        // Before the scan's threads: a daemon that lives for months keeps few arenas.
        MemoryTrim.limitArenas(to: 1)

        let configuration: Configuration
        do {
            configuration = try Configuration.load(backing: backing, file: options.configFile)
        } catch {
            throw MountPreflight.Failure("\(error)")
        }
        let catalog: LiveCatalog
        let filesystem: QueryFilesystem
        do {
            var sources = configuration.sources
            sources.extraKeyPaths.formUnion(Set(options.payloadKeys).union(configuration.savedQueryKeyPaths))
            var following = LiveCatalog.ChangePollerSettings()
            following.notification = options.changeNotification
            following.pollEvery = options.pollSeconds
            following.share = options.pollShare
            catalog = try LiveCatalog(backingPath: backing, viewSet: configuration.viewSet, sources: sources,
                                      ignoring: { configuration.ignores($0) }, pollerSettings: following,
                                      index: options.index.map { index in
                                          var index = index
                                          index.ignorePatterns = configuration.ignore
                                          return index
                                      }, progress: options.progress, logger: logger)
            if let hint = CollectionFormat.suggestion(for: backing, configuration: configuration) { logger.notice("\(hint)") }
            // Absolute: the daemon leaves the working directory.
            let configFile = options.configFile.map { resolvedPath($0) ?? $0 }
            let reloader = ConfigurationReloader(backing: backing, file: configFile, loaded: configuration, logger: logger)
            catalog.watchConfiguration(at: reloader.path)
            catalog.reloadConfiguration = { reloader.reload() }
            catalog.countingAges = { now in reloader.countingAges(from: now) }
            if let seconds = options.ageRecountSeconds { catalog.timing.ageRecountSeconds = seconds...max(seconds, 3600) }
            var settings = QueryFilesystem.Settings()
            settings.linkStyle = options.absoluteLinks ? .absolute(mountPoint: mountPoint) : .relative
            settings.lockTimeout = options.lockTimeout
            settings.coordinatesWrites = options.coordinatesWrites
            settings.kernelPassthrough = options.kernelPassthrough
            settings.configurationFile = reloader
            settings.queryFolderLimit = options.queryFolderLimit
            settings.mountPoint = mountPoint
            settings.mountOptions = options.fuseOptions + (options.events ? [] : ["no_events"])
                + (options.kernelPassthrough ? [] : ["no_passthrough"]) + (options.coordinatesWrites ? [] : ["no_coordination"])
            filesystem = try QueryFilesystem(catalog: catalog, settings: settings)
            if !CallerSyscall.readsOtherProcesses {
                logger.warning("ptrace is restricted (kernel.yama.ptrace_scope): mkdir under query/ answers EEXIST for other processes; add queries to `queries` in \(reloader.path) instead, or mount as root")
            }
            _ = filesystem.takeSavedQueries(configuration.savedQueries)
        } catch {
            throw MountPreflight.Failure("backing directory \(options.backing): \(error.message)")
        }

        // The start's garbage, all of it dead by now (see `MemoryTrim`).
        MemoryTrim.returnFreedMemory()
        // Modes reach us with the caller's umask already applied by the
        // kernel; the daemon's own would strip them a second time (a file
        // made with umask 002 would lose group write). As passthrough_ll.
        umask(0)
        var ops = FuseOperations.make()
        let userdata = Unmanaged.passRetained(filesystem).toOpaque()
        defer { Unmanaged<QueryFilesystem>.fromOpaque(userdata).release() }
        let arguments = ["queryfs", "-o", fuseOptionString(backing: backing)]
        var cArguments = arguments.map { strdup($0) }
        defer { cArguments.forEach { free($0) } }
        // libfuse's own complaints become part of our one line (FuseLog).
        FuseLog.capture()
        guard let session = qfs_session_new(Int32(cArguments.count), &cArguments, &ops, userdata) else {
            let reason = FuseLog.takeMessages() ?? options.fuseOptions.joined(separator: ",")
            throw MountPreflight.Failure("invalid mount options: \(reason)")
        }
        defer { fuse_session_destroy(session) }
        // Where the caller may not mount, libfuse runs fusermount3, which
        // prints its reason to stderr: that reason joins our one line.
        let (mounted, helperText) = StandardErrorCapture.capture { fuse_session_mount(session, mountPoint) }
        guard mounted == 0 else {
            let reasons = [FuseLog.takeMessages(), helperText.isEmpty ? nil : helperText].compactMap { $0 }
            let reason = reasons.isEmpty ? "is it permitted?" : reasons.joined(separator: "; ") + " (is it permitted?)"
            throw MountPreflight.Failure("cannot mount \(mountPoint): \(reason)")
        }
        if !helperText.isEmpty { logger.warning("\(helperText)") }
        FuseLog.forward(to: logger)
        defer { fuse_session_unmount(session) }
        // libfuse sends and receives through these, which ask the kernel for
        // passthrough in the INIT reply (libfuse 3.14 does not know of it)
        // and count requests by kind for the status file.
        var io = fuse_custom_io(writev: qfs_io_writev, read: qfs_io_read,
                                splice_receive: qfs_io_splice_receive, splice_send: qfs_io_splice_send)
        qfs_passthrough_configure(backing, options.kernelPassthrough ? 1 : 0)
        filesystem.kernelPassthrough.fuseFD = fuse_session_fd(session)
        if fuse_session_custom_io(session, &io, fuse_session_fd(session)) != 0 {
            logger.warning("kernel passthrough unavailable and requests not counted: libfuse refused custom I/O")
        }
        guard fuse_set_signal_handlers(session) == 0 else {
            throw MountPreflight.Failure("cannot install signal handlers")
        }
        defer { fuse_remove_signal_handlers(session) }
        if options.reloadsOnHangup { Self.reloadOnHangup(catalog: catalog, logger: logger) }
        filesystem.attach(session: session)

        filesystem.nameInvalidations.start(filesystem: filesystem)
        defer { filesystem.nameInvalidations.stop() }
        filesystem.nameSweeps.start()
        defer { filesystem.nameSweeps.stop() }
        // Found now, while the mount point surely is this mount: what the
        // daemon does on its own mount starts from this root, never a path.
        let root = MountRoot.find(mountPoint: mountPoint, logger: logger)
        if root == nil {
            logger.warning("cannot tell this mount in /proc/self/mountinfo at \(mountPoint): no inotify events and no link warming")
        }
        let linkWarmer = root.map { LinkWarmer(root: $0) }
        if let linkWarmer { filesystem.attach(linkWarmer) }
        defer { linkWarmer?.stop() }
        // A read-only mount refuses the operations that raise the events.
        if options.events, options.fuseOptions.contains("ro") {
            logger.info("read-only mount: no inotify events for changes in BACKING (the kernel refuses the operations that raise them)")
        } else if options.events, let root {
            do {
                let replayer = try EventReplayer(filesystem: filesystem, root: root)
                filesystem.attach(replayer)
                replayer.start()
            } catch {
                logger.warning("no inotify events for changes in BACKING: \(error)")
            }
        }
        defer { filesystem.eventReplayer?.stop() }
        let invalidator = KernelCacheInvalidator(filesystem: filesystem)
        catalog.subscribe { update in invalidator.apply(update) }
        catalog.start()
        defer { catalog.stop() }
        ready()
        // After `ready` has detached (the guard must not hold the caller's
        // terminal or pipes), and on the main thread, which lives as long as
        // the mount (the guard is told when its spawning thread exits).
        let guardState = ConnectionGuard.start(mountPoint: mountPoint, logger: logger)
        filesystem.connectionGuard.withLock { $0 = guardState }
        // The daemon's own way to abort its connection at the end (below).
        let abortFD = (try? ConnectionGuard.openAbortFile(of: mountPoint)) ?? -1
        defer { if abortFD >= 0 { close(abortFD) } }
        let result = qfs_session_loop_mt(session, options.maxThreads)
        if result < 0 { logger.error("session loop ended with error \(-result)") }
        // Before anything stops (the defers above, in reverse): no thread may
        // tell the kernel anything more, and the connection goes, so what
        // still waits on the mount (the event replayer's and link warmer's
        // own requests, which no worker is left to answer) fails at once and
        // every stop below finishes. Found from outside: SIGTERM during a
        // burst of edits left the replayer past its stop's wait, writing to
        // the closed device ("fuse: writing device: Bad file descriptor"),
        // and then into the freed session: "invalid memory access".
        filesystem.kernelConnected.store(false, ordering: .releasing)
        // Aborted first, through fusectl: releasing the device does not abort
        // while a thread is inside a notification on it, and one can be, waiting
        // for a folder's lock that the replayer's own rename holds while it waits
        // for an answer no worker is left to give (found from outside: SIGTERM
        // during edits then took 11 s, the replayer's stop's whole wait).
        if abortFD >= 0 { _ = write(abortFD, "1", 1) }
        let disconnected = qfs_disconnect_device(fuse_session_fd(session))
        if disconnected < 0 { logger.warning("cannot release the FUSE connection before stopping: \(String(cString: strerror(-disconnected)))") }
    }

    /// `-o` for libfuse: the backing directory as the source (so /proc/mounts
    /// and `queryfs watch MOUNTPOINT/VIEW` can find it), the subtype, kernel
    /// permission checks, and the user's options.
    private func fuseOptionString(backing: String) -> String {
        let escapedSource = backing.replacingCommas()
        var list = ["fsname=\(escapedSource)", "subtype=queryfs", "default_permissions"]
        list += options.fuseOptions.filter { $0 != "nonempty" && !$0.isEmpty }
        return list.joined(separator: ",")
    }

    /// SIGHUP: the configuration read again (`LiveCatalog.reloadConfigurationSoon`),
    /// the log saying so. The handler only counts it (an eventfd: one descriptor); a thread does the rest.
    private static func reloadOnHangup(catalog: LiveCatalog, logger: Logger) {
        let counter = qfs_event_counter()
        guard counter >= 0 else {
            return logger.warning("SIGHUP will unmount, not reload: no counter for it (\(String(cString: strerror(errno))))")
        }
        guard startThread(named: "queryfs-hup", {
            var count: UInt64 = 0
            while true {
                let read = Glibc.read(counter, &count, MemoryLayout<UInt64>.size)
                if read < 0, errno == EINTR { continue }
                guard read == MemoryLayout<UInt64>.size else { return }
                logger.info("SIGHUP: reading the configuration again")
                catalog.reloadConfigurationSoon()
            }
        }), qfs_signal_to_counter(SIGHUP, counter) == 0 else {
            return logger.warning("SIGHUP will unmount, not reload: \(String(cString: strerror(errno)))")
        }
    }
}

extension String {
    /// libfuse option lists are comma-separated; a comma in a value is escaped.
    func replacingCommas() -> String {
        var result = ""
        for character in self {
            if character == "," || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }

}
