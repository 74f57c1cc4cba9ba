import Synchronization

/// One state of an item, shared by every view that shows it. Immutable: a
/// change to the item makes a new record, so views can still find the old
/// one by its old sort position.
public final class ItemRecord: Sendable {
    /// The stamp the item was read at, for the index file (0: unknown).
    /// Atomic: a re-read that finds the same fields keeps this record and
    /// only moves its stamp, while the index keeper may be copying it.
    private let stampStorage: Atomic<UInt64>
    public let item: Item
    /// Sanitized title and extension, computed once for entry names.
    public let displayTitle: String
    public let displayExtension: String

    public init(_ item: Item, stamp: UInt64 = 0) {
        self.item = item
        stampStorage = Atomic(stamp)
        displayTitle = EntryNaming.displayTitle(of: item)
        displayExtension = EntryNaming.displayExtension(of: item)
    }

    public var name: ItemName { item.name }

    public var stamp: UInt64 {
        get { stampStorage.load(ordering: .relaxed) }
        set { stampStorage.store(newValue, ordering: .relaxed) }
    }

    /// The entry name at 0-based `index` of a view of `count` entries.
    public func entryName(index: Int, count: Int, naming: ViewDefinition.EntryTitle = .title) -> [UInt8] {
        let (title, ext) = entryTitle(naming)
        return EntryNaming.entryName(rank: index + 1, width: EntryNaming.rankWidth(count: count), title: title, ext: ext)
    }

    /// The title and extension entries show (`.title`: those computed once here).
    public func entryTitle(_ naming: ViewDefinition.EntryTitle) -> (title: String, ext: String) {
        naming == .title ? (displayTitle, displayExtension) : EntryNaming.entryTitle(of: item, naming: naming)
    }
}
