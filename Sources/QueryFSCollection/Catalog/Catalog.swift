import QueryFSEngine
/// The items of a backing directory, read once, with the views over them:
/// what `queryfs ls`, `views` and `status` answer from.
package struct Catalog: Sendable {
    package var items: [Item]
    package var viewSet: ViewSet

    package init(items: [Item], viewSet: ViewSet = ViewSet()) {
        self.items = items
        self.viewSet = viewSet
    }

    /// Scans `backing`, extracting the payload values the views need.
    package static func load(backing path: String, viewSet: ViewSet = ViewSet(), sources: FieldSources = FieldSources())
        throws(SystemError) -> Catalog
    {
        var sources = sources
        sources.extraKeyPaths.formUnion(viewSet.payloadKeyPaths)
        var items = try Scanner(sources: sources).scan(directory: path)
        sources.conflicts.markNumberedCopies(&items)
        return Catalog(items: items, viewSet: viewSet)
    }

    /// Scans `backing` as its configuration says: its views beside the
    /// built-in ones, its field aliases, its ignore patterns.
    package static func load(backing path: String, configuration: Configuration, sources extra: FieldSources = FieldSources())
        throws(SystemError) -> Catalog
    {
        let sources = configuration.readingSources(adding: extra)
        var catalog = try load(backing: path, viewSet: configuration.viewSet, sources: sources)
        if !configuration.ignore.isEmpty {
            catalog.items.removeAll { configuration.ignores($0.name) }
            // An ignored original leaves its numbered copies without one.
            sources.conflicts.markNumberedCopies(&catalog.items)
        }
        return catalog
    }

    /// Every view path, fixed views first, then tags.
    package var views: [ViewDefinition] { viewSet.views(over: items) }

    package func view(at path: String) -> ViewDefinition? { viewSet.view(at: path, over: items) }

    package func entries(of view: ViewDefinition, linkStyle: LinkStyle = .relative) -> [ViewEntry] {
        view.entries(of: items, linkStyle: linkStyle)
    }

    /// Payload problems, one per item and problem, sorted by item name.
    package var problems: [(item: ItemName, problem: String)] {
        items.filter { !$0.problems.isEmpty }
            .sorted { $0.name < $1.name }
            .flatMap { item in item.problems.map { (item.name, $0) } }
    }
}

extension Configuration {
    /// What a command reads items with: the configured field sources, with
    /// `extra`'s payload keys (a query's) and those the views filter or sort on.
    package func readingSources(adding extra: FieldSources) -> FieldSources {
        var sources = self.sources
        sources.extraKeyPaths.formUnion(extra.extraKeyPaths)
        sources.extraKeyPaths.formUnion(viewSet.payloadKeyPaths)
        return sources
    }
}

/// What `queryfs status` prints.
package struct CatalogSummary: Sendable {
    package var itemCount = 0
    package var bundleCount = 0
    package var fileCount = 0
    package var archivedCount = 0
    package var tagCount = 0
    package var itemsWithProblems = 0
    package var conflictCount = 0

    package init(_ catalog: Catalog) {
        itemCount = catalog.items.count
        bundleCount = catalog.items.count { $0.kind == .bundle }
        fileCount = itemCount - bundleCount
        archivedCount = catalog.items.count { $0.archived }
        tagCount = ViewSet.tagFolders(of: catalog.items).count
        itemsWithProblems = catalog.items.count { !$0.problems.isEmpty }
        conflictCount = catalog.items.count { $0.conflict != nil }
    }

    package var lines: [String] {
        [
            "items: \(itemCount) (\(bundleCount) bundle\(bundleCount == 1 ? "" : "s"), \(fileCount) plain file\(fileCount == 1 ? "" : "s"))",
            "archived: \(archivedCount), unarchived: \(itemCount - archivedCount)",
            "tags: \(tagCount)",
            "conflict copies: \(conflictCount) (conflicts/)",
            "payload problems: \(itemsWithProblems) item\(itemsWithProblems == 1 ? "" : "s")",
        ]
    }
}
