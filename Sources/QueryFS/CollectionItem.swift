import QueryFSEngine
import QueryFSCollection

/// One item of a collection as a view shows it: a bundle directory or a
/// plain file in the backing directory, and the fields read from it
/// (SPEC §1). A value: it does not change when the item does; the next
/// ``CollectionChange`` carries the new one.
public struct CollectionItem: Sendable, Hashable, CustomStringConvertible {
    let record: ItemRecord

    /// The item's name in the backing directory (`<UUID>.hpwebsite`, `note.md`):
    /// what identifies it across changes.
    public var name: String { record.name.description }
    /// Its title (the payload's, else the name without its extension).
    public var title: String { record.title }
    /// The payload's URL, if it has one.
    public var url: String? { record.url }
    /// Its tags, in the payload's order.
    public var tags: [String] { record.tags }
    public var isArchived: Bool { record.archived }
    /// Whether it is a bundle directory (else a plain file).
    public var isBundle: Bool { record.kind == .bundle }
    /// Last modification, in seconds since 1970 (the payload's date, else the files').
    public var modified: Double { Self.seconds(record.modified) }
    /// Creation, in seconds since 1970 (the payload's date, else the first file's).
    public var created: Double { Self.seconds(record.created) }
    /// Size in bytes of its files.
    public var size: UInt64 { record.size }
    /// Why some of its fields could not be read (empty when all could).
    public var problems: [String] { record.problems }

    public var description: String { "\(title) (\(name))" }

    private static func seconds(_ time: Timestamp) -> Double { Double(time.seconds) + Double(time.nanoseconds) / 1e9 }

    /// Two values are equal when they are the same state of the same item.
    public static func == (a: CollectionItem, b: CollectionItem) -> Bool { a.record === b.record }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(record)) }
}
