import Logging
import QueryFSEngine
import QueryFSCollection
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A view of a backing directory — a folder of bundles or files — kept
/// sorted, filtered and current as the folder changes, for a Swift program
/// that wants what the mount gives the shell: a list ready for a list view,
/// its changes as diffs, and coordinated access to each item.
///
/// ```swift
/// let unread = try ItemCollection(at: "/home/me/ReadingList", view: "-archived sort:-modified")
/// print(unread.count, unread[0].title)
/// for await change in unread.changes {
///     table.apply(deleting: change.deletions, inserting: change.insertions, moving: change.moves)
/// }
/// ```
///
/// The collection reads the folder once when opened, then follows it
/// (inotify or fanotify, polling where neither can watch) until ``close()``.
/// It keeps no index file and needs no mount.
public final class ItemCollection: Sendable {
    /// The backing directory, as given.
    public let directory: String
    /// The view's path: `by-name`, `tag/swift`, or `query/<query>` for a query.
    public let view: String
    /// Longest wait, in seconds, for another holder of an item's lock before
    /// an edit or a coordinated access fails with ``CollectionError/lockTimeout(item:seconds:)``.
    public let lockTimeout: Double
    private let catalog: LiveCatalog
    private let viewPath: [String]
    private let state: Mutex<State>

    private struct State {
        var items: CollectionItems
        var observers: [Int: AsyncStream<CollectionChange>.Continuation] = [:]
        var nextObserver = 0
        var closed = false
        var viewGone = false
    }

    /// Whether the view is no longer there: the folder's configuration was
    /// edited and no longer has it. Every ``changes`` sequence has ended then.
    public var isViewGone: Bool { state.withLock { $0.viewGone } }

    /// Opens `view` of the backing directory at `directory`: a built-in view
    /// (`by-name`, `by-modified`, `by-created`, `unarchived`, `archived`,
    /// `conflicts`), a tag folder (`tag/swift`), or a query in the language of
    /// `queryfs-query(7)` (`tag:swift -archived sort:-modified`), or a view
    /// the directory's `.queryfs.toml` configures. The directory is read as
    /// a mount of it reads it: its `.queryfs.toml` (format, fields, ignore
    /// patterns, views) applies. Reads every item before it returns.
    ///
    /// - Parameters:
    ///   - directory: the backing directory: a folder of bundles (`<name>/payload.plist`) or files.
    ///   - view: the view's path or a query, as above.
    ///   - lockTimeout: longest wait for another holder of an item's lock, in seconds.
    ///   - logger: where the collection says what it could not read or
    ///     follow (nothing is logged by default).
    public init(at directory: String, view: String = "by-name", lockTimeout: Double = 10,
                logger: Logger = Logger(label: "queryfs", factory: { _ in SwiftLogNoOpLogHandler() })) throws(CollectionError)
    {
        // The directory's own `.queryfs.toml` (its format, fields, views and
        // ignore patterns), as a mount of it reads it: without it a vault of
        // notes read as bundles, and its views were not there to watch.
        // A folder that cannot be read is said to be that, once (found from
        // outside: another user's private mount was a configuration "cannot
        // read the configuration", its path said twice).
        guard access(directory, R_OK | X_OK) == 0 else {
            let code = errno
            let mount = MountTable.queryfsMount(containing: directory) != nil
            throw .system(operation: "open", path: directory, errno: code,
                          message: String(cString: strerror(code)) + (mount && code == EACCES ? " (a mount is its owner's alone unless mounted with -o allow_other)" : ""))
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.load(backing: directory)
        } catch {
            // The file once, as the path: not again in the message.
            throw .system(operation: "read the configuration", path: error.file, errno: EINVAL,
                          message: error.line > 0 ? "line \(error.line), column \(error.column): \(error.message)" : error.message)
        }
        let viewSet = configuration.viewSet
        let selection = try ViewSelection(view, views: viewSet.fixed)
        var extra = FieldSources()
        extra.extraKeyPaths = selection.payloadKeyPaths
        let sources = configuration.readingSources(adding: extra)
        let catalog: LiveCatalog
        do {
            catalog = try LiveCatalog(backingPath: directory, viewSet: viewSet, sources: sources,
                                      ignoring: { configuration.ignores($0) }, logger: logger)
        } catch {
            throw CollectionError(error)
        }
        // Read before the watcher starts: every change published from now on
        // is a diff against this listing (or the one before it), never one
        // the listing already holds.
        var records = RecordList()
        if let query = selection.query {
            do {
                try catalog.queryView(query) { records = $0 }
            } catch {
                catalog.stop()
                throw .invalidView("\(error)")
            }
        } else {
            records = catalog.withIndex { $0.view(at: selection.path)?.records ?? RecordList() }
        }
        self.directory = directory
        self.lockTimeout = lockTimeout
        self.view = selection.path.joined(separator: "/")
        self.catalog = catalog
        viewPath = selection.path
        state = Mutex(State(items: CollectionItems(records)))
        // The folder's configuration followed as a mount follows it: a view an
        // edit of it changes or takes away is a change (or the end) here too.
        let reloader = ConfigurationReloader(backing: directory, file: nil, loaded: configuration, logger: logger)
        catalog.watchConfiguration(at: reloader.path)
        let keyPaths = selection.payloadKeyPaths
        let keepingKeyPaths = { @Sendable (settings: LiveCatalog.Settings?) -> LiveCatalog.Settings? in
            settings.map { settings in
                var settings = settings
                settings.sources.extraKeyPaths.formUnion(keyPaths)
                return settings
            }
        }
        catalog.reloadConfiguration = { keepingKeyPaths(reloader.reload()) }
        catalog.countingAges = { now in keepingKeyPaths(reloader.countingAges(from: now)) }
        catalog.subscribe({ [weak self] update in self?.publish(update) },
                          onEnd: { [weak self] in self?.endObservers() })
        catalog.start()
    }

    deinit { catalog.stop() }

    // MARK: The list

    /// The view as it is now. A list view that applies ``changes`` should
    /// read each change's ``CollectionChange/items`` instead: this may
    /// already be newer than the last change it applied.
    public var items: CollectionItems { state.withLock { $0.items } }
    /// How many items the view holds now.
    public var count: Int { items.count }
    /// The item at `index` of the view as it is now.
    public subscript(index: Int) -> CollectionItem { items[index] }
    /// Where `item` is in the view now (found by name), or nil.
    public func index(of item: CollectionItem) -> Int? { items.index(of: item) }

    /// The view's changes, from now until ``close()``: first the whole view
    /// as insertions (``CollectionChange/isInitial``), then one change per
    /// batch of changes in the backing directory, each a diff against the one
    /// before. Every call gives a sequence of its own; it ends when the
    /// collection closes, and stops being fed when its consumer cancels.
    public var changes: AsyncStream<CollectionChange> {
        AsyncStream { continuation in
            let id: Int? = state.withLock { state in
                continuation.yield(CollectionChange(initial: state.items))
                guard !state.closed else { return nil }
                let id = state.nextObserver
                state.nextObserver += 1
                state.observers[id] = continuation
                return id
            }
            guard let id else { return continuation.finish() }
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
            }
        }
    }

    /// Stops following the directory: every ``changes`` sequence ends, and
    /// edits and coordinated access answer ``CollectionError/closed``.
    public func close() {
        state.withLock { $0.closed = true }
        catalog.stop()
    }

    // MARK: Following

    /// On the watcher thread: the view's new listing and its diff, handed to
    /// every observer in the same critical section that swaps the listing,
    /// so a new observer's first listing and later diffs always fit.
    private func publish(_ update: LiveCatalog.Update) {
        // A reload of the folder's configuration took the view away, or made it
        // afresh with another query: its watchers heard nothing of either (found
        // from outside), and kept the old list for good.
        if let reconfiguration = update.reconfiguration {
            if reconfiguration.removed.contains(viewPath) {
                state.withLock { $0.viewGone = true }
                return endObservers()
            }
            if reconfiguration.remade.contains(viewPath), let listing = update.listings[viewPath] {
                let naming = catalog.withIndex { $0.viewSet.fixed.first { $0.path == viewPath }?.entryTitle } ?? .title
                state.withLock { state in
                    let change = ViewChange.between(path: viewPath, old: state.items.records, new: listing, naming: naming)
                    let after = CollectionItems(listing)
                    let published = CollectionChange(change, before: state.items, after: after)
                    state.items = after
                    guard !change.diff.isEmpty else { return }
                    for observer in state.observers.values { observer.yield(published) }
                }
                return
            }
        }
        guard let change = update.changes.last(where: { $0.path == viewPath }) else { return }
        let after = CollectionItems(update.listings[viewPath] ?? RecordList())
        state.withLock { state in
            let published = CollectionChange(change, before: state.items, after: after)
            state.items = after
            for observer in state.observers.values { observer.yield(published) }
        }
    }

    private func endObservers() {
        let observers = state.withLock { state in
            state.closed = true
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish() }
    }

    func openCatalog() throws(CollectionError) -> LiveCatalog {
        guard !state.withLock({ $0.closed }) else { throw .closed }
        return catalog
    }
}
