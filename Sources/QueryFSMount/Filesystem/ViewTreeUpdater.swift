#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine
import QueryFSCollection

/// What one burst of the live catalog changed in the mount's tree, once the
/// tree holds it: what the kernel must forget (`KernelCacheInvalidator`)
/// and what a watcher of the mount must hear (`EventReplayer`), in the
/// order the folders changed.
struct KernelDelta {
    /// A view folder's part of the burst.
    enum FolderChange {
        /// A new listing; `old` nil when the folder is new.
        case replaced(ViewFolder, old: ViewListing?, change: ViewChange)
        /// A tag folder made by mkdir whose last item left: it stays, empty, until rmdir.
        case emptied(ViewFolder, old: ViewListing, change: ViewChange)
        /// A tag folder whose last item left, gone from `tag/`.
        case removed(ViewFolder, change: ViewChange)
    }

    var folders: [FolderChange] = []
    /// Names and nodes of folders a reconfiguration or a saved query's removal took away.
    var forgottenEntries: [(parent: UInt64, name: [UInt8])] = []
    var forgottenInodes: [UInt64] = []
    /// Configured view folders a reload took away (`old`), made afresh (both) or added (`new`).
    var reconfiguredFolders: [(path: [String], old: ViewFolder?, new: ViewFolder?)] = []
    /// Serials of the items whose entries changed in some view.
    var changedItems = Set<UInt32>()
    /// Items the burst read again, and those of them that left the catalog.
    var touchedItems = Set<ItemName>()
    var goneItems = Set<ItemName>()
    /// Those of them that joined the catalog with this burst (new serials).
    var joinedItems = Set<ItemName>()
    /// Whether a tag folder appeared: `tag/`'s own listing changed.
    var tagRootChanged = false
}

/// Puts a burst of the live catalog into the mount's tree — the records
/// entries resolve to, the configured folders, the saved queries, each
/// changed view's listing — and says what it changed (`KernelDelta`).
/// Runs on the watcher thread. Every listing is in before anything is
/// dropped from the kernel's caches: a lookup of a new entry finds it as soon
/// as its listing is, not after the readdir caches, names and replay scripts
/// of the views before it (at 1,000,000 items those held by-modified back by
/// up to 5 ms).
struct ViewTreeUpdater {
    let filesystem: QueryFilesystem

    func apply(_ update: LiveCatalog.Update) -> KernelDelta {
        var delta = KernelDelta()
        let now = Timestamp.now
        filesystem.lastChangeStorage.withLock { $0 = now }
        let folders = filesystem.folders
        for change in update.changes {
            for serial in change.newNames.keys.compactMap({ update.listings[change.path]?[$0].serial }) { delta.changedItems.insert(serial) }
        }
        delta.touchedItems = update.touchedItems
        for item in update.touchedItems {
            if let record = filesystem.catalog.withIndex({ $0.records[item] }) {
                if folders.latestRecord(serial: record.serial) == nil { delta.joinedItems.insert(item) }
                folders.remember(record)
            } else {
                delta.goneItems.insert(item)
            }
        }
        if let reconfiguration = update.reconfiguration {
            let forgotten = filesystem.reconfigure(reconfiguration, listings: update.listings, at: now)
            delta.forgottenEntries += forgotten.entries
            delta.forgottenInodes += forgotten.inodes
            delta.reconfiguredFolders += forgotten.folders
        }
        if let saved = update.savedQueries {
            let forgotten = filesystem.takeSavedQueries(saved)
            delta.forgottenEntries += forgotten.entries.map { (NodeID.queryRoot, $0) }
            delta.forgottenInodes += forgotten.inodes
        }
        for change in update.changes {
            if change.kind == .vanished, change.path.count == 2 {
                guard let folder = folders.folder(path: change.path) else { continue }
                let old = folder.listing
                folder.replace(ViewListing(records: []), at: now)
                if filesystem.madeTagFolders.withLock({ $0.contains(change.path[1]) }) {
                    delta.folders.append(.emptied(folder, old: old, change: change))
                } else {
                    filesystem.tagRootLock.withLock { folders.removeFolder(path: change.path) }
                    delta.folders.append(.removed(folder, change: change))
                }
                continue
            }
            let records = update.listings[change.path] ?? []
            let published: (folder: ViewFolder, old: ViewListing?)? = change.kind == .appeared
                ? filesystem.tagRootLock.withLock { filesystem.publishListing(of: change.path, records: records, at: now) }
                : filesystem.publishListing(of: change.path, records: records, at: now)
            guard let (folder, old) = published else { continue }
            if change.kind == .appeared { delta.tagRootChanged = true }
            delta.folders.append(.replaced(folder, old: old, change: change))
        }
        return delta
    }
}
