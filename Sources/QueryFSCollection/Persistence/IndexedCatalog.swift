import QueryFSEngine
/// `queryfs ls`, `views` and `status` on a backing directory, through its
/// index file:
///
/// - a mount keeping the index current (its lock says "mount PID"), or
///   `--trust-index`: the items come from the index, BACKING is not read;
/// - otherwise every item is stamped (stats only) and only those whose
///   stamp changed since the index was written are read; what was read is
///   written back as a new index when no mount holds it, so the next
///   command reads nothing that did not change;
/// - no usable index: every item is read, and an index written.
package enum IndexedCatalog {
    /// How the items were had, for `queryfs status`.
    package struct Use: Sendable {
        package var path: String
        /// "kept current by mount PID", "trusted", "stamps compared", or why it was not used.
        package var how: String
        package var itemsRead = 0
    }

    /// The items of the view at `viewPath` (`tag/Work`, `by-name`, a
    /// configured view), in its order, from the index file's stored order
    /// of it: only its members are decoded, nothing is sorted. When the
    /// index is trusted (`--trust-index`, or kept current by a mount) that
    /// is all; otherwise BACKING is first stamped, stats only, as `load`
    /// does — and the stored view answers only when every item is the one
    /// indexed (no name added or gone, no stamp changed). nil otherwise, and
    /// `load` answers as before. The same answer as `load` and evaluating
    /// the view: the order was a mount's listing of these very items, under
    /// the same ignore patterns.
    ///
    /// Why the unchanged case is worth its own path: at 100,000 notes,
    /// `queryfs ls BACKING by-name` spent 1.2–1.4 s decoding every item and
    /// sorting the view again after a stat walk that `find` does in 0.3 s.
    package static func storedView(_ viewPath: String, backing path: String, configuration: Configuration,
                                   sources extra: FieldSources, index settings: IndexSettings)
        throws(SystemError) -> (definition: ViewDefinition, members: [Item])?
    {
        guard let (definition, key) = storedKey(viewPath, viewSet: configuration.viewSet) else { return nil }
        let (root, identity) = try wanted(backing: path, configuration: configuration, sources: extra)
        let location = settings.location
        guard location.refusal(backing: root.path) == nil else { return nil }
        let trusted = settings.trust || IndexLock.holder(location)?.hasPrefix("mount ") == true
        let freshness: IndexFile.ViewFreshness = trusted ? .trusted : .checked { stamps in
            guard let names = try? root.itemNames().filter({ !configuration.ignores($0) }) else { return false }
            return IndexReconciler.allUnchanged(names, stamps: stamps, root: root)
        }
        guard let members = IndexFile.readView(path: location.path, wanted: identity, view: key, freshness: freshness) else { return nil }
        return (definition, members)
    }

    /// The view a path names, as `ViewSet.view(at:)` finds it, with the key
    /// its order is stored under; nil for a view never stored (a relative age).
    static func storedKey(_ viewPath: String, viewSet: ViewSet) -> (ViewDefinition, StoredViewOrders.Key)? {
        let components = viewPath.split(separator: "/").map(String.init)
        if let fixed = viewSet.fixed.first(where: { $0.path == components }) {
            return StoredViewOrders.key(of: fixed).map { (fixed, .fixed($0)) }
        }
        guard components.count >= 2, components[0] == ViewDefinition.tagFolder else { return nil }
        let folder = components.dropFirst().joined(separator: "/")
        // Styled as the view set has it (found from outside: `desktop-entries
        // = ["tag/*"]` gave symlink names once the stored order answered).
        return (viewSet.styled(.tag(folder: folder)), .tag(folder))
    }

    /// BACKING opened as the command reads it, and what an index must
    /// describe to serve the command (`IndexFile.Identity`).
    private static func wanted(backing path: String, configuration: Configuration,
                               sources extra: FieldSources) throws(SystemError) -> (BackingDirectory, IndexFile.Identity)
    {
        let sources = configuration.readingSources(adding: extra)
        let root = try BackingDirectory(path: path, readingAs: sources)
        let identity = try IndexFile.Identity(backing: root, sources: sources, payloadLimit: Scanner(sources: sources).payloadLimit,
                                              ignorePatterns: configuration.ignore)
        return (root, identity)
    }

    package static func load(backing path: String, configuration: Configuration, sources extra: FieldSources,
                            index settings: IndexSettings) throws(SystemError) -> (Catalog, Use)
    {
        let (root, identity) = try wanted(backing: path, configuration: configuration, sources: extra)
        let sources = identity.sources
        let viewSet = configuration.viewSet
        let scanner = Scanner(sources: sources)
        let location = settings.location
        if let refusal = location.refusal(backing: root.path) {
            return (try Catalog.load(backing: path, configuration: configuration, sources: extra), Use(path: location.path, how: "not used: " + refusal))
        }
        let holder = IndexLock.holder(location)
        let keptByMount = holder?.hasPrefix("mount ") == true
        let ignored = { (name: ItemName) in configuration.ignores(name) }
        var use = Use(path: location.path, how: "")
        var indexed: [ItemName: ItemRecord] = [:]
        var hadViewOrders = false
        var writtenWith = identity
        switch IndexFile.read(path: location.path, wanted: identity) {
        case .success(let contents):
            // A mount's index lacks what that mount ignores: trusted only under the same patterns.
            let sameIgnores = contents.identity.ignorePatterns == configuration.ignore
            if keptByMount && sameIgnores || settings.trust {
                use.how = keptByMount && !settings.trust ? "kept current by \(holder!)" : "trusted (--trust-index)"
                var items = contents.items.filter { !ignored($0.name) }.map(\.item)
                sources.conflicts.markNumberedCopies(&items)
                return (Catalog(items: items, viewSet: viewSet), use)
            }
            indexed = contents.byName()
            hadViewOrders = !contents.viewOrders.isEmpty
            // Read what changed with every key the index keeps, so the index written back keeps them too.
            writtenWith.sources.extraKeyPaths.formUnion(contents.identity.sources.extraKeyPaths)
            use.how = "stamps compared"
        case .failure(let rejection):
            use.how = "not used: \(rejection)"
        }
        var reader = scanner
        reader.sources = writtenWith.sources
        let names = try root.itemNames().filter { !ignored($0) }
        let kept = IndexReconciler.unchanged(names, in: indexed, root: root)
        var entries: [IndexedItem] = []
        entries.reserveCapacity(names.count)
        var unread: [ItemName] = []
        for (name, entry) in zip(names, kept) {
            if let entry { entries.append(IndexedItem(item: entry.item, stamp: entry.stamp)) } else { unread.append(name) }
        }
        let reads = reader.readAll(unread, in: root.fd)
        for read in reads {
            if case .item(let item) = read.scan { entries.append(IndexedItem(item: item, stamp: read.settledStamp)) }
        }
        use.itemsRead = unread.count
        var items = entries.map(\.item)
        sources.conflicts.markNumberedCopies(&items)
        // Written back when something changed, or when the file holds no
        // view orders yet — and never under a mount's feet.
        let changed = !unread.isEmpty || indexed.count != entries.count
        if holder == nil, changed || !hadViewOrders, IndexFile.mayReplace(location.path) {
            switch IndexLock.take(location) {
            case .acquired(let lock):
                do {
                    let orders = Self.viewOrders(of: items, viewSet: viewSet)
                    try IndexFile.replace(at: location, with: IndexFile.snapshot(entries, identity: writtenWith, viewOrders: orders))
                } catch {
                    use.how += "; not written back: \(error.operation): \(error.message)"
                }
                withExtendedLifetime(lock) {}
            case .held: break  // a mount started meanwhile: it keeps the index now
            case .failed(let error): use.how += "; not written back: \(error.operation): \(error.message)"
            }
        }
        return (Catalog(items: items, viewSet: viewSet), use)
    }

    /// Every view's order over `items` (a snapshot's, in its order, marked
    /// as a mount marks them), as a mount's snapshot stores them: the next
    /// command whose stat walk finds nothing changed lists its view from the
    /// stored order (`storedView`) instead of decoding every item and
    /// sorting again. At 100,000 notes, `queryfs ls BACKING tag/X` after
    /// an unchanged walk: 0.87 s → 0.26 s; writing them costs the command
    /// that writes the file back about 0.3 s more.
    static func viewOrders(of items: [Item], viewSet: ViewSet) -> StoredViewOrders {
        let records = parallelMap(Array(items.indices), threads: Scanner.defaultThreads, minimumCount: 4_096) { index in
            ItemRecord(items[index], stamp: 0, serial: ItemRecord.serial(ofPosition: index))
        }
        let index = LiveIndex(records: records, items: items, viewSet: viewSet, storedOrders: StoredViewOrders())
        return StoredViewOrders(records: records, listings: index.viewListings)
    }
}
