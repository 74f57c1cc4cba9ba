#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One view's entries as the kernel sees them right now: an immutable
/// snapshot, swapped whole when the view changes, so a directory handle
/// can keep listing the state it opened.
final class ViewListing: @unchecked Sendable {
    let records: RecordList
    let width: Int
    /// What entries are named after (`conflicts/`: the item each copy clashes with).
    let naming: ViewDefinition.EntryTitle

    init(records: RecordList, naming: ViewDefinition.EntryTitle = .title) {
        self.records = records
        self.naming = naming
        width = EntryNaming.rankWidth(count: records.count)
    }

    var count: Int { records.count }

    /// The indices whose names the kernel was given from this listing while
    /// it was current (exact lookups, readdirplus replies, the event
    /// replay's operations), as one range: the names it may still hold. A
    /// sweep that goes past this listing compares only these
    /// (`NameSweeps`); final once the folder holds another listing.
    private var shownStorage: Range<Int>?
    private let shownLock = PlainLock()

    var shown: Range<Int>? { shownLock.withLock { shownStorage } }

    func noteShown(_ indices: Range<Int>) {
        guard !indices.isEmpty else { return }
        shownLock.withLock { shownStorage = shownStorage.map { $0.hull(indices) } ?? indices }
    }

    func name(at index: Int) -> [UInt8] {
        let (title, ext) = records[index].entryTitle(naming)
        return EntryNaming.entryName(rank: index + 1, width: width, title: title, ext: ext)
    }

    /// The entry a name means: exactly (`index(ofEntryNamed:)`), or — for a
    /// name in entry form whose rank went stale (each removal shifts the
    /// ranks below it, while `rm -r` still works through the names it read;
    /// a file manager looks up the name it just gave) — the entry with the
    /// same title and extension nearest to that rank.
    ///
    /// Found by looking outward from that rank, comparing titles and
    /// extensions as the records hold them (no name is built, nothing is
    /// indexed): at 100,000 entries a miss costs a few milliseconds, where
    /// indexing every entry name per listing cost 100 ms — paid again after
    /// every change by a script polling for an entry yet to come. A miss is
    /// remembered per listing, so polling the same name costs nothing more.
    func index(ofEntryMeaning name: UnsafeBufferPointer<UInt8>) -> Int? {
        if case .found(let index) = search(ofEntryMeaning: name) { return index }
        return nil
    }

    enum StaleSearch: Equatable { case found(Int), missing, outdated }

    /// `index(ofEntryMeaning:)`, given up (`outdated`) as soon as
    /// `isCurrent` says a newer listing replaced this one: a lookup then
    /// asks the newer one, instead of finishing a search of 100,000 titles
    /// while the entry it polls for has already come.
    func search(ofEntryMeaning name: UnsafeBufferPointer<UInt8>, isCurrent: () -> Bool = { true },
                mayHaveTitle: ([UInt8]) -> Bool = { _ in true }) -> StaleSearch {
        if let exact = index(ofEntryNamed: name) { return .found(exact) }
        // In conflicts/ the copies of one item share a name but for the rank:
        // the nearest match could be another copy.
        guard naming == .title else { return .missing }
        guard let (rank, rest) = Self.rankAndRest(name), records.count > 0 else { return .missing }
        if restLock.withLock({ missedRests.contains(rest) }) { return .missing }
        // A title no item has (a name that may be cut to 255 bytes is not asked about).
        if width + 1 + rest.count < EntryNaming.maximumNameLength - 4, !mayHaveTitle(rest) { return .missing }
        let center = min(max(rank - 1, 0), records.count - 1)
        // Outward from the rank: a file manager a change or two behind.
        for distance in 0...Self.nearbyRanks {
            for index in distance == 0 ? [center] : [center - distance, center + distance] where index >= 0 && index < records.count {
                if entryRest(of: records[index], equals: rest) { return .found(index) }
            }
        }
        // Then every entry in order (rm -r far into a folder): the nearest match.
        var nearest: Int?
        var outdated = false
        records.forEachRecord { index, record in
            if index & 4095 == 0, !isCurrent() { outdated = true; return false }
            if entryRest(of: record, equals: rest), nearest.map({ abs(index - center) < abs($0 - center) }) ?? true { nearest = index }
            return true
        }
        if outdated { return .outdated }
        if let nearest { return .found(nearest) }
        restLock.withLock {
            if missedRests.count >= 64 { missedRests.removeAll() }
            missedRests.insert(rest)
        }
        return .missing
    }

    /// Whether the entry at `index` is named `rest` after its rank.
    private func entryRest(of record: ItemRecord, equals rest: [UInt8]) -> Bool {
        // Compared as the record's bytes where it can be: a search that
        // misses walks every entry, and building each title as a String
        // cost 300 ms at 1,000,000 entries.
        if naming == .title, let equal = record.entryRestEquals(rest, width: width) { return equal }
        let (shownTitle, shownExt) = record.entryTitle(naming)
        let title = shownTitle.utf8, ext = shownExt.utf8
        let length = title.count + (ext.isEmpty ? 0 : 1 + ext.count)
        // A name cut to 255 bytes: compared as built.
        if width + 1 + length > EntryNaming.maximumNameLength {
            return EntryNaming.entryName(rank: 1, width: width, title: shownTitle, ext: shownExt)
                .dropFirst(width + 1).elementsEqual(rest)
        }
        guard rest.count == length, rest.starts(with: title) else { return false }
        return ext.isEmpty || (rest[title.count] == UInt8(ascii: ".") && rest[(title.count + 1)...].elementsEqual(ext))
    }

    /// How far from its rank a stale name is first looked for, entry by entry.
    static let nearbyRanks = 1024

    private var missedRests = Set<[UInt8]>()
    private let restLock = PlainLock()

    /// `0012 Title.ext` → (12, "Title.ext"); nil unless 4 or more digits and a space lead.
    private static func rankAndRest(_ name: UnsafeBufferPointer<UInt8>) -> (Int, [UInt8])? {
        var digits = 0, rank = 0
        while digits < name.count, digits < 18, name[digits] >= 48, name[digits] <= 57 {
            rank = rank * 10 + Int(name[digits] - 48)
            digits += 1
        }
        guard digits >= 4, digits < name.count, name[digits] == UInt8(ascii: " ") else { return nil }
        return (rank, Array(name[(digits + 1)...]))
    }

    /// The index of the entry called `name`, found from its rank prefix: O(1).
    func index(ofEntryNamed name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard name.count > width, name[width] == UInt8(ascii: " ") else { return nil }
        var rank = 0
        for position in 0..<width {
            let digit = name[position]
            guard digit >= 48, digit <= 57 else { return nil }
            rank = rank * 10 + Int(digit - 48)
        }
        let index = rank - 1
        guard index >= 0, index < records.count else { return nil }
        let expected = self.name(at: index)
        guard expected.count == name.count, expected.withUnsafeBufferPointer({ memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 })
        else { return nil }
        return index
    }
}

/// A view folder of the mount: its path, its current listing, and the time
/// it last changed (its mtime, so file managers notice).
final class ViewFolder: @unchecked Sendable {
    let serial: UInt32
    let path: [String]
    private let lock = PlainLock()
    private var listingStorage: ViewListing
    private var changedStorage: Timestamp

    /// A group folder (a configured path such as `reading/` of
    /// `reading/today`) holds these folders instead of entries; set at mount
    /// and when the configuration is reloaded.
    private var groupChildrenStorage: [String]?
    var groupChildren: [String]? { lock.withLock { groupChildrenStorage } }

    var isGroup: Bool { groupChildren != nil }

    /// Makes this folder a group of `children`.
    func makeGroup(of children: [String]) { lock.withLock { groupChildrenStorage = children } }

    init(serial: UInt32, path: [String], listing: ViewListing, changed: Timestamp) {
        self.serial = serial
        self.path = path
        listingStorage = listing
        changedStorage = changed
    }

    var id: UInt64 { NodeID.folder(serial) }
    var depth: Int { path.count }

    /// When the folder was last looked up or listed, and last listed
    /// (monotonic seconds): ad-hoc `query/` folders unused the longest are
    /// dropped first, and none listed in the last `busySeconds` (a listing
    /// may be under way: there is no opendir to count readers by).
    private var lastUsedStorage = monotonicSeconds()
    private var lastListedStorage = -Double.infinity
    var lastUsed: Double { lock.withLock { lastUsedStorage } }
    var lastListed: Double { lock.withLock { lastListedStorage } }
    func touch() { lock.withLock { lastUsedStorage = monotonicSeconds() } }
    func listed() { lock.withLock { lastUsedStorage = monotonicSeconds(); lastListedStorage = lastUsedStorage } }
    static let busySeconds = 2.0

    var listing: ViewListing { lock.withLock { listingStorage } }

    /// How many entries of the current listing readdirplus replies have
    /// given the kernel (their dentries exist: `LinkWarmer` reads only those).
    private var listedStorage = 0

    /// Entries `indices` of the current listing were given to the kernel by readdirplus.
    func noteListed(_ indices: Range<Int>) {
        lock.withLock {
            listedStorage = max(listedStorage, indices.upperBound)
            listingStorage.noteShown(indices)
        }
    }

    /// How many entries of `listing` the kernel was given; nil once the folder holds another listing.
    func listedCount(of listing: ViewListing) -> Int? {
        lock.withLock { listingStorage === listing ? listedStorage : nil }
    }
    var changed: Timestamp { lock.withLock { changedStorage } }

    /// Counts the listings this folder has held (bumped by `replace`): read
    /// without a lock by `LinkWarmer` on every readlink answered.
    let generation = Atomic<UInt64>(0)
    /// The generation whose links `LinkWarmer` has read (or is reading).
    let linksWarmedGeneration = Atomic<UInt64>(.max)

    /// Held while a readdir reply is built and sent, and while the listing
    /// is swapped: so a reply made from the old listing always reaches the
    /// kernel before the watcher's invalidation, never after it (which would
    /// leave a stale listing in the kernel's readdir cache).
    let replyLock = PlainLock()

    func replace(_ listing: ViewListing, at time: Timestamp) {
        replyLock.withLock {
            lock.withLock {
                listingStorage = listing
                listedStorage = 0
                changedStorage = changedStorage.advanced(to: time)
                generation.add(1, ordering: .releasing)
            }
        }
    }
}

extension Range where Bound == Int {
    /// The smallest range holding both (either may be empty).
    func hull(_ other: Range<Int>) -> Range<Int> {
        if isEmpty { return other }
        if other.isEmpty { return self }
        return Swift.min(lowerBound, other.lowerBound)..<Swift.max(upperBound, other.upperBound)
    }
}

extension Timestamp {
    /// `time`, or a nanosecond past self if `time` is not later: a folder's
    /// mtime moves forward with every change of its listing, so programs
    /// that poll folder times (lf, Plex, backup tools) always see it move.
    func advanced(to time: Timestamp) -> Timestamp {
        if time > self { return time }
        return nanoseconds < 999_999_999 ? Timestamp(seconds: seconds, nanoseconds: nanoseconds + 1)
            : Timestamp(seconds: seconds &+ 1, nanoseconds: 0)
    }
}

/// The time the listing of a folder without a `ViewFolder` of its own (the
/// root, `tag/`, `query/`) last changed.
final class FolderClock: @unchecked Sendable {
    private let lock = PlainLock()
    private var time: Timestamp

    init(_ time: Timestamp) { self.time = time }

    var changed: Timestamp { lock.withLock { time } }

    func tick(_ now: Timestamp = .now) { lock.withLock { time = time.advanced(to: now) } }
}

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
