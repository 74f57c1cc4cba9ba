#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine
import QueryFSCollection

// Locks: `lock` guards the tables alone. It is taken under no other lock
// of the mount and takes none itself: callers get a `ViewFolder` out and use
// its own locks after `lock` is let go.

/// Every view folder and every item the mount has shown, with the serial
/// numbers that make up entry node ids. Serials are never reused, so ids
/// stay stable for the life of the mount.
final class ViewFolderTable: @unchecked Sendable {
    private let lock = PlainLock()
    private var folders: [ViewFolder?] = []           // by serial; nil once removed
    private var folderByPath: [[String]: ViewFolder] = [:]
    private var tagFolderNames: [String] = []         // present tag folders, sorted bytewise
    private var queryFolderNames: [String] = []       // query folders made so far, in order of making
    /// The latest record of each item, by serial (`ItemRecord.serial`):
    /// for entries that left their view but that the kernel still holds.
    /// An array, not a table by name: 8 bytes an item.
    private var latestRecords: [ItemRecord?] = []

    func folder(serial: UInt32) -> ViewFolder? {
        lock.withLock { Int(serial) < folders.count ? folders[Int(serial)] ?? nil : nil }
    }

    func folder(path: [String]) -> ViewFolder? {
        lock.withLock { folderByPath[path] }
    }

    /// The folder at `path`, made if new (its listing then set by the caller).
    func folder(path: [String], listing: @autoclosure () -> ViewListing, time: Timestamp) -> (ViewFolder, isNew: Bool) {
        lock.withLock {
            if let existing = folderByPath[path] { return (existing, false) }
            let folder = ViewFolder(serial: UInt32(folders.count), path: path, listing: listing(), changed: time)
            folders.append(folder)
            folderByPath[path] = folder
            if path.count == 2, path[0] == ViewDefinition.tagFolder {
                // Sorted when next read: sorting on every new folder made a
                // mount with 20,000 tag folders quadratic.
                tagFolderNames.append(path[1])
                tagFolderNamesSorted = false
            }
            if path.count == 2, path[0] == ViewDefinition.queryFolder { queryFolderNames.append(path[1]) }
            return (folder, true)
        }
    }

    /// A folder that no longer exists (a tag folder emptied, a view taken
    /// out of the configuration, a `query/` folder dropped): its path is free
    /// again and its memory released, but its serial stays taken (ids of gone
    /// entries never point elsewhere).
    func removeFolder(path: [String]) {
        lock.withLock {
            if let serial = folderByPath[path]?.serial { folders[Int(serial)] = nil }
            folderByPath[path] = nil
            if path.count == 2, path[0] == ViewDefinition.tagFolder { tagFolderNames.removeAll { $0 == path[1] } }
            if path.count == 2, path[0] == ViewDefinition.queryFolder { queryFolderNames.removeAll { $0 == path[1] } }
        }
    }

    private var tagFolderNamesSorted = true

    /// The folder at `path` takes the name `newPath` and keeps its node id
    /// (`mv tag/a tag/b`: the kernel moved its name to the same node).
    func moveFolder(from path: [String], to newPath: [String]) {
        lock.withLock {
            guard let old = folderByPath.removeValue(forKey: path) else { return }
            if let replaced = folderByPath[newPath] { folders[Int(replaced.serial)] = nil }
            let moved = ViewFolder(serial: old.serial, path: newPath, listing: old.listing, changed: old.changed)
            folders[Int(old.serial)] = moved
            folderByPath[newPath] = moved
            if path.count == 2, path[0] == ViewDefinition.tagFolder {
                tagFolderNames.removeAll { $0 == path[1] || $0 == newPath[1] }
                tagFolderNames.append(newPath[1])
                tagFolderNamesSorted = false
            }
            if path.count == 2, path[0] == ViewDefinition.queryFolder {
                queryFolderNames.removeAll { $0 == path[1] || $0 == newPath[1] }
                queryFolderNames.append(newPath[1])
            }
        }
    }

    var tagFolders: [String] {
        lock.withLock {
            if !tagFolderNamesSorted {
                tagFolderNames.sort { compareBytes(Array($0.utf8), Array($1.utf8)) < 0 }
                tagFolderNamesSorted = true
            }
            return tagFolderNames
        }
    }
    var queryFolders: [String] { lock.withLock { queryFolderNames } }

    /// Takes every record at once (at mount).
    func rememberAll(_ records: RecordTable) {
        let highest = records.values.reduce(0) { max($0, Int($1.serial)) }
        var latest = [ItemRecord?]()
        // Room for an eighth more items: the first new item would otherwise
        // grow the array under the lock lookups take (8 MB copied into fresh
        // pages at 1,000,000 items: the first create's latency 13.5 ms).
        latest.reserveCapacity(highest + 1 + (highest + 1) / 8)
        latest.append(contentsOf: repeatElement(nil, count: highest + 1))
        for record in records.values { latest[Int(record.serial)] = record }
        lock.withLock { latestRecords = latest }
    }

    func remember(_ record: ItemRecord) {
        lock.withLock {
            let serial = Int(record.serial)
            if serial >= latestRecords.count {
                latestRecords.append(contentsOf: repeatElement(nil, count: serial + 1 - latestRecords.count))
            }
            latestRecords[serial] = record
        }
    }

    /// The item numbered `serial` left the catalog (serials are never given twice).
    func forget(serial: UInt32) {
        lock.withLock { if Int(serial) < latestRecords.count { latestRecords[Int(serial)] = nil } }
    }

    /// The latest record of the item numbered `serial`.
    func latestRecord(serial: UInt32) -> ItemRecord? {
        lock.withLock { Int(serial) < latestRecords.count ? latestRecords[Int(serial)] : nil }
    }
}
