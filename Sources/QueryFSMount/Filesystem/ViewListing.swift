#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine
import QueryFSCollection

// Locks: `shownLock` (the range of entries the kernel has been shown) and
// `restLock` (entry names looked up and missed) are each held alone, for a
// field's read or write; nothing is called under them. A listing's records
// never change, so reading them takes no lock.

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
    /// same title and extension nearest to that rank; or, for a name with no
    /// rank at all, the first entry whose title and extension it is (a
    /// file manager's rename typed over the whole stem, `0001 Old` → `New`:
    /// the title is set, and the name the program then looks up, `New.ext`,
    /// must lead to the entry — Nautilus otherwise says "The item could not
    /// be renamed" after it was).
    ///
    /// Found by looking outward from that rank, comparing titles and
    /// extensions as the records hold them (no name is built, nothing is
    /// indexed): at 100,000 entries a miss costs a few milliseconds, where
    /// indexing every entry name per listing cost 100 ms — paid again after
    /// every change by a script polling for an entry yet to come. A miss is
    /// remembered per listing, so polling the same name costs nothing more.
    func index(ofEntryMeaning name: UnsafeBufferPointer<UInt8>, mayBeShared: ([UInt8]) -> Bool = { _ in true },
               prefer: (ItemRecord) -> Bool = { _ in false }) -> Int? {
        if case .found(let index) = search(ofEntryMeaning: name, mayBeShared: mayBeShared, prefer: prefer) { return index }
        return nil
    }

    enum StaleSearch: Equatable { case found(Int), missing, outdated }

    /// `index(ofEntryMeaning:)`, given up (`outdated`) as soon as
    /// `isCurrent` says a newer listing replaced this one: a lookup then
    /// asks the newer one, instead of finishing a search of 100,000 titles
    /// while the entry it polls for has already come.
    /// A title entries share (two notes named "Meeting") makes a stale name
    /// ambiguous: it means the entry `prefer` picks out, if it picks out one,
    /// and none otherwise — never merely the nearest, which was the other
    /// note (found from outside: an editor's second save through the name
    /// it had opened wrote into another note of the same title).
    /// `mayBeShared` says whether a title may be more than one item's (a
    /// filter's "maybe"): only then are the other entries searched.
    func search(ofEntryMeaning name: UnsafeBufferPointer<UInt8>, isCurrent: () -> Bool = { true },
                mayHaveTitle: ([UInt8]) -> Bool = { _ in true }, mayBeShared: ([UInt8]) -> Bool = { _ in true },
                prefer: (ItemRecord) -> Bool = { _ in false }) -> StaleSearch {
        if let exact = index(ofEntryNamed: name) { return .found(exact) }
        // In conflicts/ the copies of one item share a name but for the rank:
        // the nearest match could be another copy.
        guard naming.source == .title, records.count > 0 else { return .missing }
        // A title may itself begin with digits and a space: then both readings are tried.
        var readings: [(rank: Int, rest: [UInt8])] = []
        if let ranked = Self.rankAndRest(name) { readings.append(ranked) }
        readings.append((1, Array(name)))
        for (rank, rest) in readings {
            let found = search(rest: rest, nearRank: rank, isCurrent: isCurrent, mayHaveTitle: mayHaveTitle)
            guard case .found(let index) = found else {
                if found == .missing { continue }
                return found
            }
            guard mayBeShared(rest) else { return found }
            return sharedTitle(rest, found: index, isCurrent: isCurrent, prefer: prefer)
        }
        return .missing
    }

    /// The entry a stale name means when others may share its title: the
    /// one found if it is the only one, else the one `prefer` picks out.
    private func sharedTitle(_ rest: [UInt8], found: Int, isCurrent: () -> Bool, prefer: (ItemRecord) -> Bool) -> StaleSearch {
        var matches: [Int] = []
        var outdated = false
        records.forEachRecord { index, record in
            if index & 4095 == 0, !isCurrent() { outdated = true; return false }
            if entryRest(of: record, equals: rest) { matches.append(index) }
            return true
        }
        if outdated { return .outdated }
        if matches.count <= 1 { return .found(found) }
        let preferred = matches.filter { prefer(records[$0]) }
        return preferred.count == 1 ? .found(preferred[0]) : .missing
    }

    /// The entry named `rest` after its rank, nearest to `rank`.
    private func search(rest: [UInt8], nearRank rank: Int, isCurrent: () -> Bool, mayHaveTitle: ([UInt8]) -> Bool) -> StaleSearch {
        if restLock.withLock({ missedRests.contains(rest) }) { return .missing }
        // A title no item has (a name that may be cut to 255 bytes is not asked about).
        // (Desktop entries' names end in `.desktop`, which the titles known are not kept with.)
        if !naming.desktopFile, width + 1 + rest.count < EntryNaming.maximumNameLength - 4, !mayHaveTitle(rest) { return .missing }
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
        if naming.source == .title, let equal = record.entryRestEquals(rest, width: width, desktopFile: naming.desktopFile) { return equal }
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

    /// The index of the entry of item `name` (a walk of the listing).
    func index(ofItem name: ItemName) -> Int? {
        var found: Int?
        records.forEachRecord { index, record in
            if record.name == name { found = index }
            return found == nil
        }
        return found
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

extension Range where Bound == Int {
    /// The smallest range holding both (either may be empty).
    func hull(_ other: Range<Int>) -> Range<Int> {
        if isEmpty { return other }
        if other.isEmpty { return self }
        return Swift.min(lowerBound, other.lowerBound)..<Swift.max(upperBound, other.upperBound)
    }
}
