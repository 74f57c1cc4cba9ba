import QueryFSEngine
/// The views over a backing directory, kept current one changed item at a
/// time: each batch re-places only the items it names in each view (binary
/// search and memmove), and reports per view what changed as a diff.
///
/// Not thread-safe: one owner (the watcher's thread) applies changes and
/// hands the results on.
package final class LiveIndex {
    package private(set) var viewSet: ViewSet
    package private(set) var records = RecordTable() {
        didSet { allRecordsCache = nil }
    }
    /// Every record, and its item, as arrays: what a reconfiguration and a
    /// burst of new query views are evaluated over (a lone query view is
    /// evaluated record by record: `selectForQuery`). Kept for a few seconds
    /// (`dropIdleEvaluationCache`), so making many `query/` folders in a row
    /// rebuilds the items once, but not for the life of the mount: the
    /// items are full copies (about 350 bytes each beside the records').
    private var allRecordsCache: (records: [ItemRecord], items: [Item], columns: SortColumns, madeAt: Double)?
    private var allRecords: (records: [ItemRecord], items: [Item], columns: SortColumns) {
        if let cached = allRecordsCache { return (cached.records, cached.items, cached.columns) }
        let records = Array(records.values)
        let items = records.map(\.item)
        let made = (records, items, SortColumns(items: items))
        allRecordsCache = (made.0, made.1, made.2, monotonicSeconds())
        return made
    }

    /// How long the evaluation cache outlives its making.
    package static let evaluationCacheSeconds = 2.0

    /// Seconds until the evaluation cache is to be dropped, nil if there is none.
    package var evaluationCacheExpiry: Double? {
        allRecordsCache.map { max(0, $0.madeAt + Self.evaluationCacheSeconds - monotonicSeconds()) }
    }

    /// Drops the evaluation cache once it has been idle long enough; true if it did.
    package func dropIdleEvaluationCache() -> Bool {
        guard let expiry = evaluationCacheExpiry, expiry == 0 else { return false }
        allRecordsCache = nil
        return true
    }

    /// Which entry titles some item has: stale-name lookups ask it first.
    package let titlePresence: EntryTitlePresence

    /// How many views the start placed from stored orders (`StoredViewOrders`).
    private(set) var viewsPlacedFromStoredOrders = 0
    /// Whether the start evaluated a view an index snapshot could have
    /// stored (its order was missing or stale there): the next snapshot
    /// would spare the next start that work.
    private(set) var evaluatedStorableViews = false

    /// The last serial given to a record (`ItemRecord.serial`).
    private var lastSerial: UInt32 = 0

    /// The next serial, never 0; after 4 billion items it starts again (an
    /// id reused that late cannot still be held by the kernel for another).
    private static func next(_ last: inout UInt32) -> UInt32 {
        last = last == .max ? 1 : last + 1
        return last
    }

    private var fixedViews: [SortedView] {
        didSet {
            shortestAgeCache = nil
            fixedViewsByPath = Self.byPath(fixedViews)
        }
    }
    /// `view(at:)` is asked for every changed view of every batch: by path,
    /// not a search through 1,000 configured views each time.
    private var fixedViewsByPath: [[String]: SortedView] = [:]

    private static func byPath(_ views: [SortedView]) -> [[String]: SortedView] {
        var byPath: [[String]: SortedView] = [:]
        for view in views { byPath[view.definition.path] = view }
        return byPath
    }
    private var tagViews: [String: SortedView] = [:]
    /// Ad-hoc query views (`query/<query>/` of a mount), made on first use, by query text.
    private var queryViews: [String: SortedView] = [:] {
        didSet {
            shortestAgeCache = nil
            sortedQueryTextsCache = nil
        }
    }
    /// Derived from the views, kept until they change: the watcher asks for
    /// them on every change and every wake-up, 1,000 views or not.
    private var shortestAgeCache: Double??
    private var sortedQueryTextsCache: [String]?
    private var sortedQueryTexts: [String] {
        if let cached = sortedQueryTextsCache { return cached }
        let texts = queryViews.keys.sorted()
        sortedQueryTextsCache = texts
        return texts
    }

    /// `stamps`: for the index file, the stamp each item was read at (`ItemRecord.stamp`), in the same order.
    package convenience init(items: [Item], stamps: [UInt64] = [], viewSet: ViewSet = ViewSet()) {
        // Records are made on every core; serials are 1, 2, … in item order.
        let withStamps = stamps.count == items.count
        let records = parallelMap(Array(items.indices), threads: Scanner.defaultThreads, minimumCount: 4_096) { index in
            ItemRecord(items[index], stamp: withStamps ? stamps[index] : 0, serial: ItemRecord.serial(ofPosition: index))
        }
        self.init(records: records, items: items, viewSet: viewSet, storedOrders: StoredViewOrders())
    }

    /// `records`: the start's items, each serial unique among them.
    /// `items`: the same as `Item`s when the caller has them (else they
    /// are made from the records, and only if a view must be evaluated).
    /// `storedOrders`: the views' orders as a snapshot of exactly these
    /// records (in this order) stored them; a view found there is placed, not sorted.
    init(records itemRecords: [ItemRecord], items givenItems: [Item]? = nil, viewSet: ViewSet, storedOrders: StoredViewOrders) {
        self.viewSet = viewSet
        titlePresence = EntryTitlePresence(expectedItems: itemRecords.count)
        lastSerial = itemRecords.lazy.map(\.serial).max() ?? 0
        // The table and the title filter are filled side by side: at
        // 100,000 items these were 0.25 s of a trusted start's 0.9 s on one core.
        // Room for an eighth more before the first growth: growing rehashes
        // every record under the index lock (300 ms at 1,000,000 items), and a
        // table sized to the start exactly grew at the first new item.
        var table = RecordTable(minimumCapacity: itemRecords.count + itemRecords.count / 8)
        let presence = titlePresence
        _ = parallelMap([true, false], threads: 2, minimumCount: itemRecords.count < 4_096 ? 3 : 2) { fillsTable in
            if fillsTable {
                for record in itemRecords { table[record.name] = record }
            } else {
                presence.seed(itemRecords)
            }
        }
        records = table
        // Positions were checked against the snapshot's item count when read.
        func placed(_ positions: [UInt32]) -> RecordList? {
            positions.count <= itemRecords.count && positions.allSatisfy { Int($0) < itemRecords.count }
                ? RecordList(positions: positions, of: itemRecords) : nil
        }
        let storedMembers = viewSet.fixed.map { storedOrders.order(of: $0).flatMap(placed) }
        viewsPlacedFromStoredOrders = storedMembers.count { $0 != nil }
        evaluatedStorableViews = zip(viewSet.fixed, storedMembers).contains { $1 == nil && StoredViewOrders.key(of: $0) != nil }
            || storedOrders.tags == nil
        // Views are independent: evaluated on every core (1,000 configured
        // views over 100,000 items are most of a mount's start).
        // Items only for what must be evaluated: a start that placed every view makes none.
        let someFixedViewUnplaced = storedMembers.contains { $0 == nil }
        let items = givenItems ?? (someFixedViewUnplaced || storedOrders.tags == nil
            ? parallelMap(itemRecords, threads: Scanner.defaultThreads, minimumCount: 4_096) { $0.item } : [])
        let columns = someFixedViewUnplaced ? SortColumns(items: items) : nil
        fixedViews = parallelMap(Array(zip(viewSet.fixed, storedMembers)), threads: Scanner.defaultThreads, minimumCount: 2) {
            definition, stored in
            SortedView(definition: definition, records: stored ?? RecordList(positions: definition.select(items, columns: columns), of: itemRecords))
        }
        fixedViewsByPath = Self.byPath(fixedViews)
        if let storedTags = storedOrders.tags {
            for (folder, positions) in storedTags {
                guard let members = placed(positions) else { continue }
                tagViews[folder] = SortedView(definition: viewSet.styled(.tag(folder: folder)), records: members)
                viewsPlacedFromStoredOrders += 1
            }
            return
        }
        // Group by tag folder first: one pass over the items, not one per tag.
        var members: [String: [Int]] = [:]
        for (index, item) in items.enumerated() {
            for folder in Set(item.tags.flatMap(EntryNaming.tagFolderNames)) { members[folder, default: []].append(index) }
        }
        items.withUnsafeBufferPointer { buffer in
            for (folder, var indexes) in members {
                let definition = viewSet.styled(.tag(folder: folder))
                ViewSorter.sort(&indexes, items: buffer, order: definition.order)
                tagViews[folder] = SortedView(definition: definition, records: RecordList(positions: indexes, of: itemRecords))
            }
        }
    }

    /// Every view: fixed ones first, then tag folders sorted bytewise.
    package var views: [SortedView] {
        fixedViews + tagFolders.map { tagViews[$0]! }
    }

    package var tagFolders: [String] {
        tagViews.keys.sorted { compareBytes(Array($0.utf8), Array($1.utf8)) < 0 }
    }

    package func view(at path: [String]) -> SortedView? {
        if path.count == 2, path[0] == ViewDefinition.tagFolder { return tagViews[path[1]] }
        if path.count == 2, path[0] == ViewDefinition.queryFolder { return queryViews[path[1]] }
        return fixedViewsByPath[path]
    }

    package var items: [Item] { records.values.map(\.item) }

    /// Every fixed view's and tag folder's members, as shared copies.
    struct ViewListings: Sendable {
        var fixed: [(ViewDefinition, RecordList)]
        var tags: [(String, RecordList)]
    }

    /// What a snapshot of the index file stores of the views (`StoredViewOrders`).
    var viewListings: ViewListings {
        ViewListings(fixed: fixedViews.map { ($0.definition, $0.records) }, tags: tagViews.map { ($0.key, $0.value.records) })
    }

    /// Views gone and views made anew when the configured views change.
    package struct Reconfiguration: Sendable, Equatable {
        package var removed: [[String]] = []
        package var remade: [[String]] = []
        /// The views as they are now (what the mount names entries by).
        package var viewSet: ViewSet?
    }

    /// Takes a new set of configured views (the configuration was reloaded):
    /// a view whose definition is unchanged keeps its state, a new or changed
    /// one is evaluated afresh over the current items.
    package func reconfigure(_ newSet: ViewSet) -> Reconfiguration {
        var current: [[String]: SortedView] = [:]
        for view in fixedViews { current[view.definition.path] = view }
        let (all, items, columns) = allRecords
        var result = Reconfiguration()
        fixedViews = newSet.fixed.map { definition in
            if let existing = current[definition.path], existing.definition == definition { return existing }
            result.remade.append(definition.path)
            return SortedView(definition: definition, records: definition.select(items, columns: columns).map { all[$0] })
        }
        let newPaths = Set(newSet.fixed.map(\.path))
        result.removed = viewSet.fixed.map(\.path).filter { !newPaths.contains($0) }
        viewSet = newSet
        // Tag and query folders whose entries change form (`desktop-entries`): same members, new names.
        for (folder, view) in tagViews where view.definition != newSet.styled(view.definition) {
            tagViews[folder] = SortedView(restyling: view, as: newSet.styled(view.definition))
            result.remade.append(view.definition.path)
        }
        for (text, view) in queryViews where view.definition != newSet.styled(view.definition) {
            queryViews[text] = SortedView(restyling: view, as: newSet.styled(view.definition))
            result.remade.append(view.definition.path)
        }
        result.viewSet = newSet
        return result
    }

    /// The view of an ad-hoc query, made (and kept current from now on) if new.
    package func queryView(_ text: String, _ query: Query) -> SortedView {
        if let existing = queryViews[text] { return existing }
        let definition = viewSet.styled(query.view(at: [ViewDefinition.queryFolder, text]))
        let view = SortedView(definition: definition, records: selectForQuery(definition))
        queryViews[text] = view
        return view
    }

    /// When the last query was evaluated record by record (monotonic seconds).
    private var lastStreamedQuery: Double?

    /// The records a new query view holds, in its order. A lone query
    /// rebuilds one item at a time and keeps only those it selects: the
    /// evaluation cache holds every item rebuilt, which at 1,000,000 items
    /// took the daemon from 430 MB to 770 MB for its 2 s. The second query
    /// within those 2 s (saved queries at a start, a script making several)
    /// makes the cache, and the rest of the burst shares it.
    private func selectForQuery(_ definition: ViewDefinition) -> [ItemRecord] {
        let now = monotonicSeconds()
        if allRecordsCache != nil || lastStreamedQuery.map({ now - $0 < Self.evaluationCacheSeconds }) == true {
            let all = allRecords
            return definition.select(all.items, columns: all.columns).map { all.records[$0] }
        }
        lastStreamedQuery = now
        var selected: [ItemRecord] = []
        var items: [Item] = []
        let filter = definition.filter
        for record in records.values {
            let item = record.item
            guard filter.matches(item) else { continue }
            selected.append(record)
            items.append(item)
        }
        var ordering = definition
        ordering.filter = .all
        return ordering.select(items).map { selected[$0] }
    }

    /// The shortest relative age of any view (seconds), nil if none has one.
    package var shortestAge: Double? {
        if let cached = shortestAgeCache { return cached }
        let age = (fixedViews + queryViews.values).compactMap(\.definition.shortestAge).min()
        shortestAgeCache = .some(age)
        return age
    }

    /// Evaluates again, with relative ages counted from `now`, every query
    /// view that has one; returns their paths.
    package func countQueryAges(from now: Timestamp) -> [[String]] {
        var remade: [[String]] = []
        for (text, view) in queryViews where view.definition.shortestAge != nil {
            guard let query = try? Query(parsing: text, now: now) else { continue }
            queryViews[text] = nil
            remade.append(queryView(text, query).definition.path)
        }
        return remade
    }

    /// Stops keeping the view of an ad-hoc query (its folder was removed).
    package func forgetQueryView(_ text: String) {
        queryViews[text] = nil
    }

    package func hasQueryView(_ text: String) -> Bool { queryViews[text] != nil }

    /// Applies the new state of each named item (nil: it is gone) and returns
    /// what changed in each view, in view order. Items whose state is equal
    /// to the one already indexed change nothing (`stamps`, the stamps each
    /// was read at, are kept all the same).
    @discardableResult
    package func apply(_ changes: [ItemName: Item?], stamps: [ItemName: UInt64] = [:]) -> [ViewChange] {
        var changed: [(old: Placed?, new: Placed?)] = []
        for (name, state) in changes {
            let old = records[name].map { Placed(record: $0, item: $0.item) }
            switch (old, state) {
            case (nil, nil): continue
            case let (old?, new?) where old.item == new:
                old.record.stamp = stamps[name] ?? 0
                continue
            default:
                let serial = old?.record.serial ?? Self.next(&lastSerial)
                changed.append((old, state.map { Placed(record: ItemRecord($0, stamp: stamps[name] ?? 0, serial: serial), item: $0) }))
            }
        }
        guard !changed.isEmpty else { return [] }

        var result: [ViewChange] = []
        for view in fixedViews {
            if let change = update(view, with: changed, kind: .changed) { result.append(change) }
        }
        for text in sortedQueryTexts {
            if let change = update(queryViews[text]!, with: changed, kind: .changed) { result.append(change) }
        }
        // Each changed record's tag folders, sanitized once: testing every
        // folder's filter would sanitize every tag again for each folder.
        var foldersOfRecord: [ObjectIdentifier: Set<String>] = [:]
        for (old, new) in changed {
            for placed in [old, new].compactMap({ $0 }) {
                foldersOfRecord[ObjectIdentifier(placed.record)] = Set(placed.item.tags.flatMap(EntryNaming.tagFolderNames))
            }
        }
        for folder in foldersOfRecord.values.reduce(into: Set<String>(), { $0.formUnion($1) })
            .sorted(by: { compareBytes(Array($0.utf8), Array($1.utf8)) < 0 })
        {
            let existing = tagViews[folder]
            let view = existing ?? SortedView(definition: viewSet.styled(.tag(folder: folder)), records: [])
            let kindBefore: ViewChange.Kind = existing == nil ? .appeared : .changed
            let isMember = { (placed: Placed) in foldersOfRecord[ObjectIdentifier(placed.record)]?.contains(folder) ?? false }
            guard var change = update(view, with: changed, kind: kindBefore, isMember: isMember) else { continue }
            if view.count == 0 {
                tagViews[folder] = nil
                change = change.with(kind: .vanished)
            } else {
                tagViews[folder] = view
            }
            result.append(change)
        }
        for (old, new) in changed {
            if let new { records[new.record.name] = new.record } else if let old { records[old.record.name] = nil }
            titlePresence.update(from: old?.record, to: new?.record)
        }
        return result
    }

    /// A record with the item it holds, rebuilt once per change rather than
    /// once per view and per step of a binary search (`ItemRecord.item`).
    private struct Placed {
        let record: ItemRecord
        let item: Item
    }

    /// Re-places the changed items in one view and computes its diff.
    /// `isMember` says whether a record belongs in the view (its filter, unless the caller knows faster).
    private func update(_ view: SortedView, with changed: [(old: Placed?, new: Placed?)], kind: ViewChange.Kind,
                        isMember: ((Placed) -> Bool)? = nil) -> ViewChange? {
        let oldCount = view.count
        let isMember = isMember ?? { view.contains($0.item) }
        var leaving: [(record: ItemRecord, index: Int)] = []
        var arriving: [Placed] = []
        for (old, new) in changed {
            if let old, isMember(old), let index = view.existingPosition(of: old.record, old.item) { leaving.append((old.record, index)) }
            if let new, isMember(new) { arriving.append(new) }
        }
        guard !leaving.isEmpty || !arriving.isEmpty else { return nil }

        for (_, index) in leaving.sorted(by: { $0.index > $1.index }) { view.remove(at: index) }
        for placed in arriving { view.insert(placed.record, placed.item) }
        let newCount = view.count
        let placed = arriving.map { (record: $0.record, index: view.position(of: $0.record, $0.item)) }

        let diff = IncrementalDiff(leaving: leaving, arriving: placed, oldCount: oldCount)
        var oldNames: [Int: [UInt8]] = [:]
        let naming = view.definition.entryTitle
        for (record, index) in leaving { oldNames[index] = record.entryName(index: index, count: oldCount, naming: naming) }
        var newNames: [Int: [UInt8]] = [:]
        for (record, index) in placed { newNames[index] = record.entryName(index: index, count: newCount, naming: naming) }
        return ViewChange(
            path: view.definition.path, kind: kind, diff: diff.result, oldCount: oldCount, newCount: newCount,
            oldNames: oldNames, newNames: newNames, updatedTo: diff.updatedTo)
    }
}

extension ViewChange {
    func with(kind: Kind) -> ViewChange {
        ViewChange(path: path, kind: kind, diff: diff, oldCount: oldCount, newCount: newCount,
                   oldNames: oldNames, newNames: newNames, updatedTo: updatedTo)
    }
}
