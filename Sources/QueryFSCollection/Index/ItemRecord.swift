#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine

/// One state of an item, shared by every view that shows it. Immutable: a
/// change to the item makes a new record, so views can still find the old
/// one by its old sort position.
///
/// Compact, because the daemon keeps one per item for its whole life (a
/// million of them at the scale the mount is built for): scalars inline,
/// and every text field (title, URL, tags, display title) packed into one
/// block of bytes, where an `Item` holds five separate heap objects and a
/// title sort key. At 100,000 sample items this took the records from
/// about 640 to about 300 bytes each (`queryfs-bench memory`). Rare fields
/// (payload values, problems, the item a conflict copy clashes with) sit in
/// `Extras`, nil for nearly every item. `item` rebuilds the full value
/// when a caller needs it; hot paths read the fields here instead.
package final class ItemRecord: Sendable {
    /// The stamp the item was read at, for the index file (0: unknown).
    /// Atomic: a re-read that finds the same fields keeps this record and
    /// only moves its stamp, while the index keeper may be copying it.
    private let stampStorage: Atomic<UInt64>
    /// Its own copy of the name bytes (see `init`); dictionary keys share it.
    package let name: ItemName
    package let size: UInt64
    private let modifiedSeconds: Int64
    private let createdSeconds: Int64
    private let modifiedNanoseconds: UInt32
    private let createdNanoseconds: UInt32
    /// Title bytes, URL bytes, tags (each a LEB128 length and its bytes),
    /// then the display title when it differs from the title.
    /// Allocated with malloc, not an Array: an array's 32-byte header took
    /// 3.2 MB at 100,000 items. Written once in `init`, freed in `deinit`.
    nonisolated(unsafe) private let textStart: UnsafeMutablePointer<UInt8>
    private let extras: Extras?
    private let textCount: UInt32
    private let titleEnd: UInt32
    private let urlEnd: UInt32
    private let tagsEnd: UInt32
    /// The item's number for the mount's entry node ids (`NodeID.entry`),
    /// given by the live index and kept by every later record of the same
    /// item, so that the filesystem needs no table from names to numbers
    /// (0: none, for records outside a live index).
    package let serial: UInt32
    package let kind: Item.Kind
    package let archived: Bool
    package let conflict: ConflictKind?
    /// `hasURL` and `hasSeparateDisplayTitle` in one byte. The fields are in
    /// this order, widest first, so that the object is 104 bytes: malloc
    /// gives it 112. With two Bools and `extras` last it was 112 bytes, and
    /// malloc gave 128 (1.6 MB at 100,000 items).
    private let textLayout: UInt8

    private var hasURL: Bool { textLayout & 1 != 0 }
    /// Whether the display title is stored after the tags (it differs from the title).
    private var hasSeparateDisplayTitle: Bool { textLayout & 2 != 0 }

    /// What few items have; kept apart so the rest do not pay for it.
    private final class Extras: Sendable {
        let payloadValues: [String: PayloadValue]
        let problems: [String]
        let conflictOf: ItemName?

        private init(payloadValues: [String: PayloadValue], problems: [String], conflictOf: ItemName?) {
            self.payloadValues = payloadValues
            self.problems = problems
            self.conflictOf = conflictOf
        }

        /// nil when there is nothing to keep: nearly every item.
        static func ifAny(payloadValues: [String: PayloadValue], problems: [String], conflictOf: ItemName?) -> Extras? {
            payloadValues.isEmpty && problems.isEmpty && conflictOf == nil
                ? nil : Extras(payloadValues: payloadValues, problems: problems, conflictOf: conflictOf)
        }
    }

    /// The parts every record is made of; the texts packed already
    /// (`PackedText`). `conflictOf`: the item a conflict copy clashes
    /// with, nil when none or itself.
    init(name: ItemName, kind: Item.Kind, stamp: UInt64, serial: UInt32, size: UInt64, modified: Timestamp,
         created: Timestamp, archived: Bool, conflict: ConflictKind?, text: PackedText,
         payloadValues: [String: PayloadValue], problems: [String], conflictOf: ItemName?)
    {
        stampStorage = Atomic(stamp)
        self.serial = serial
        self.name = name
        self.size = size
        modifiedSeconds = modified.seconds
        modifiedNanoseconds = modified.nanoseconds
        createdSeconds = created.seconds
        createdNanoseconds = created.nanoseconds
        self.kind = kind
        self.archived = archived
        self.conflict = conflict
        (textStart, textCount, titleEnd, urlEnd, tagsEnd) = (text.start, UInt32(text.count), text.titleEnd, text.urlEnd, text.tagsEnd)
        textLayout = (text.hasURL ? 1 : 0) | (text.hasSeparateDisplayTitle ? 2 : 0)
        extras = Extras.ifAny(payloadValues: payloadValues, problems: problems, conflictOf: conflictOf)
    }

    package convenience init(_ item: Item, stamp: UInt64 = 0, serial: UInt32 = 0) {
        let display = EntryNaming.displayTitle(of: item)
        var (title, url) = (item.title, item.url)
        let text = title.withUTF8 { title in
            Self.withOptionalUTF8(&url) { url in
                let displayBytes = display == item.title ? nil : Array(display.utf8)
                return displayBytes.withOptionalBuffer { display in
                    PackedText(title: title, url: url, tagCount: item.tags.count,
                               forEachTag: { body in for var tag in item.tags { tag.withUTF8(body) } }, display: display)
                }
            }
        }
        let conflictOf = item.conflict == nil || item.conflictOf == item.name ? nil : item.conflictOf
        // A fresh copy of the name, not the scan's array: the scan's
        // allocations are interleaved with its transient strings, and a
        // record holding on to one of them would keep that whole heap page resident.
        self.init(name: ItemName(item.name.bytes.withUnsafeBufferPointer { Array($0) }), kind: item.kind, stamp: stamp,
                  serial: serial, size: item.size, modified: item.modified, created: item.created, archived: item.archived,
                  conflict: item.conflict, text: text, payloadValues: item.payloadValues, problems: item.problems,
                  conflictOf: conflictOf)
    }

    /// The serial of the item at 0-based `position` of a start's items:
    /// 1, 2, … (never 0, which means none; past 4 billion they start again).
    package static func serial(ofPosition position: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: position % Int(UInt32.max) + 1)
    }

    private static func withOptionalUTF8<R>(_ text: inout String?, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard var present = text else { return body(nil) }
        defer { text = present }
        return present.withUTF8 { body($0) }
    }

    deinit { textStart.deallocate() }

    /// The packed text fields.
    private var text: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: textStart, count: Int(textCount)) }

    package var stamp: UInt64 {
        get { stampStorage.load(ordering: .relaxed) }
        set { stampStorage.store(newValue, ordering: .relaxed) }
    }

    package var modified: Timestamp { Timestamp(seconds: modifiedSeconds, nanoseconds: modifiedNanoseconds) }
    package var created: Timestamp { Timestamp(seconds: createdSeconds, nanoseconds: createdNanoseconds) }
    package var title: String { string(0, Int(titleEnd)) }
    package var url: String? { hasURL ? string(Int(titleEnd), Int(urlEnd)) : nil }
    package var problems: [String] { extras?.problems ?? [] }
    package var payloadValues: [String: PayloadValue] { extras?.payloadValues ?? [:] }
    package var conflictOf: ItemName? { conflict == nil ? nil : extras?.conflictOf ?? name }

    package var tags: [String] {
        var tags: [String] = []
        forEachTag { tags.append(String(decoding: $0, as: UTF8.self)) }
        return tags
    }

    /// The title's natural-order key (`NaturalOrder`), made when asked:
    /// keeping one per item cost about 80 bytes each.
    package var titleSortKey: [UInt8] { NaturalOrder.sortKey(title) }

    /// The full item, rebuilt from the record.
    package var item: Item {
        Item(name: name, kind: kind, title: title, archived: archived, tags: tags, url: url, modified: modified,
             created: created, size: size, payloadValues: payloadValues, problems: problems,
             conflict: conflict, conflictOf: conflictOf)
    }

    /// Sanitized title and extension of entry names (`EntryNaming`).
    package var displayTitle: String { string(displayTitleRange.lowerBound, displayTitleRange.upperBound) }
    package var displayExtension: String { EntryNaming.displayExtension(of: name) }

    /// The entry name at 0-based `index` of a view of `count` entries.
    package func entryName(index: Int, count: Int, naming: ViewDefinition.EntryTitle = .title) -> [UInt8] {
        let (title, ext) = entryTitle(naming)
        return EntryNaming.entryName(rank: index + 1, width: EntryNaming.rankWidth(count: count), title: title, ext: ext)
    }

    /// The title and extension entries show (`.title`: the sanitized title and the name's extension).
    package func entryTitle(_ naming: ViewDefinition.EntryTitle) -> (title: String, ext: String) {
        var shown = naming.source == .clashingItem && conflict != nil
            ? EntryNaming.clashingTitle(of: conflictOf ?? name) : (displayTitle, displayExtension)
        if naming.desktopFile { shown.1 = ViewDefinition.EntryTitle.desktopExtension }
        return shown
    }

    /// Whether entries of the two records read alike but for their ranks:
    /// compared as bytes, no String built (a sweep of a million shifted entries asks this of each).
    package func hasSameEntryTitle(as other: ItemRecord, naming: ViewDefinition.EntryTitle) -> Bool {
        if naming.source == .clashingItem, conflict != nil || other.conflict != nil {
            return entryTitle(naming) == other.entryTitle(naming)
        }
        let same = text[displayTitleRange].elementsEqual(other.text[other.displayTitleRange])
        return same && (naming.desktopFile || displayExtension == other.displayExtension)
    }

    /// Whether `rest` is this record's entry name after a rank of `width`
    /// digits (`.title` naming): display title, `.`, extension. Nil for a
    /// name that may be cut to 255 bytes, which only `EntryNaming.entryName`
    /// builds right. The title's bytes are compared first: nearly every
    /// entry differs there, and a search that misses asks every entry.
    package func entryRestEquals(_ rest: [UInt8], width: Int, desktopFile: Bool = false) -> Bool? {
        let title = displayTitleRange
        // The extension is at most the name: a bound on the length, without finding it.
        guard width + 2 + title.count + name.bytes.count <= EntryNaming.maximumNameLength else { return nil }
        guard rest.count >= title.count else { return false }
        let titleMatches = title.count == 0 || rest.withUnsafeBufferPointer { rest in
            memcmp(textStart + title.lowerBound, rest.baseAddress!, title.count) == 0
        }
        guard titleMatches else { return false }
        let ext = (desktopFile ? ViewDefinition.EntryTitle.desktopExtension : displayExtension).utf8
        if ext.isEmpty { return rest.count == title.count }
        return rest.count == title.count + 1 + ext.count && rest[title.count] == UInt8(ascii: ".")
            && rest[(title.count + 1)...].elementsEqual(ext)
    }

    /// The entry name after its rank (`.title` naming, uncut): for `EntryTitlePresence`.
    package func forEachEntryRestPiece(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        body(UnsafeBufferPointer(rebasing: text[displayTitleRange]))
        let ext = displayExtension
        guard !ext.isEmpty else { return }
        [UInt8(ascii: ".")].withUnsafeBufferPointer(body)
        Array(ext.utf8).withUnsafeBufferPointer(body)
    }

    private var displayTitleRange: Range<Int> {
        hasSeparateDisplayTitle ? Int(tagsEnd)..<text.count : 0..<Int(titleEnd)
    }

    private func string(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: text[start..<end]), as: UTF8.self)
    }

    /// Calls `body` with the UTF-8 bytes of each tag, in order.
    package func forEachTag(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let bytes = text
        var position = Int(urlEnd)
        let end = Int(tagsEnd)
        while position < end {
            var length = 0, shift = 0
            while true {
                let byte = bytes[position]
                position += 1
                length |= Int(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 { break }
            }
            body(UnsafeBufferPointer(rebasing: bytes[position..<position + length]))
            position += length
        }
    }
}
