#if canImport(Glibc)
import Glibc
#endif

/// How the insides of bundles are followed: one fanotify mark on BACKING's
/// filesystem where the mount may place one, else an inotify watch per folder.
public enum ChangeNotification: String, Sendable, CaseIterable {
    /// fanotify where the kernel allows it (CAP_SYS_ADMIN), inotify otherwise.
    case automatic = "auto"
    /// fanotify or fail.
    case fanotify
    /// inotify watches even where fanotify would serve.
    case inotify
}

/// Where the live catalog learns that items may have changed: inotify on
/// BACKING (`BackingWatcher`); inside bundles, one fanotify mark on the
/// filesystem (`FilesystemMark`) or else an inotify watch on every folder of
/// every bundle; and the poller for whatever neither could follow
/// (`ChangePoller`). The catalog says which items it follows and which it
/// forgets; this decides how each is followed. Used by the watcher thread only.
final class ChangeSources {
    /// What one wait brought.
    struct Events {
        var inotify: [Inotify.Event] = []
        var fanotify: [Fanotify.Event] = []
        var isEmpty: Bool { inotify.isEmpty && fanotify.isEmpty }
    }

    let watcher: BackingWatcher
    let poller: ChangePoller
    /// The fanotify mark, when it follows the insides of bundles.
    let mark: FilesystemMark?
    /// Why there is no mark (for `queryfs status`).
    private let markRefusal: String?
    private let root: BackingDirectory
    /// The configuration file, when it is polled rather than watched.
    private var polledConfiguration: String?

    init(root: BackingDirectory, log: @escaping @Sendable (String) -> Void, pollerSettings: ChangePoller.Settings = .init(),
         notification: ChangeNotification = .automatic, onPolledChange: @escaping @Sendable () -> Void) throws(SystemError)
    {
        self.root = root
        watcher = try BackingWatcher(rootPath: root.path, log: log)
        poller = try ChangePoller(root: root, settings: pollerSettings, onFound: onPolledChange)
        (mark, markRefusal) = try Self.placeMark(on: root, notification: notification)
    }

    /// The mark, or why there is none. Throws only when fanotify was asked
    /// for and cannot be had.
    private static func placeMark(on root: BackingDirectory, notification: ChangeNotification) throws(SystemError)
        -> (FilesystemMark?, String?)
    {
        if notification == .inotify { return (nil, "inotify was asked for") }
        do {
            return (try FilesystemMark(root: root), nil)
        } catch {
            guard notification == .automatic else {
                throw SystemError(errno: error.errno, operation: error.operation, path: error.path,
                                  detail: "fanotify: " + Self.refusal(error))
            }
            return (nil, Self.refusal(error))
        }
    }

    private static func refusal(_ error: SystemError) -> String {
        switch error.errno {
        case EPERM: return "filesystem marks are for privileged mounts (CAP_SYS_ADMIN: mount as root or from the system unit)"
        case EXDEV, EOPNOTSUPP, ENODEV: return "BACKING's filesystem gives no file handles (\(error.message))"
        case EINVAL, ENOSYS: return "the kernel has no fanotify with folder handles (Linux 5.9+)"
        default: return "\(error.operation): \(error.message)"
        }
    }

    /// Starts following BACKING's own listing when it is not watched (after
    /// the first scan, with the names it found).
    func followListing(knownNames: Set<ItemName>) {
        if !watcher.watchesRoot { poller.pollListing(knownNames: knownNames) }
    }

    /// Follows an item just read: a bundle's folders are watched; where
    /// that fails, or BACKING itself is not watched, the item is polled
    /// from the stamp this read saw.
    func follow(_ name: ItemName, read: Scanner.ItemRead) {
        guard case .item(let item) = read.scan else { return }
        if item.kind == .bundle, mark != nil, watcher.watchesRoot { return }  // the mark hears inside every bundle
        if item.kind == .bundle, !poller.isPolling(name), watcher.watchBundle(name, directories: read.directories) { return }
        if item.kind == .file, watcher.watchesRoot { return }  // the root's watch reports plain files
        poller.poll(name, stamp: read.stamp)
    }

    /// Follows an item taken from the index file: its folders are not
    /// known (inotify lists them); polling starts from the stamp the index kept.
    func follow(_ name: ItemName, indexed: IndexedItem) {
        let bundle = indexed.item.kind == .bundle
        if bundle, mark != nil, watcher.watchesRoot { return }
        if bundle, !poller.isPolling(name), watcher.watchBundle(name) { return }
        if !bundle, watcher.watchesRoot { return }
        poller.poll(name, stamp: indexed.stamp == 0 ? nil : ItemStamp(value: indexed.stamp))
    }

    /// Follows an item whose folders are not known (a writer holds it; or a
    /// new folder appeared inside it).
    func follow(_ name: ItemName) {
        if mark != nil, watcher.watchesRoot, !poller.isPolling(name) { return }
        if poller.isPolling(name) || !watcher.watchBundle(name) { poller.poll(name, stamp: nil) }
    }

    func forget(_ name: ItemName) {
        watcher.unwatch(name)
        poller.stopPolling(name)
    }

    func followConfiguration(at path: String) {
        if !watcher.watchConfiguration(path: path) {
            polledConfiguration = path
            poller.pollFile(path)
        }
    }

    /// Waits up to `timeout` ms for events (returns early if `wakeFD` becomes readable).
    func wait(timeout: Int32, wakeFD: Int32) -> Events {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: mark?.fd ?? -1, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, nfds_t(fds.count), timeout) > 0 else { return Events() }
        var events = Events()
        if fds[1].revents & Int16(POLLIN) != 0 { events.inotify = watcher.readAvailable() }
        if fds[2].revents & Int16(POLLIN) != 0, let mark { events.fanotify = mark.readAvailable() }
        return events
    }

    /// Adds what the events say to `observation`, watching new folders.
    func observe(_ events: Events, into observation: inout BackingWatcher.Observation) {
        watcher.observe(events.inotify, into: &observation)
        mark?.observe(events.fanotify, into: &observation)
        for name in observation.needsWatch { follow(name) }
        observation.needsWatch.removeAll()
    }

    /// Adds what the poller found since the last call.
    func takePolled(into observation: inout BackingWatcher.Observation) -> Bool {
        let found = poller.takeFound()
        guard !found.isEmpty else { return false }
        observation.dirtyItems.formUnion(found.items)
        if let path = polledConfiguration, found.files.contains(path) { observation.configurationChanged = true }
        return true
    }

    func stop() { poller.stop() }

    /// How changes are followed, for the log and `queryfs status`.
    var summary: String {
        if !watcher.watchesRoot { return "polling every item (BACKING could not be watched: inotify limits)" }
        let polled = poller.polledItemCount
        let watches = watcher.watchCount
        var text = mark != nil
            ? "fanotify (one mark on BACKING's filesystem) and \(watches) inotify watch\(watches == 1 ? "" : "es") on BACKING"
            : "inotify (\(watches) watch\(watches == 1 ? "" : "es"); no fanotify: \(markRefusal ?? "")"
        if polled > 0 { text += ", and polling \(polled) item\(polled == 1 ? "" : "s") the watch limit left unwatched" }
        return mark != nil ? text : text + ")"
    }

    /// "fanotify", "inotify" or "polling": the mode in force.
    var mode: String { !watcher.watchesRoot ? "polling" : mark != nil ? "fanotify" : "inotify" }
}
