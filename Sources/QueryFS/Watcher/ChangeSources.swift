/// Where the live catalog learns that items may have changed: inotify on
/// BACKING and on every folder inside every bundle (`BackingWatcher`), and
/// the poller for whatever inotify could not watch (`ChangePoller`). The
/// catalog says which items it follows and which it forgets; this decides
/// how each is followed. Used by the watcher thread only.
final class ChangeSources {
    let watcher: BackingWatcher
    let poller: ChangePoller
    private let root: BackingDirectory
    /// The configuration file, when it is polled rather than watched.
    private var polledConfiguration: String?

    init(root: BackingDirectory, log: @escaping @Sendable (String) -> Void, pollerSettings: ChangePoller.Settings = .init(),
         onPolledChange: @escaping @Sendable () -> Void) throws(SystemError)
    {
        self.root = root
        watcher = try BackingWatcher(rootPath: root.path, log: log)
        poller = try ChangePoller(root: root, settings: pollerSettings, onFound: onPolledChange)
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
        if item.kind == .bundle, !poller.isPolling(name), watcher.watchBundle(name, directories: read.directories) { return }
        if item.kind == .file, watcher.watchesRoot { return }  // the root's watch reports plain files
        poller.poll(name, stamp: read.stamp)
    }

    /// Follows an item whose folders are not known (a writer holds it; or a
    /// new folder appeared inside it).
    func follow(_ name: ItemName) {
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

    func wait(timeout: Int32, wakeFD: Int32) -> [Inotify.Event] {
        watcher.wait(timeout: timeout, wakeFD: wakeFD)
    }

    /// Adds what the events say to `observation`, watching new folders.
    func observe(_ events: [Inotify.Event], into observation: inout BackingWatcher.Observation) {
        watcher.observe(events, into: &observation)
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
        if polled > 0 { return "inotify, and polling \(polled) item\(polled == 1 ? "" : "s") the watch limit left unwatched" }
        return "inotify"
    }
}
