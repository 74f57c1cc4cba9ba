/// One state of an item, shared by every view that shows it. Immutable: a
/// change to the item makes a new record, so views can still find the old
/// one by its old sort position.
public final class ItemRecord: Sendable {
    public let item: Item
    /// Sanitized title and extension, computed once for entry names.
    public let displayTitle: String
    public let displayExtension: String

    public init(_ item: Item) {
        self.item = item
        displayTitle = EntryNaming.displayTitle(of: item)
        displayExtension = EntryNaming.displayExtension(of: item)
    }

    public var name: ItemName { item.name }

    /// The entry name at 0-based `index` of a view of `count` entries.
    public func entryName(index: Int, count: Int) -> [UInt8] {
        EntryNaming.entryName(rank: index + 1, width: EntryNaming.rankWidth(count: count),
                              title: displayTitle, ext: displayExtension)
    }
}
