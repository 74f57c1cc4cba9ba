/// A parser for binary property lists (`bplist00`): the trailer gives the
/// offset table; each object starts with a marker byte whose high nibble is
/// its type and low nibble its length (0xF: the length follows as an integer).
package struct BinaryPropertyListParser {
    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let offsetTable: Int
    /// Objects being decoded, to reject reference cycles.
    private var inProgress: Set<Int> = []
    /// How deep the object being decoded is, and how many objects were
    /// decoded so far: a container referenced twice is decoded twice, so 40
    /// levels of arrays that each reference the next one twice would expand
    /// to 2⁴⁰ objects from a few hundred bytes. Both are bounded.
    private var depth = 0
    private var decodedObjects = 0
    package static let maximumDepth = 512
    static let maximumObjects = 1_000_000

    private static let appleEpoch = 978_307_200.0  // 2001-01-01 in Unix time

    package static func parse(_ data: [UInt8]) throws(PayloadParseError) -> PayloadValue {
        guard data.count >= 40, Array(data[0..<8]) == Array("bplist00".utf8) else {
            throw PayloadParseError(offset: 0, reason: "not a binary property list")
        }
        let trailer = data.count - 32
        let offsetSize = Int(data[trailer + 6])
        let referenceSize = Int(data[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
              let count = Int(exactly: readUInt(data, trailer + 8, 8)),
              let top = Int(exactly: readUInt(data, trailer + 16, 8)),
              let table = Int(exactly: readUInt(data, trailer + 24, 8)),
              count > 0, top < count, table >= 8, table <= trailer,
              count <= (trailer - table) / offsetSize
        else { throw PayloadParseError(offset: trailer, reason: "bad binary plist trailer") }
        var parser = BinaryPropertyListParser(
            bytes: data, offsetSize: offsetSize, referenceSize: referenceSize,
            objectCount: count, offsetTable: table)
        return try parser.object(top)
    }

    /// Whether any object is a UID (marker 0x8_): keyed archives hold them,
    /// and they read as integers, so such a plist cannot be written back as it was.
    package static func containsUIDs(_ data: [UInt8]) -> Bool {
        guard data.count >= 40 else { return false }
        let trailer = data.count - 32
        let offsetSize = Int(data[trailer + 6])
        guard (1...8).contains(offsetSize), let count = Int(exactly: readUInt(data, trailer + 8, 8)),
              let table = Int(exactly: readUInt(data, trailer + 24, 8)), table <= trailer,
              count <= (trailer - table) / offsetSize else { return false }
        for index in 0..<count {
            let offset = readUInt(data, table + index * offsetSize, offsetSize)
            if offset < UInt64(data.count), data[Int(offset)] >> 4 == 0x8 { return true }
        }
        return false
    }

    private static func readUInt(_ bytes: [UInt8], _ offset: Int, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private func fail(_ offset: Int, _ reason: String) -> PayloadParseError {
        PayloadParseError(offset: offset, reason: reason)
    }

    private func uint(at offset: Int, size: Int) throws(PayloadParseError) -> UInt64 {
        guard offset >= 0, size <= 8, offset + size <= bytes.count else { throw fail(offset, "truncated binary plist") }
        return Self.readUInt(bytes, offset, size)
    }

    private func offset(ofObject index: Int) throws(PayloadParseError) -> Int {
        guard index >= 0, index < objectCount else { throw fail(offsetTable, "object reference out of range") }
        let value = try uint(at: offsetTable + index * offsetSize, size: offsetSize)
        guard value >= 8, value < UInt64(offsetTable) else { throw fail(offsetTable, "object offset out of range") }
        return Int(value)
    }

    /// The length encoded in a marker's low nibble, and where the content starts.
    private func length(marker: UInt8, at offset: Int) throws(PayloadParseError) -> (Int, Int) {
        let nibble = Int(marker & 0x0F)
        if nibble != 0x0F { return (nibble, offset + 1) }
        guard offset + 1 < bytes.count, bytes[offset + 1] >> 4 == 0x1 else { throw fail(offset, "bad length") }
        let size = 1 << Int(bytes[offset + 1] & 0x0F)
        let value = try uint(at: offset + 2, size: size)
        guard value < UInt64(bytes.count) else { throw fail(offset, "length out of range") }
        return (Int(value), offset + 2 + size)
    }

    private mutating func object(_ index: Int) throws(PayloadParseError) -> PayloadValue {
        let start = try offset(ofObject: index)
        decodedObjects += 1
        if decodedObjects > Self.maximumObjects {
            throw fail(start, "expands to more than \(Self.maximumObjects) objects (shared containers referenced over and over)")
        }
        let marker = bytes[start]
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: return .null
            }
        case 0x1:
            let size = 1 << Int(marker & 0x0F)
            if size == 16 { return .integer(Int64(bitPattern: try uint(at: start + 9, size: 8))) }
            let raw = try uint(at: start + 1, size: size)
            return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2:
            let size = 1 << Int(marker & 0x0F)
            let raw = try uint(at: start + 1, size: size)
            return .real(size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            return .date(Double(bitPattern: try uint(at: start + 1, size: 8)) + Self.appleEpoch)
        case 0x4:
            let (count, content) = try length(marker: marker, at: start)
            return .data(try slice(content, count))
        case 0x5:
            let (count, content) = try length(marker: marker, at: start)
            return .string(String(decoding: try slice(content, count), as: UTF8.self))
        case 0x6:
            let (count, content) = try length(marker: marker, at: start)
            let raw = try slice(content, count * 2)
            let units = stride(from: 0, to: raw.count, by: 2).map { UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1]) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            let raw = try uint(at: start + 1, size: Int(marker & 0x0F) + 1)
            return .integer(Int64(bitPattern: raw))
        case 0xA, 0xC:
            let (count, content) = try length(marker: marker, at: start)
            return .array(try references(from: content, count: count, owner: index))
        case 0xD:
            let (count, content) = try length(marker: marker, at: start)
            let keys = try references(from: content, count: count, owner: index)
            let values = try references(from: content + count * referenceSize, count: count, owner: index)
            var dictionary: [String: PayloadValue] = [:]
            for (key, value) in zip(keys, values) {
                guard case .string(let name) = key else { throw fail(content, "dictionary key is not a string") }
                dictionary[name] = value
            }
            return .dictionary(dictionary)
        default:
            throw fail(start, "unknown object type 0x\(String(marker, radix: 16))")
        }
    }

    private mutating func references(from offset: Int, count: Int, owner: Int) throws(PayloadParseError) -> [PayloadValue] {
        guard !inProgress.contains(owner) else { throw fail(offset, "reference cycle") }
        guard depth < Self.maximumDepth else { throw fail(offset, "nested too deeply (over \(Self.maximumDepth) levels)") }
        inProgress.insert(owner)
        depth += 1
        defer {
            inProgress.remove(owner)
            depth -= 1
        }
        var values: [PayloadValue] = []
        values.reserveCapacity(min(count, 1024))
        for index in 0..<count {
            let reference = try uint(at: offset + index * referenceSize, size: referenceSize)
            guard let objectIndex = Int(exactly: reference) else { throw fail(offset, "bad reference") }
            values.append(try object(objectIndex))
        }
        return values
    }

    private func slice(_ offset: Int, _ count: Int) throws(PayloadParseError) -> [UInt8] {
        guard count >= 0, offset + count <= bytes.count else { throw fail(offset, "truncated binary plist") }
        return Array(bytes[offset..<(offset + count)])
    }
}
