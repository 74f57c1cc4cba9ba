#if canImport(Glibc)
import Glibc
#endif
import Logging
import QueryFSEngine

/// The configuration file of a live mount. Each edit that parses becomes
/// the catalog's new views, aliases, ignore patterns and saved queries; an
/// edit that does not parse is logged with its file, line and column, and
/// the last good configuration stays. `mkdir`/`rmdir` under `query/` add
/// and remove saved queries through `save`/`forget`, which rewrite only the
/// `queries` setting of the file.
package final class ConfigurationReloader: @unchecked Sendable {
    private let backing: String
    private let file: String?
    private let logger: Logger
    private let lock = PlainLock()
    /// The last good configuration (guarded by `lock`).
    private var current: Configuration

    package init(backing: String, file: String?, loaded: Configuration, logger: Logger) {
        self.backing = backing
        self.file = file
        current = loaded
        self.logger = logger
    }

    /// The file watched: `--config FILE`, or BACKING/.queryfs.toml.
    package var path: String { file ?? backing + "/" + Configuration.fileName }

    /// The new configuration for the catalog, or nil to keep the current one.
    package func reload() -> LiveCatalog.Settings? {
        let next: Configuration
        do {
            next = try Configuration.load(backing: backing, file: file)
        } catch {
            logger.error("configuration not reloaded, the last good one stays: \(error)")
            return nil
        }
        enum Outcome { case same, changed, needsRemount(Bool) }
        let outcome: Outcome = lock.withLock {
            guard next != current else { return .same }
            // Items at any depth or at the top only is what the mount walks and
            // watches from its start: views that switched to it disagreed with
            // a scan until a remount, while the log said "reloaded" (found from outside).
            if next.sources.recursive != current.sources.recursive { return .needsRemount(next.sources.recursive) }
            current = next
            return .changed
        }
        switch outcome {
        case .same: return nil
        case .needsRemount(let recursive):
            let shape = recursive ? "recursive (items at any depth)" : "flat (items at the top only)"
            let line = "configuration not reloaded, the last good one stays: it makes the collection \(shape), "
                + "which a mount applies when it starts: unmount and mount again"
            logger.error("\(line)")
            return nil
        case .changed: break
        }
        let views = next.views.count == 1 ? "1 view" : "\(next.views.count) views"
        let queries = next.savedQueries.count == 1 ? "1 saved query" : "\(next.savedQueries.count) saved queries"
        logger.notice("configuration reloaded from \(path): \(views), \(queries)")
        return next.catalogSettings
    }

    /// The current configuration with its relative ages counted from `now`,
    /// or nil if no configured view has one.
    package func countingAges(from now: Timestamp) -> LiveCatalog.Settings? {
        let configuration = lock.withLock { current }
        guard configuration.views.contains(where: { $0.query.shortestAge != nil }) else { return nil }
        return configuration.countingAges(from: now).catalogSettings
    }

    package enum EditFailure: Error, CustomStringConvertible {
        /// The file as it is now does not parse: it is not touched.
        case broken(ConfigurationError)
        case system(SystemError)

        package var errno: Int32 {
            switch self {
            case .broken: EINVAL
            case .system(let error): error.errno == 0 ? EIO : error.errno  // 0 would read as success
            }
        }

        package var description: String {
            switch self {
            case .broken(let error): "the configuration has an error, fix it first: \(error)"
            case .system(let error): "\(error)"
            }
        }
    }

    /// Adds `query` to the saved queries (no change if it is there).
    package func save(_ query: String) throws(EditFailure) {
        try editSavedQueries { queries in if !queries.contains(query) { queries.append(query) } }
    }

    /// Removes `query` from the saved queries (no change if it is not there).
    package func forget(_ query: String) throws(EditFailure) {
        try editSavedQueries { queries in queries.removeAll { $0 == query } }
    }

    private func editSavedQueries(_ change: (inout [String]) -> Void) throws(EditFailure) {
        // One edit at a time: two mkdirs must not both rewrite the old text;
        // in this process by the lock, across processes (two mounts of one
        // BACKING, found from outside: queries saved at once were lost) by a
        // lock on the file's folder — the file itself is replaced by rename.
        let result: Result<Void, EditFailure> = lock.withLock {
            do throws(EditFailure) {
                let folderLock = try Self.lockFolder(of: path)
                defer { close(folderLock) }
                try editSavedQueriesLocked(change)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// An exclusive flock on the folder `path` is named in (BACKING for its
    /// own file; a link there is not followed: the daemon may be root, and
    /// the link another user's), waited for up to 5 s; the descriptor to
    /// close, which lets go.
    private static func lockFolder(of path: String) throws(EditFailure) -> Int32 {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(SystemError.current("open", path: folder)) }
        for _ in 0..<500 {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return fd }
            // A folder whose filesystem has no locks is edited unlocked, as before.
            guard errno == EWOULDBLOCK || errno == EINTR else { return fd }
            usleep(10_000)
        }
        close(fd)
        throw .system(SystemError(errno: EBUSY, operation: "lock", path: folder,
                                  detail: "another program has held a lock on the folder for 5 s; try again"))
    }

    private func editSavedQueriesLocked(_ change: (inout [String]) -> Void) throws(EditFailure) {
        let text: String
        do {
            let bytes = try file == nil ? Configuration.readBackingsOwnFile(path, backing: backing) : Configuration.readWholeFile(path)
            text = String(decoding: bytes, as: UTF8.self)
        } catch {
            guard error.errno == ENOENT else { throw .system(error) }
            text = ""
        }
        var edited: Configuration
        do {
            edited = try Configuration(parsing: text, file: path, now: .now)
        } catch {
            throw .broken(error)
        }
        let before = edited.savedQueries
        change(&edited.savedQueries)
        guard edited.savedQueries != before else { return }
        let newText = SavedQueriesText.replacing(in: text, with: edited.savedQueries)
        // The rewrite works line by line; TOML allows layouts it may not
        // foresee. Read back what would be written: it must hold the same
        // configuration with exactly the new queries, or nothing is written.
        let readBack = try? Configuration(parsing: newText, file: path, now: .now)
        guard let readBack, readBack.savedQueries == edited.savedQueries else {
            throw .system(SystemError(errno: EIO, operation: "rewrite", path: path,
                                      detail: "the queries setting is written in a way queryfs cannot rewrite; edit it by hand"))
        }
        // (Views by their text: ages in them count from another now.)
        guard readBack.views.map({ [$0.text] + $0.path }) == edited.views.map({ [$0.text] + $0.path }),
              readBack.sources == edited.sources, readBack.ignore == edited.ignore,
              readBack.desktopEntries == edited.desktopEntries else {
            throw .system(SystemError(errno: EIO, operation: "rewrite", path: path,
                                      detail: "rewriting the queries setting would change other settings; edit it by hand"))
        }
        do {
            // BACKING's own file with the rights of who put it there, as it is read.
            if file == nil {
                try Configuration.asPlacer(of: path, backing: backing) { () throws(SystemError) in
                    try Self.replaceFile(at: path, with: Array(newText.utf8))
                }
            } else {
                try Self.replaceFile(at: path, with: Array(newText.utf8))
            }
        } catch {
            throw .system(error)
        }
        // `current` stays as it was: the reload that follows must see the
        // difference, or a saved query on payload keys the scan does not
        // keep yet would never be read again (the caller asks for that reload).
    }

    /// Writes a new file beside the old one and renames it over
    /// (`AtomicFile`: flushed, the old file's mode and owner kept): a reader
    /// (or the watcher, or a crash) sees the old text or the new, never half.
    private static func replaceFile(at link: String, with bytes: [UInt8]) throws(SystemError) {
        // A configuration that is a symlink (kept in a dotfiles repository)
        // stays one: the file it points at is the one replaced.
        var entry = stat()
        let isLink = lstat(link, &entry) == 0 && entry.st_mode & S_IFMT == S_IFLNK
        let resolved = resolvedPath(link)
        if isLink, resolved == nil {
            // Writing would replace the link itself with a file.
            throw SystemError(errno: ENOENT, operation: "rewrite", path: link,
                              detail: "it is a link to a file that does not exist; create that file, or remove the link")
        }
        let path = resolved ?? link
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: folder) }
        defer { close(fd) }
        try AtomicFile.replace(Array(name.utf8), in: fd, with: bytes)
    }
}

extension Configuration {
    /// The built-in views, then the configured ones.
    package var viewSet: ViewSet {
        ViewSet(fixed: ViewDefinition.builtIn + views.map { $0.query.view(at: $0.path) }, desktopEntries: desktopEntries)
    }

    /// Payload key paths the saved queries filter or sort on (kept by the scan).
    package var savedQueryKeyPaths: Set<String> {
        Set(savedQueries.flatMap { (try? Query(parsing: $0, now: .now))?.payloadKeyPaths ?? [] })
    }

    package var catalogSettings: LiveCatalog.Settings {
        let patterns = self
        var sources = sources
        sources.extraKeyPaths.formUnion(savedQueryKeyPaths)
        var settings = LiveCatalog.Settings(viewSet: viewSet, sources: sources, savedQueries: savedQueries,
                                            ignoring: { patterns.ignores($0) })
        settings.ignorePatterns = ignore
        return settings
    }
}
