import QueryFSEngine
/// One item as the index file keeps it: the item's fields and the stamp it
/// was read at (`ItemRead.settledStamp`, 0 when it may have changed in the
/// same clock tick as the read: such items are read again on the next start).
struct IndexedItem {
    var item: Item
    var stamp: UInt64

    func encode(into writer: inout IndexWriter) {
        writer.data(item.name.bytes)
        writer.byte(item.kind == .bundle ? 1 : 0)
        writer.fixed64(stamp)
        writer.string(item.title)
        writer.byte(item.archived ? 1 : 0)
        writer.integer(item.tags.count)
        for tag in item.tags { writer.string(tag) }
        if let url = item.url {
            writer.byte(1)
            writer.string(url)
        } else {
            writer.byte(0)
        }
        Self.encode(item.modified, into: &writer)
        Self.encode(item.created, into: &writer)
        writer.integer(item.size)
        writer.integer(item.payloadValues.count)
        for (key, value) in item.payloadValues.sorted(by: { $0.key < $1.key }) {
            writer.string(key)
            value.encode(into: &writer, depth: 0)
        }
        writer.integer(item.problems.count)
        for problem in item.problems { writer.string(problem) }
        writer.byte(item.conflict?.rawValue ?? 0)
        if item.conflict != nil { writer.data(item.conflictOf?.bytes ?? item.name.bytes) }
    }

    /// An item's name and stamp alone, the rest left unread (they come
    /// first, so that a freshness check decodes nothing more).
    static func decodeNameAndStamp(from reader: inout IndexReader) throws(IndexDecodingError) -> (ItemName, UInt64) {
        let name = ItemName(try reader.data())
        _ = try reader.byte()  // the kind
        return (name, try reader.fixed64())
    }

    static func decode(from reader: inout IndexReader) throws(IndexDecodingError) -> IndexedItem {
        let fields = try IndexedFields.decode(from: &reader)
        return IndexedItem(item: fields.item, stamp: fields.stamp)
    }

    private static func encode(_ time: Timestamp, into writer: inout IndexWriter) {
        writer.signed(time.seconds)
        writer.integer(UInt64(time.nanoseconds))
    }

    static func decodeTimestamp(from reader: inout IndexReader) throws(IndexDecodingError) -> Timestamp {
        let seconds = try reader.signed()
        let nanoseconds = try reader.integer()
        guard nanoseconds < 1_000_000_000 else { throw IndexDecodingError("a time with \(nanoseconds) nanoseconds") }
        return Timestamp(seconds: seconds, nanoseconds: UInt32(nanoseconds))
    }
}

extension PayloadValue {
    /// Deeper than this is not a payload value the scan keeps: the file is corrupt.
    static let deepestIndexedLevel = 256

    func encode(into writer: inout IndexWriter, depth: Int) {
        switch self {
        case .string(let text):
            writer.byte(1)
            writer.string(text)
        case .integer(let value):
            writer.byte(2)
            writer.signed(value)
        case .real(let value):
            writer.byte(3)
            writer.fixed64(value.bitPattern)
        case .bool(let value):
            writer.byte(value ? 5 : 4)
        case .date(let seconds):
            writer.byte(6)
            writer.fixed64(seconds.bitPattern)
        case .data(let bytes):
            writer.byte(7)
            writer.data(bytes)
        case .array(let elements):
            writer.byte(8)
            writer.integer(elements.count)
            for element in elements { element.encode(into: &writer, depth: depth + 1) }
        case .dictionary(let entries):
            writer.byte(9)
            writer.integer(entries.count)
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                writer.string(key)
                value.encode(into: &writer, depth: depth + 1)
            }
        case .null:
            writer.byte(0)
        }
    }

    static func decode(from reader: inout IndexReader, depth: Int) throws(IndexDecodingError) -> PayloadValue {
        guard depth < deepestIndexedLevel else { throw IndexDecodingError("a payload value nested \(depth) levels deep") }
        switch try reader.byte() {
        case 0: return .null
        case 1: return .string(try reader.string())
        case 2: return .integer(try reader.signed())
        case 3: return .real(Double(bitPattern: try reader.fixed64()))
        case 4: return .bool(false)
        case 5: return .bool(true)
        case 6: return .date(Double(bitPattern: try reader.fixed64()))
        case 7: return .data(try reader.data())
        case 8:
            var elements: [PayloadValue] = []
            for _ in 0..<(try reader.count()) { elements.append(try decode(from: &reader, depth: depth + 1)) }
            return .array(elements)
        case 9:
            var entries: [String: PayloadValue] = [:]
            for _ in 0..<(try reader.count()) {
                let key = try reader.string()
                entries[key] = try decode(from: &reader, depth: depth + 1)
            }
            return .dictionary(entries)
        case let kind: throw IndexDecodingError("a payload value of unknown kind \(kind)")
        }
    }
}
