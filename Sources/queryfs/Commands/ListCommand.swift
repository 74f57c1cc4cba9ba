import ArgumentParser
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// `queryfs ls BACKING VIEW`: the entries a mount would show, in order.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "Print a view's entry names, one a line, in order.",
        discussion: "VIEW is a view's path as the mount shows it: by-name, by-modified, by-created, "
            + "unarchived, archived, tag/<tag> (the sanitized folder name), query/<query>; or a query, "
            + "such as 'tag:swift -archived modified>7d sort:-modified' (README.md, Queries)."
    )

    @Argument(help: "The backing directory.", completion: .directory) var backing: String
    @Argument(help: "The view (unarchived, tag/swift) or a query (tag:swift -archived).",
              completion: .custom { words, _, prefix in ViewCompletion.candidates(words, prefix: prefix) })
    var view: String
    @Flag(name: .long, help: "Print each name, a tab and the symlink target.") var long = false
    @Flag(name: [.customShort("0"), .customLong("null")],
          help: "End each entry with a NUL byte, not a newline (for xargs -0: an item's name, and so a target, may hold a newline).")
    var null = false
    @Option(name: .customLong("config"), help: "The configuration file (default: BACKING/.queryfs.toml when there is one).")
    var configFile: String?
    @Option(name: .customLong("absolute-links"), help: "Show targets as absolute links under this mount point.")
    var absoluteLinksMountPoint: String?
    @OptionGroup var index: IndexOptions

    func validate() throws {
        // An empty query selects every item: from a script, an unset variable
        // listed the whole collection with status 0 (found from outside).
        if view.allSatisfy(\.isWhitespace) {
            throw ValidationError("the view is empty: name a view (`queryfs views BACKING` lists them) or give a query")
        }
    }

    func run() throws {
        try reportingFailures { try requireUsableMount(backing) }
        // A mount point: the daemon's folders answer, already current.
        if configFile == nil, absoluteLinksMountPoint == nil, let mountPoint = MountedViews.mountPoint(backing) {
            // A query with a `/` (`tags~a/*`) names no folder of the mount: it is
            // asked of the directory the mount shows, as without a mount.
            if !Self.namesAFolder(view, of: mountPoint),
               let source = MountTable.mounts().first(where: { $0.type == "fuse.queryfs" && $0.mountPoint == mountPoint })?.source {
                return try listWithoutMount(source, configFile: MountedViews.otherConfigurationFile(ofMountPoint: mountPoint, backing: source))
            }
            return try reportingFailures {
                guard let entries = MountedViews.entries(mountPoint: mountPoint, view: view, withTargets: long) else {
                    // Another user's mount without allow_other answers nothing at all: say so, not "no view".
                    if access(mountPoint, R_OK | X_OK) != 0 {
                        throw Failure("the mount at \(mountPoint): \(String(cString: strerror(errno))) (a mount is its owner's alone unless mounted with -o allow_other)")
                    }
                    // A query the mount refuses (a payload key it was not given) is
                    // asked of the directory it shows, which says why if it is no query
                    // (found from outside: "its log says why", of a mount with no log).
                    if let source = MountTable.mounts().first(where: { $0.type == "fuse.queryfs" && $0.mountPoint == mountPoint })?.source {
                        return try listWithoutMount(source, configFile: MountedViews.otherConfigurationFile(ofMountPoint: mountPoint, backing: source))
                    }
                    throw Failure("no view '\(view)' in the mount at \(mountPoint), nor a query it accepts (its log says why)")
                }
                write(entries)
            }
        }
        // BACKING mounted with its own configuration: the mount's folder is
        // current and costs a listing, where the index costs a load of every
        // item (tag/Work at 100,000 items: 20-100 ms against 330-380). Names only: a
        // target is a readlink through the mount each. A view or query the
        // mount refuses (a payload key it was not given) is asked of the index.
        if configFile == nil, absoluteLinksMountPoint == nil, !long, !index.isGiven,
           let mountPoint = MountedViews.mountPoint(ofBacking: backing), Self.namesAFolder(view, of: mountPoint),
           let entries = MountedViews.entries(mountPoint: mountPoint, view: view, withTargets: false)
        {
            return write(entries)
        }
        try listWithoutMount(backing)
    }

    /// The entries computed from `backing` and its index, as without a mount
    /// (`configFile`: a mount's own, when it is asked in the mount's place).
    private func listWithoutMount(_ backing: String, configFile mountsConfiguration: String? = nil) throws {
        let configFile = mountsConfiguration ?? self.configFile
        try reportingFailures {
            let style: LinkStyle = absoluteLinksMountPoint.map { .absolute(mountPoint: $0) } ?? .relative
            let entries = try ViewResolver.entries(view, in: backing, configFile: configFile,
                                                   index: index.settings(for: backing), linkStyle: style)
            var output = StandardOutput()
            for entry in entries {
                output.write(entry.name)
                if long {
                    output.write([0x09])
                    output.write(entry.target)
                }
                output.write([terminator])
            }
            output.finish()
        }
    }

    /// A mount's entries, as the catalog's are printed.
    private func write(_ entries: [(name: [UInt8], target: [UInt8])]) {
        var output = StandardOutput()
        for entry in entries {
            output.write(entry.name)
            if long { output.write([0x09]); output.write(entry.target) }
            output.write([terminator])
        }
        output.flush()
    }

    private var terminator: UInt8 { null ? 0 : 0x0A }

    /// Whether the mount can answer `view` with a folder: a view path, or a
    /// query without `/` (a query folder's name). `tags~a/*` names none:
    /// asked of the mount, it made a stray `query/tags~a` folder and failed.
    private static func namesAFolder(_ view: String, of mountPoint: String) -> Bool {
        guard view.contains("/"), let first = view.split(separator: "/").first else { return true }
        return access(mountPoint + "/" + first, F_OK) == 0
    }
}

/// Loads a catalog as BACKING's configuration says, turning errors into the user's one line.
enum CatalogLoader {
    /// With `index`, through BACKING's index file (`IndexedCatalog`).
    static func load(_ backing: String, configFile: String? = nil, sources: FieldSources = FieldSources(),
                     index: IndexSettings? = nil) throws -> Catalog {
        try loadReporting(backing, configFile: configFile, sources: sources, index: index).catalog
    }

    /// The same, saying how the index served (nil: none was used).
    static func loadReporting(_ backing: String, configFile: String? = nil, sources: FieldSources = FieldSources(),
                              index: IndexSettings?) throws -> (catalog: Catalog, index: IndexedCatalog.Use?) {
        let configuration = try configurationFor(backing, configFile: configFile)
        if let hint = CollectionFormat.suggestion(for: backing, configuration: configuration) { printError("note: " + hint) }
        do {
            guard let index else {
                return (try Catalog.load(backing: backing, configuration: configuration, sources: sources), nil)
            }
            let (catalog, use) = try IndexedCatalog.load(backing: backing, configuration: configuration, sources: sources, index: index)
            return (catalog, use)
        } catch {
            throw Failure("cannot read backing directory \(backing): \(error.message)")
        }
    }

    /// BACKING's configuration, its mistakes the user's one line.
    static func configurationFor(_ backing: String, configFile: String?) throws -> Configuration {
        do {
            return try Configuration.load(backing: backing, file: configFile)
        } catch {
            throw Failure("\(error)")
        }
    }
}

/// A VIEW argument: a view path when it names one, else a query.
enum ViewResolver {
    /// The entries of VIEW: from its stored order alone when the index is
    /// trusted and holds it (`IndexedCatalog.storedView`), else evaluated
    /// over every item.
    static func entries(_ path: String, in backing: String, configFile: String?, index: IndexSettings?,
                        linkStyle: LinkStyle) throws -> [ViewEntry]
    {
        let text = queryOfFolder(path)
        if let index, text == path {
            let configuration = try CatalogLoader.configurationFor(backing, configFile: configFile)
            let stored: (definition: ViewDefinition, members: [Item])?
            do {
                stored = try IndexedCatalog.storedView(text, backing: backing, configuration: configuration,
                                                       sources: querySources(parse(text)), index: index)
            } catch {
                throw Failure("cannot read backing directory \(backing): \(error.message)")
            }
            if let stored {
                if let hint = CollectionFormat.suggestion(for: backing, configuration: configuration) { printError("note: " + hint) }
                return stored.definition.entries(ordered: stored.members, linkStyle: linkStyle)
            }
        }
        let (catalog, definition) = try resolve(path, in: backing, configFile: configFile, index: index)
        return catalog.entries(of: definition, linkStyle: linkStyle)
    }

    /// The payload keys VIEW needs read when it is a query.
    private static func querySources(_ parsed: Result<Query, QueryError>) -> FieldSources {
        var sources = FieldSources()
        if case .success(let query) = parsed { sources.extraKeyPaths = query.payloadKeyPaths }
        return sources
    }

    private static func parse(_ text: String) -> Result<Query, QueryError> {
        Result { () throws(QueryError) in try Query(parsing: text, now: .now) }
    }

    /// `query/Q` without a mount is the query Q, as the mount's folder of
    /// that name is (found from outside: a saved query's path, as `views`
    /// lists it, was refused as an unknown field `query`).
    static func queryOfFolder(_ path: String) -> String {
        let prefix = ViewDefinition.queryFolder + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return path }
        return String(path.dropFirst(prefix.count))
    }

    static func resolve(_ path: String, in backing: String, configFile: String? = nil, index: IndexSettings? = nil) throws
        -> (Catalog, ViewDefinition)
    {
        let text = queryOfFolder(path)
        let parsed = parse(text)
        let catalog = try CatalogLoader.load(backing, configFile: configFile, sources: querySources(parsed), index: index)
        // `query/Q` is the query Q, never a view that happens to be named Q (found from outside).
        if text == path, let definition = catalog.view(at: text) { return (catalog, definition) }
        switch parsed {
        case .success(let query):
            return (catalog, query.view(at: ["query", text]))
        case .failure(let error):
            // `tag/NAME` of a tag no item has: said so, not as a query that does not parse.
            if text.hasPrefix(ViewDefinition.tagFolder + "/"), text.count > ViewDefinition.tagFolder.count + 1 {
                let tag = text.dropFirst(ViewDefinition.tagFolder.count + 1)
                if let meant = NearestView.suggestion(for: text, among: catalog.views.map(\.pathString)) {
                    throw Failure("no item in \(backing) has the tag '\(tag)': did you mean '\(meant)'? (`queryfs views \(backing)` lists the tags)")
                }
                throw Failure("no item in \(backing) has the tag '\(tag)' (`queryfs views \(backing)` lists the tags)")
            }
            // (Not for `query/Q`: Q was meant as a query, and a view of that name is no answer.)
            if text == path, let meant = NearestView.suggestion(for: text, among: catalog.views.map(\.pathString)) {
                throw Failure("no view '\(text)' in \(backing): did you mean '\(meant)'? (`queryfs views \(backing)` lists the views)")
            }
            throw Failure("no view '\(text)' in \(backing), nor a query: \(error) (`queryfs views \(backing)` lists the views)")
        }
    }
}
