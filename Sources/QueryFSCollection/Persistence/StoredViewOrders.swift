import QueryFSEngine
/// Each view's members as written with a snapshot: positions into the
/// snapshot's items, in view order. A trusted start from that very snapshot
/// places its views from them instead of selecting and sorting every item
/// again (at 100,000 items: 0.35 s of a start meant to take under 0.5 s).
///
/// A view is keyed by its whole definition, so a view whose filter or order
/// changed finds no order and is evaluated as before. Views with relative
/// ages (`modified>7d`) select differently as time passes: never stored.
/// Tag folders are stored as a set: present means every tag folder of the
/// snapshot's items is here, so a start needs not group items by tag.
struct StoredViewOrders: Sendable, Equatable {
    /// Positions into the snapshot's items, by `key(of:)`.
    var fixed: [String: [UInt32]] = [:]
    /// Positions by tag folder name; nil: tag folders were not stored.
    var tags: [String: [UInt32]]?

    var isEmpty: Bool { fixed.isEmpty && tags == nil }

    init() {}

    /// The orders of `listings` as positions into `records` (the items the
    /// snapshot writes, in that order). A member not among `records` leaves
    /// its view out rather than stored wrong.
    init(records: [ItemRecord], listings: LiveIndex.ViewListings) {
        var position: [ObjectIdentifier: UInt32] = [:]
        position.reserveCapacity(records.count)
        for (index, record) in records.enumerated() { position[ObjectIdentifier(record)] = UInt32(index) }
        func positions(_ list: RecordList) -> [UInt32]? {
            var out: [UInt32] = []
            out.reserveCapacity(list.count)
            var complete = true
            list.forEachRecord { _, record in
                guard let at = position[ObjectIdentifier(record)] else {
                    complete = false
                    return false
                }
                out.append(at)
                return true
            }
            return complete ? out : nil
        }
        for (definition, list) in listings.fixed {
            guard let key = Self.key(of: definition), let stored = positions(list) else { continue }
            fixed[key] = stored
        }
        var tags: [String: [UInt32]] = [:]
        for (folder, list) in listings.tags {
            guard let stored = positions(list) else { return }
            tags[folder] = stored
        }
        self.tags = tags
    }

    /// The key a fixed view's order is stored under; nil for a view whose
    /// members depend on the time (it is never stored).
    static func key(of definition: ViewDefinition) -> String? {
        // What entries are (symlinks or desktop files) does not change the order.
        var ordered = definition
        ordered.entryTitle.desktopFile = false
        return definition.shortestAge == nil ? String(reflecting: ordered) : nil
    }

    /// A view as stored: a fixed view by `key(of:)`, or a tag folder by its name.
    enum Key: Equatable {
        case fixed(String)
        case tag(String)
    }

    /// The positions stored for `view`, if any.
    func positions(of view: Key) -> [UInt32]? {
        switch view {
        case .fixed(let key): fixed[key]
        case .tag(let folder): tags?[folder]
        }
    }

    /// The stored order of fixed view `definition`, if any.
    func order(of definition: ViewDefinition) -> [UInt32]? {
        Self.key(of: definition).flatMap { fixed[$0] }
    }

    func encode(into writer: inout IndexWriter) {
        writer.integer(fixed.count)
        for (key, positions) in fixed.sorted(by: { $0.key < $1.key }) {
            writer.string(key)
            Self.encode(positions, into: &writer)
        }
        guard let tags else { return writer.byte(0) }
        writer.byte(1)
        writer.integer(tags.count)
        for (folder, positions) in tags.sorted(by: { $0.key < $1.key }) {
            writer.string(folder)
            Self.encode(positions, into: &writer)
        }
    }

    /// Four bytes each, little-endian: a million positions read as one copy.
    private static func encode(_ positions: [UInt32], into writer: inout IndexWriter) {
        var bytes = [UInt8](repeating: 0, count: positions.count * 4)
        bytes.withUnsafeMutableBytes { raw in
            for (index, position) in positions.enumerated() { raw.storeBytes(of: position.littleEndian, toByteOffset: index * 4, as: UInt32.self) }
        }
        writer.data(bytes)
    }

    /// Reads what `encode` wrote for a snapshot of `itemCount` items. A
    /// position past the items or a view holding an item twice is corrupt:
    /// checksums catch accidents, this catches a file made to pass them.
    static func decode(from reader: inout IndexReader, itemCount: Int) throws(IndexDecodingError) -> StoredViewOrders {
        var orders = StoredViewOrders()
        var seen = [UInt64](repeating: 0, count: (itemCount + 63) / 64)
        for _ in 0..<(try reader.count()) {
            let key = try reader.string()
            orders.fixed[key] = try decodePositions(from: &reader, itemCount: itemCount, seen: &seen)
        }
        guard try reader.byte() == 1 else { return orders }
        var tags: [String: [UInt32]] = [:]
        for _ in 0..<(try reader.count()) {
            let folder = try reader.string()
            // A folder name no tag could give ("", "..", a slash) would become a folder of the mount.
            guard EntryNaming.tagFolderName(folder) == folder else { throw IndexDecodingError("a tag folder named \(JSON.string(folder))") }
            tags[folder] = try decodePositions(from: &reader, itemCount: itemCount, seen: &seen)
        }
        orders.tags = tags
        return orders
    }

    private static func decodePositions(from reader: inout IndexReader, itemCount: Int,
                                        seen: inout [UInt64]) throws(IndexDecodingError) -> [UInt32]
    {
        let bytes = try reader.dataSlice()
        guard bytes.count % 4 == 0, bytes.count / 4 <= itemCount else { throw IndexDecodingError("a view order of \(bytes.count) bytes") }
        var positions = [UInt32](repeating: 0, count: bytes.count / 4)
        var valid = true
        positions.withUnsafeMutableBufferPointer { out in
            let raw = UnsafeRawBufferPointer(bytes)
            for index in out.indices {
                let position = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                let word = Int(position) / 64, bit = UInt64(1) << UInt64(position % 64)
                guard Int(position) < itemCount, seen[word] & bit == 0 else {
                    valid = false
                    return
                }
                seen[word] |= bit
                out[index] = position
            }
            // Cleared again for the next view: each view is checked on its own.
            for position in out { seen[Int(position) / 64] = 0 }
        }
        guard valid else { throw IndexDecodingError("a view order names an item twice or one past the items") }
        return positions
    }
}
