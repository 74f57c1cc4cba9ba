import QueryFSEngine
/// One item's fields as the index file holds them (`IndexedItem.encode`),
/// the texts borrowed from the file's bytes and valid while they are.
///
/// Why not an `Item`: a start makes a record of every indexed item
/// (`ItemRecord(indexed:serial:)`), and going through an `Item` first
/// allocated and freed five more blocks per item (name, title, tags, URL,
/// title sort key) and copied each field twice. On every core those
/// allocations queued on the daemon's one malloc arena
/// (`MemoryTrim.limitArenas`): at 100,000 items a quarter of a trusted
/// start's samples were threads waiting on its lock.
struct IndexedFields {
    var name: UnsafeBufferPointer<UInt8>
    var kind: Item.Kind
    var stamp: UInt64
    var title: UnsafeBufferPointer<UInt8>
    var archived: Bool
    var tagCount: Int
    /// The tags as stored: each a LEB128 length and its bytes.
    var tagBytes: UnsafeBufferPointer<UInt8>
    var url: UnsafeBufferPointer<UInt8>?
    var modified: Timestamp
    var created: Timestamp
    var size: UInt64
    var payloadValues: [String: PayloadValue]
    var problems: [String]
    var conflict: ConflictKind?
    var conflictOf: UnsafeBufferPointer<UInt8>?

    static func decode(from reader: inout IndexReader) throws(IndexDecodingError) -> IndexedFields {
        let name = try reader.dataSlice()
        let kind: Item.Kind = try reader.byte() == 1 ? .bundle : .file
        let stamp = try reader.fixed64()
        let title = try reader.dataSlice()
        let archived = try reader.byte() == 1
        let tagCount = try reader.count()
        let tagsStart = reader.offset
        for _ in 0..<tagCount { _ = try reader.dataSlice() }
        let tagBytes = reader.bytes(since: tagsStart)
        let url = try reader.byte() == 1 ? try reader.dataSlice() : nil
        let modified = try IndexedItem.decodeTimestamp(from: &reader)
        let created = try IndexedItem.decodeTimestamp(from: &reader)
        let size = try reader.integer()
        var payloadValues: [String: PayloadValue] = [:]
        for _ in 0..<(try reader.count()) {
            let key = try reader.string()
            payloadValues[key] = try PayloadValue.decode(from: &reader, depth: 0)
        }
        var problems: [String] = []
        for _ in 0..<(try reader.count()) { problems.append(try reader.string()) }
        let conflictByte = try reader.byte()
        guard conflictByte == 0 || ConflictKind(rawValue: conflictByte) != nil else {
            throw IndexDecodingError("a conflict of unknown kind \(conflictByte)")
        }
        let conflictOf = conflictByte == 0 ? nil : try reader.dataSlice()
        guard ItemName.isItemPath(name) else {
            throw IndexDecodingError("an item named '\(String(decoding: name, as: UTF8.self))', which no item can be")
        }
        return IndexedFields(name: name, kind: kind, stamp: stamp, title: title, archived: archived, tagCount: tagCount,
                             tagBytes: tagBytes, url: url, modified: modified, created: created, size: size,
                             payloadValues: payloadValues, problems: problems, conflict: ConflictKind(rawValue: conflictByte),
                             conflictOf: conflictOf)
    }

    /// Calls `body` with each tag's bytes, in order.
    func forEachTag(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var reader = IndexReader(tagBytes)
        // The bytes were read as exactly `tagCount` tags when decoded.
        for _ in 0..<tagCount {
            guard let tag = try? reader.dataSlice() else { return }
            body(tag)
        }
    }

    /// Whether every text is UTF-8 as written (it always is, unless the
    /// file was made by hand): a record copies the bytes as they are, where
    /// a `String` would have repaired them.
    var textsAreUTF8: Bool {
        var valid = Self.isUTF8(title) && url.map(Self.isUTF8) != false
        forEachTag { valid = valid && Self.isUTF8($0) }
        return valid
    }

    private static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // ASCII, nearly always; else whether decoding changed nothing.
        bytes.allSatisfy { $0 < 0x80 } || String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes)
    }

    var item: Item {
        var tags: [String] = []
        tags.reserveCapacity(tagCount)
        forEachTag { tags.append(String(decoding: $0, as: UTF8.self)) }
        return Item(name: ItemName(Array(name)), kind: kind, title: String(decoding: title, as: UTF8.self), archived: archived,
                    tags: tags, url: url.map { String(decoding: $0, as: UTF8.self) }, modified: modified, created: created,
                    size: size, payloadValues: payloadValues, problems: problems, conflict: conflict,
                    conflictOf: conflictOf.map { ItemName(Array($0)) })
    }
}
