#if canImport(Glibc)
import Glibc
#endif
import Logging
import QueryFSEngine

/// How a live catalog starts: the items the index file recorded, taken
/// where their files are as it says (all of them on a trusted start, the
/// comparison then made in the background), the rest read from BACKING;
/// the index built from them; and the index file kept from then on.
/// `LiveCatalog.init` composes the parts; this is the bootstrap.
struct CatalogStart {
    let guarded: GuardedIndex
    let keeper: IndexKeeper?
    let status: IndexStatus
    let reconciliation: BackgroundReconciliation?
    /// What the start has to say about the index, logged once live.
    let notes: [LogNote]

    init(root: BackingDirectory, viewSet: ViewSet, sources: FieldSources, coordinated: Scanner,
         ignored: @escaping @Sendable (ItemName) -> Bool, changeSources: ChangeSources, releaseWaiters: ReleaseWaiters,
         index indexSettings: IndexSettings?, progress: (@Sendable (_ read: Int, _ total: Int) -> Void)?,
         wake: @escaping @Sendable () -> Void, logger: Logger) throws(SystemError)
    {
        var notes: [LogNote] = []
        let opened = indexSettings.flatMap {
            OpenedIndex.open($0, root: root, sources: sources, payloadLimit: coordinated.payloadLimit, notes: &notes)
        }
        let trusted = opened?.settings.trust == true && opened?.contents != nil
        // A trusted start lists BACKING in the background too (100,000 names: 60 ms of a start meant to take 0.5 s).
        let names = trusted ? [] : try root.itemNames().filter { !ignored($0) }
        var start = InitialItems(capacity: max(names.count, opened?.contents?.items.count ?? 0))
        var unread = names
        if let contents = opened?.contents {
            unread = start.take(from: contents, listed: names, trusted: trusted, root: root, ignored: ignored, sources: changeSources)
        }
        start.read(unread, root: root, coordinated: coordinated, sources: changeSources, releaseWaiters: releaseWaiters,
                   progress: progress)
        start.compactRead { names in
            // Past any writer's lock, as `InitialItems.read` reads a locked
            // item: the release waiter it set reads that item again later.
            var plain = coordinated
            plain.respectsLocks = false
            return names.compactMap { name in
                let read = plain.read(named: name, in: root.fd)
                guard case .item(let item) = read.scan else { return nil }
                return (item, read.settledStamp)
            }
        }
        changeSources.followListing(knownNames: Set(trusted ? start.records.map(\.name) : names))
        let (marksChanged, copyShapes) = start.markNumberedCopies(sources.conflicts)
        // A start holding exactly the snapshot's items, in its order (a
        // trusted one, or one that found nothing changed), places the views
        // as the snapshot stored them.
        var storedOrders = StoredViewOrders()
        if start.inSnapshotOrder, !marksChanged, let contents = opened?.contents, start.records.count == contents.items.count {
            storedOrders = contents.viewOrders
        }
        let guarded = GuardedIndex(index: LiveIndex(records: start.records, viewSet: viewSet, storedOrders: storedOrders),
                                   scanner: coordinated, ignored: ignored, numberedCopies: NumberedCopies(shapes: copyShapes))
        var (keeper, status, reconciliation) = Self.keepIndex(
            opened, names: names, start: start, guarded: guarded, root: root, ignored: ignored, wake: wake,
            notes: &notes, logger: logger)
        if opened == nil, let why = notes.last { status.note = "none kept: " + why.text }
        // An index written without the views' orders (by a command, which
        // evaluates one view; or with a journal, whose replay drops them)
        // makes every start select and sort every view: at 100,000 notes a
        // trusted start took 1.1 s instead of 0.4. Written once, now, the
        // orders serve every later start.
        if let keeper, opened?.contents != nil, guarded.withLock({ $0.evaluatedStorableViews }) { keeper.storeViewOrders() }
        status.viewsFromIndex = guarded.withLock { $0.viewsPlacedFromStoredOrders }
        (self.guarded, self.keeper, self.status, self.reconciliation, self.notes) = (guarded, keeper, status, reconciliation, notes)
    }

    /// Starts keeping the index current: what the start read joins its
    /// journal (or, when there was no usable index, a first snapshot is
    /// written); a trusted start compares stamps in the background.
    private static func keepIndex(
        _ opened: OpenedIndex?, names: [ItemName], start: InitialItems, guarded: GuardedIndex, root: BackingDirectory,
        ignored: @escaping @Sendable (ItemName) -> Bool, wake: @escaping @Sendable () -> Void, notes: inout [LogNote],
        logger: Logger
    ) -> (IndexKeeper?, IndexStatus, BackgroundReconciliation?) {
        guard let opened else { return (nil, IndexStatus(path: nil, note: "none kept"), nil) }
        let keeper = IndexKeeper(location: opened.settings.location, lock: opened.lock, identity: opened.identity,
                                 loaded: opened.contents, logger: logger) { [guarded] in
            guarded.withLock { (Array($0.records.values), $0.viewListings) }
        }
        var status = IndexStatus(path: opened.settings.location.path, note: opened.contents == nil ? "written anew" : "loaded")
        status.itemsFromIndex = start.fromIndex
        status.itemsRead = start.records.count - start.fromIndex
        guard var contents = opened.contents else {
            status.reconciled = true
            keeper.markCurrent()
            return (keeper, status, nil)
        }
        guard opened.settings.trust else {
            // What changed while unmounted: items read instead of taken, and indexed items no longer listed.
            var records: [IndexFile.Record] = start.records[start.fromIndex...].map {
                .upsert(IndexedItem(item: $0.item, stamp: $0.stamp))
            }
            // All of the snapshot's items were taken: none can be gone (a set of 100,000 names spared).
            if !start.inSnapshotOrder {
                let listed = Set(names)
                for entry in contents.items where !listed.contains(entry.name) { records.append(.remove(entry.name)) }
            }
            keeper.append(records)
            status.reconciled = true
            status.changedWhileUnmounted = records.count
            keeper.markCurrent()
            return (keeper, status, nil)
        }
        status.note = "loaded, trusted: reconciling in the background"
        notes.append(LogNote(.info, "index \(opened.settings.location.path): \(start.fromIndex) items taken on trust; reconciling in the background"))
        // The views are placed: their stored orders (4 bytes per member) need not live as long as the comparison.
        contents.viewOrders = StoredViewOrders()
        return (keeper, status, BackgroundReconciliation(index: contents, root: root, ignored: ignored, wake: wake))
    }
}
