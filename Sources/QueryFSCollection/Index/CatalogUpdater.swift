import Logging
import QueryFSEngine

/// Turns what the watcher gathered into the next state of the index and the
/// `Update` its subscribers receive, in three steps so that request handlers
/// never wait on I/O (see `GuardedIndex`): take a reloaded configuration
/// under the lock; read every dirty item outside it; apply what was read
/// under it. Runs on the watcher thread.
/// Used on the watcher thread only (also by `applyNow`, whose work runs there).
struct CatalogUpdater: @unchecked Sendable {
    let guarded: GuardedIndex
    let backing: BackingDirectory
    let sources: ChangeSources
    let releaseWaiters: ReleaseWaiters
    /// Payload key paths kept whatever the configuration says (--payload-key).
    let requestedKeyPaths: Set<String>
    /// Where each applied batch is journaled (nil: no index file).
    let keeper: IndexKeeper?
    let logger: Logger

    func update(_ observation: BackingWatcher.Observation, configuration: LiveCatalog.Settings?) -> LiveCatalog.Update {
        // 1. A new configuration: views change in place; new field sources
        //    or ignore patterns mean every item is read again.
        var rescanAll = observation.needsFullRescan
        if observation.needsFullRescan { logger.warning("inotify queue overflowed: rescanning \(backing.path)") }
        let ignoresChanged = configuration.map { !sameIgnores($0.ignoring) } ?? false
        var reconfiguration: LiveIndex.Reconfiguration?
        var newSources: FieldSources?
        var sourcesChanged = false
        let indexedNames: [ItemName] = guarded.withLock { index in
            if let configuration {
                var sources = configuration.sources
                sources.extraKeyPaths = requestedKeyPaths.union(configuration.viewSet.payloadKeyPaths)
                    .union(configuration.sources.extraKeyPaths)
                sourcesChanged = sources != guarded.scanner.sources
                newSources = sources
                if sources != guarded.scanner.sources || ignoresChanged { rescanAll = true }
                guarded.setReading(sources: sources, ignored: configuration.ignoring)
                reconfiguration = index.reconfigure(configuration.viewSet)
            }
            return rescanAll ? Array(index.records.keys) : []
        }
        // 2. Read, without the lock.
        var names = observation.dirtyItems
        if rescanAll {
            names.formUnion(indexedNames)
            names.formUnion(listedNames(for: "a rescan"))
        }
        var (batch, stamps) = read(names, rescanAll: rescanAll)
        // 3. Apply.
        defer { journal(batch, stamps: stamps, reading: newSources.map { ($0, configuration?.ignorePatterns ?? []) }) }
        return guarded.withLock { index in
            if sourcesChanged { guarded.rebuildNumberedCopies(index: index) }
            guarded.markNumberedCopies(in: &batch, stamps: &stamps, index: index)
            let changes = index.apply(batch, stamps: stamps)
            // Items the rescan could not read (a writer held them) keep fields
            // read the old way: no stamp may vouch for them in the index file.
            if sourcesChanged {
                for (name, record) in index.records where batch[name] == nil { record.stamp = 0 }
            }
            var listings: [[String]: RecordList] = [:]
            for change in changes where change.kind != .vanished {
                listings[change.path] = index.view(at: change.path)?.records ?? []
            }
            for path in reconfiguration?.remade ?? [] { listings[path] = index.view(at: path)?.records ?? [] }
            // What was read beyond the dirty names (items of a folder found or gone) was touched too.
            var update = LiveCatalog.Update(changes: changes, listings: listings, touchedItems: observation.dirtyItems.union(batch.keys))
            update.reconfiguration = reconfiguration
            update.savedQueries = configuration?.savedQueries
            return update
        }
    }

    /// Reads each named item: its new state, nil if it is gone or ignored;
    /// an item a writer holds is left out (the views keep its last state)
    /// and read again once the writer lets go. In a recursive collection, a
    /// name may turn out to be a folder of items: its items are read too;
    /// and a folder gone (or become a bundle) takes the items under it along.
    private func read(_ names: Set<ItemName>, rescanAll: Bool) -> (batch: [ItemName: Item?], stamps: [ItemName: UInt64]) {
        let names = withSidecarOwners(names)
        let list = Array(names)
        let reads = readEach(list)
        // Folders gone first: their watches are dropped before an item on
        // the same folder (one that became a bundle) is watched again.
        var batch: [ItemName: Item?] = [:]
        var goneFolders: [ItemName] = []
        for (name, read) in zip(list, reads) where !(read.map { if case .folder = $0.scan { true } else { false } } ?? false) {
            if sources.forgetFolder(name) { goneFolders.append(name) }
        }
        if !goneFolders.isEmpty {
            for name in itemsUnder(goneFolders) where !names.contains(name) {
                sources.forget(name)
                batch[name] = Item?.none
            }
        }
        var stamps: [ItemName: UInt64] = [:]
        var newFolders: [ItemName] = []
        func take(_ name: ItemName, _ read: Scanner.ItemRead?) {
            guard let read else {
                batch[name] = Item?.none
                return
            }
            switch read.scan {
            case .item(let item):
                sources.follow(name, read: read)
                batch[name] = item
                stamps[name] = read.settledStamp
            case .gone:
                sources.forget(name)
                batch[name] = Item?.none
            case .locked:
                releaseWaiters.wait(for: name)
            case .folder:
                sources.forget(name)  // it was a bundle, maybe
                batch[name] = Item?.none
                newFolders.append(name)
            }
        }
        for (name, read) in zip(list, reads) { take(name, read) }
        // New folders: watched first, then listed, so nothing made in them is missed.
        for folder in newFolders {
            sources.followFolders([folder])
            guard let listing = try? backing.listing(under: folder) else { continue }  // gone meanwhile: its parent said so
            sources.followFolders(listing.folders)
            let inside = listing.items.filter { batch[$0] == nil }
            for (name, read) in zip(inside, readEach(inside)) { take(name, read) }
        }
        return (batch, stamps)
    }

    /// Sidecars touched touch their files; a file touched may have made an
    /// item of its own out of a sidecar that now is its (read again, it leaves).
    private func withSidecarOwners(_ names: Set<ItemName>) -> Set<ItemName> {
        let sidecars = guarded.scanner.sources.sidecars
        guard !sidecars.isEmpty else { return names }
        var all = names
        for name in names {
            let leaf = Array(name.bytes[name.lastComponentStart...])
            if sidecars.isSidecarShaped(leaf) {
                all.formUnion(backing.owners(ofSidecar: name))
            } else {
                // Its sidecars: an indexed one may now be hidden by it, and one on
                // disk but hidden till now may be left alone (its file removed or renamed).
                let prefix = Array(name.bytes[..<name.lastComponentStart])
                let candidates = sidecars.candidates(for: leaf).map { ItemName(prefix + $0.1) }
                let indexed = guarded.withLock { index in candidates.filter { index.records[$0] != nil } }
                all.formUnion(indexed)
                all.formUnion(candidates.filter { !indexed.contains($0) && backing.hasEntry($0) })
            }
        }
        return all
    }

    /// Reads items on every core when there are many (a rescan, a large burst), as the first scan does.
    private func readEach(_ list: [ItemName]) -> [Scanner.ItemRead?] {
        let scanner = guarded.scanner
        let ignored = guarded.ignored
        // Items whose released locks we hold: let go as soon as each is read,
        // not after the whole batch (a full rescan takes seconds at 100,000).
        let held = releaseWaiters.heldNames
        return parallelMap(list, threads: Scanner.readingThreads, minimumCount: 256) { name -> Scanner.ItemRead? in
            let read = ignored(name) ? nil : scanner.read(named: name, in: backing.fd)
            if held.contains(name) { releaseWaiters.letGo(of: [name]) }
            return read
        }
    }

    /// The items the index holds under any of `folders`.
    private func itemsUnder(_ folders: [ItemName]) -> [ItemName] {
        let prefixes = folders.map { $0.bytes + [UInt8(ascii: "/")] }
        return guarded.withLock { index in
            index.records.keys.filter { name in prefixes.contains { name.bytes.starts(with: $0) } }
        }
    }

    /// Hands what was applied to the index file's keeper (after the index
    /// lock is released: it only queues). A new way of reading first: the
    /// snapshot that follows holds the items as now read.
    private func journal(_ batch: [ItemName: Item?], stamps: [ItemName: UInt64], reading: (FieldSources, [String])?) {
        guard let keeper else { return }
        if let (sources, patterns) = reading { keeper.setReading(sources: sources, ignorePatterns: patterns) }
        keeper.append(batch.map { name, item in
            item.map { .upsert(IndexedItem(item: $0, stamp: stamps[name] ?? 0)) } ?? .remove(name)
        })
    }

    /// Whether `other` ignores the same of the names present now.
    private func sameIgnores(_ other: (ItemName) -> Bool) -> Bool {
        // Unlisted: taken as changed, so every item known is read again.
        guard let names = try? backing.itemNames() else { return false }
        return names.allSatisfy { guarded.ignored($0) == other($0) }
    }

    /// BACKING's item names; on a failure, none, and one line saying that
    /// items made since the last listing show at their next change.
    private func listedNames(for purpose: String) -> [ItemName] {
        do {
            let listing = try backing.listing()
            sources.followFolders(listing.folders)
            return listing.items
        } catch {
            logger.warning("""
                cannot list \(backing.path) for \(purpose) (\(error)): the items known are read again; \
                items added since show at their next change
                """)
            return []
        }
    }

    /// Evaluates again every view with relative ages, counted from `now`
    /// (`configuration`: the configured views recounted, nil if none has an
    /// age). Only thresholds move: nothing is read again.
    func recountAges(now: Timestamp, configuration: LiveCatalog.Settings?) -> LiveCatalog.Update? {
        guarded.withLock { index in
            var reconfiguration = LiveIndex.Reconfiguration()
            if let configuration { reconfiguration = index.reconfigure(configuration.viewSet) }
            reconfiguration.remade += index.countQueryAges(from: now)
            guard !reconfiguration.remade.isEmpty else { return nil }
            var listings: [[String]: RecordList] = [:]
            for path in reconfiguration.remade { listings[path] = index.view(at: path)?.records ?? [] }
            var update = LiveCatalog.Update(changes: [], listings: listings, touchedItems: [])
            update.reconfiguration = reconfiguration
            return update
        }
    }
}
