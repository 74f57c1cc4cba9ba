#if canImport(Glibc)
import Glibc
#endif
import Logging
import QueryFSEngine

/// How the insides of bundles are followed: one fanotify mark on BACKING's
/// filesystem where the mount may place one, else an inotify watch per folder.
package enum ChangeNotification: String, Sendable, CaseIterable {
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
    /// BACKING's filesystem: on a network one, every item is polled as well
    /// (notifications hear only this machine).
    let filesystem: BackingFilesystem
    /// Every item and BACKING's listing are polled, besides notifications.
    let pollsEverything: Bool
    /// The fanotify mark, when it follows the insides of bundles.
    let mark: FilesystemMark?
    /// Why there is no mark (for `queryfs status`).
    private let markRefusal: String?
    private let root: BackingDirectory
    /// The configuration file, when it is polled rather than watched.
    private var polledConfiguration: String?

    /// `pollEvery`: seconds between polling rounds of every item; nil: on a
    /// network filesystem only (`BackingFilesystem`), every
    /// `ChangePoller.networkInterval` seconds; 0: never.
    init(root: BackingDirectory, logger: Logger, pollerSettings: ChangePoller.Settings = .init(),
         notification: ChangeNotification = .automatic, pollEvery: Double? = nil,
         onPolledChange: @escaping @Sendable () -> Void) throws(SystemError)
    {
        self.root = root
        filesystem = BackingFilesystem.of(path: resolvedPath(root.path) ?? root.path)
        let interval = pollEvery ?? (filesystem.isNetwork ? ChangePoller.networkInterval : 0)
        pollsEverything = interval > 0
        var settings = pollerSettings
        if pollsEverything {
            settings.interval = interval
            settings.deepEvery = ChangePoller.deepRoundEvery
        }
        watcher = try BackingWatcher(rootPath: root.path, payloadNames: root.payloadNames, logger: logger)
        poller = try ChangePoller(root: root, settings: settings, logger: logger, onFound: onPolledChange)
        (mark, markRefusal) = try Self.placeMark(on: root, notification: notification)
    }

    /// The mark, or why there is none. Throws only when fanotify was asked
    /// for and cannot be had.
    private static func placeMark(on root: BackingDirectory, notification: ChangeNotification) throws(SystemError)
        -> (FilesystemMark?, String?)
    {
        if notification == .inotify { return (nil, "inotify was asked for") }
        // The mark places events by an item's first path component: a
        // recursive collection's folders are watched one by one instead.
        if root.recursive, notification == .automatic { return (nil, "a recursive collection watches each of its folders") }
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
    /// `knownNames` is made only when the listing is polled: on a local
    /// disk BACKING's watch hears it, and a set of 100,000 names cost a
    /// trusted start 65 ms for nothing.
    func followListing(knownNames: @autoclosure () -> Set<ItemName>) {
        if !watcher.watchesRoot || pollsEverything { poller.pollListing(knownNames: knownNames()) }
    }

    /// Polls BACKING's listing from `knownNames` whatever else follows it
    /// (BACKING could not be listed when it had to be: what came or went is
    /// reported once it can be).
    func pollListing(knownNames: Set<ItemName>) { poller.pollListing(knownNames: knownNames) }

    /// Follows an item just read: a bundle's folders are watched; where
    /// that fails, or BACKING itself is not watched, the item is polled
    /// from the stamp this read saw (on a network filesystem, polled anyway).
    func follow(_ name: ItemName, read: Scanner.ItemRead) {
        guard case .item(let item) = read.scan else { return }
        follow(name, kind: item.kind, stamp: read.stamp, settled: read.settledStamp != 0, directories: read.directories)
    }

    /// Follows an item not read now (taken from the index file): its
    /// folders are not known (inotify lists them); polling starts from
    /// `stamp`, the value it was read at (0: unknown).
    func follow(_ name: ItemName, kind: Item.Kind, stamp: UInt64) {
        follow(name, kind: kind, stamp: stamp == 0 ? nil : ItemStamp(value: stamp), settled: true, directories: nil)
    }

    private func follow(_ name: ItemName, kind: Item.Kind, stamp: ItemStamp?, settled: Bool, directories: [[UInt8]]?) {
        if pollsEverything { poller.poll(name, stamp: stamp, settled: settled) }
        if notified(name, kind: kind, directories: directories) || pollsEverything { return }
        poller.poll(name, stamp: stamp, settled: settled)
    }

    /// Whether notifications follow the item: the mark or a watch on each of
    /// its folders (`directories`, nil: listed now), or BACKING's own watch
    /// for a plain file.
    private func notified(_ name: ItemName, kind: Item.Kind, directories: [[UInt8]]?) -> Bool {
        guard kind == .bundle else { return watcher.watchesFolder(of: name) }
        if mark != nil, watcher.watchesRoot { return true }  // the mark hears inside every bundle
        // Polled because the watch limit was reached for it before: not tried again.
        if !pollsEverything, poller.isPolling(name) { return false }
        return directories.map { watcher.watchBundle(name, directories: $0) } ?? watcher.watchBundle(name)
    }

    /// Follows an item whose folders are not known (a writer holds it; or a
    /// new folder appeared inside it).
    func follow(_ name: ItemName) {
        if pollsEverything {
            if !poller.isPolling(name) { poller.poll(name, stamp: nil) }
            _ = notified(name, kind: .bundle, directories: nil)
            return
        }
        if mark != nil, watcher.watchesRoot, !poller.isPolling(name) { return }
        if poller.isPolling(name) || !watcher.watchBundle(name) { poller.poll(name, stamp: nil) }
    }

    func forget(_ name: ItemName) {
        watcher.unwatch(name)
        poller.stopPolling(name)
    }

    /// The folders of items followed (a recursive collection), by path.
    private(set) var folders = Set<ItemName>()

    /// Follows folders of items: each is watched as BACKING is (where the
    /// watch limit refuses one, the items in it are polled and BACKING's
    /// listing too, so what is made there still shows).
    func followFolders(_ names: [ItemName]) {
        for name in names {
            folders.insert(name)
            if !watcher.watchFolder(name, in: root.fd), !poller.isPollingListing { poller.pollListing(knownNames: []) }
        }
    }

    /// Forgets a folder that is gone or became a bundle, and every folder
    /// under it; returns whether it was one.
    func forgetFolder(_ name: ItemName) -> Bool {
        guard folders.remove(name) != nil else { return false }
        watcher.unwatchFolder(name)
        let prefix = name.bytes + [UInt8(ascii: "/")]
        for inner in folders where inner.bytes.starts(with: prefix) {
            folders.remove(inner)
            watcher.unwatchFolder(inner)
        }
        return true
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

    /// Ends a burst: adds the items of the folders its events happened in
    /// (placed only now, when deleted ones are known: see `FilesystemMark.settle`).
    func settle(into observation: inout BackingWatcher.Observation) {
        mark?.settle(into: &observation)
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
        if pollsEverything { return notificationSummary + "; " + pollingSummary }
        return notificationSummary
    }

    /// How often everything is polled, why, and how late a change made elsewhere can show.
    var pollingSummary: String {
        let interval = poller.settings.interval
        let deep = interval * Double(poller.settings.deepEvery)
        let why = filesystem.isNetwork ? "BACKING is on \(filesystem.type): notifications hear only this machine" : "--poll was given"
        return "and polling every item every \(Self.seconds(interval)) s, in full every \(Self.seconds(deep)) s (\(why)); "
            + "a payload saved or an item made, removed or renamed elsewhere shows within \(Self.seconds(interval)) s, any other change within \(Self.seconds(deep)) s, "
            + "plus the filesystem's own attribute caching, longer when a round of \(poller.polledItemCount) items takes the poller more than \(Int(poller.settings.share * 100)) % of its time (--poll-share)"
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
    }

    private var notificationSummary: String {
        let polled = poller.polledItemCount
        let watches = watcher.watchCount
        var text = mark != nil
            ? "fanotify (one mark on BACKING's filesystem) and \(watches) inotify watch\(watches == 1 ? "" : "es") on BACKING"
            : "inotify (\(watches) watch\(watches == 1 ? "" : "es"); no fanotify: \(markRefusal ?? "")"
        if polled > 0, !pollsEverything { text += ", and polling \(polled) item\(polled == 1 ? "" : "s") the watch limit left unwatched" }
        return mark != nil ? text : text + ")"
    }

    /// "fanotify", "inotify" or "polling": the mode in force.
    var mode: String { !watcher.watchesRoot ? "polling" : mark != nil ? "fanotify" : "inotify" }
}
