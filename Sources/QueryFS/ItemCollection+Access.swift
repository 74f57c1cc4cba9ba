import QueryFSEngine
import QueryFSCollection

/// Coordinated access to an item's files (SPEC §5): each call holds the
/// item's `flock(2)` lock — shared to read, exclusive to write or delete —
/// for exactly as long as it needs, the lock the mount, `flock(1)` and every
/// other coordinated process take. Views show the item as before until the
/// lock is let go, then as after.
extension ItemCollection {
    /// The bytes of `file` in bundle `item`, or of the plain file `item` when `file` is nil.
    public func read(_ item: CollectionItem, file: String? = nil) throws(CollectionError) -> [UInt8] {
        try coordinated(item) { coordinator, name in try coordinator.read(name, file: file) }
    }

    /// Replaces `file` of bundle `item` (or the plain file `item`) with `bytes`:
    /// written beside, flushed and renamed over, so even a reader that does
    /// not take the lock sees the old file or the new one, whole.
    public func write(_ bytes: [UInt8], to item: CollectionItem, file: String? = nil) throws(CollectionError) {
        try coordinated(item) { coordinator, name in try coordinator.write(bytes, to: name, file: file) }
    }

    /// Reads `file`, changes it and writes it back as one step: no other
    /// coordinated writer comes between the read and the write.
    public func update(_ item: CollectionItem, file: String? = nil,
                       _ change: ([UInt8]) throws -> [UInt8]) throws(CollectionError) {
        try coordinated(item) { coordinator, name in try coordinator.transform(name, file: file, change) }
    }

    /// Removes `item` from the backing directory, bundle and all: taken out
    /// of the folder in one rename under its exclusive lock, then removed.
    public func delete(_ item: CollectionItem) throws(CollectionError) {
        try coordinated(item) { coordinator, name in try coordinator.delete(name) }
    }

    private func coordinated<R>(_ item: CollectionItem,
                                _ body: (Coordinator, ItemName) throws -> R) throws(CollectionError) -> R {
        let catalog = try openCatalog()
        let name = item.record.name
        do {
            let result = try body(Coordinator(backing: catalog.backing, timeout: lockTimeout), name)
            // The views show it when the call returns, as after an edit through the mount.
            catalog.applyNow([name])
            return result
        } catch {
            throw CollectionError(error, item: item.name)
        }
    }
}

/// A change to an item's fields, written into its own files in their own
/// format (the smallest edit of the payload, or its `user.xdg.tags`), and
/// journaled like an edit through the mount: `queryfs undo BACKING` takes it back.
public enum ItemEdit: Sendable, Equatable {
    case addTag(String)
    case removeTag(String)
    case setArchived(Bool)
    case setTitle(String)

    var fieldEdit: FieldEdit {
        switch self {
        case .addTag(let tag): .addTag(tag)
        case .removeTag(let tag): .removeTag(tag)
        case .setArchived(let archived): .setArchived(archived)
        case .setTitle(let title): .setTitle(title)
        }
    }
}

extension ItemCollection {
    /// Makes `edits` to `item` under its exclusive lock, all or none; when
    /// this returns, ``items`` and every ``changes`` sequence show it.
    public func edit(_ item: CollectionItem, _ edits: ItemEdit...) throws(CollectionError) {
        let catalog = try openCatalog()
        let editor = ItemEditor(backing: catalog.backing, sources: catalog.fieldSources, lockTimeout: lockTimeout)
        do {
            _ = try editor.apply(edits.map(\.fieldEdit), to: item.record.name)
        } catch {
            throw CollectionError(error, item: item.name)
        }
        catalog.applyNow([item.record.name])
    }
}
