import QueryFSEngine
/// One item's fields as the index file holds them (`IndexedItem.encode`),
/// the texts borrowed from the file's bytes and valid while they are.
///
/// Why not an `Item`: a start makes a record of every indexed item
/// (`ItemRecord.make(indexed:serial:)`), and going through an `Item` first
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

/// The file format's side of a start's records: the record knows nothing of the file.
extension ItemRecord {
    /// A record made straight from an index file's bytes (`IndexedFields`),
    /// no `Item` between: what a start from the index makes of each item.
    /// Texts that are not UTF-8 (a file made by hand) take the way through
    /// `Item`, which repairs them as it always did.
    static func make(indexed fields: IndexedFields, serial: UInt32) -> ItemRecord {
        guard fields.textsAreUTF8 else { return ItemRecord(fields.item, stamp: fields.stamp, serial: serial) }
        let name = ItemName(Array(fields.name))
        // Nearly every title is shown as it is; the rest are worked out as strings.
        let display: [UInt8]? = EntryNaming.isShownAsIs(title: fields.title) ? nil : {
            let title = String(decoding: fields.title, as: UTF8.self)
            let display = EntryNaming.displayTitle(title: title, name: name)
            return display == title ? nil : Array(display.utf8)
        }()
        let text = display.withOptionalBuffer { display in
            PackedText(title: fields.title, url: fields.url, tagCount: fields.tagCount, forEachTag: fields.forEachTag, display: display)
        }
        let conflictOf = fields.conflictOf.map { ItemName(Array($0)) }
        return ItemRecord(name: name, kind: fields.kind, stamp: fields.stamp, serial: serial, size: fields.size,
                          modified: fields.modified, created: fields.created, archived: fields.archived, conflict: fields.conflict,
                          text: text, payloadValues: fields.payloadValues, problems: fields.problems,
                          conflictOf: fields.conflict == nil || conflictOf == name ? nil : conflictOf)
    }
}
