/// Reloads the configuration file of a live mount: each edit that parses
/// becomes the catalog's new views, aliases and ignore patterns; an edit
/// that does not parse is logged with its file, line and column, and the
/// last good configuration stays.
public final class ConfigurationReloader: @unchecked Sendable {
    private let backing: String
    private let file: String?
    private let log: @Sendable (String) -> Void
    /// Touched only on the watcher's thread, which calls `reload`.
    private var current: Configuration

    public init(backing: String, file: String?, loaded: Configuration, log: @escaping @Sendable (String) -> Void) {
        self.backing = backing
        self.file = file
        current = loaded
        self.log = log
    }

    /// The file watched: `--config FILE`, or BACKING/.queryfs.toml.
    public var path: String { file ?? backing + "/" + Configuration.fileName }

    /// The new configuration for the catalog, or nil to keep the current one.
    public func reload() -> LiveCatalog.Configuration? {
        let next: Configuration
        do {
            next = try Configuration.load(backing: backing, file: file)
        } catch {
            log("configuration not reloaded, the last good one stays: \(error)")
            return nil
        }
        guard next != current else { return nil }
        current = next
        log("configuration reloaded from \(path): \(next.views.count) views")
        return next.catalogConfiguration
    }
}

extension Configuration {
    /// The built-in views, then the configured ones.
    public var viewSet: ViewSet {
        ViewSet(fixed: ViewDefinition.builtIn + views.map { $0.query.view(at: $0.path) })
    }

    public var catalogConfiguration: LiveCatalog.Configuration {
        let patterns = self
        return LiveCatalog.Configuration(viewSet: viewSet, sources: sources, ignoring: { patterns.ignores($0.description) })
    }
}
