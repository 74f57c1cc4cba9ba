import QueryFSEngine
/// The byte layer of the index file: unsigned LEB128 integers and
/// length-prefixed byte strings, written into one growing buffer and read
/// back with every length checked against what is left. Hand-written, not
/// Codable: decoding 100,000 items through JSONDecoder took seconds, and a
/// restart from the index is meant to take a fraction of one (DEVELOPERS.md,
/// "The persistent index").
struct IndexWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func integer(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func integer(_ value: Int) { integer(UInt64(bitPattern: Int64(value))) }

    /// Zig-zag, so small negative numbers stay short.
    mutating func signed(_ value: Int64) { integer(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func data(_ value: some Collection<UInt8>) {
        integer(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) {
        var copy = value
        copy.withUTF8 { data($0) }
    }

    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
}

/// Why bytes could not be decoded: the file is corrupt (or not ours).
struct IndexDecodingError: Error, CustomStringConvertible {
    var description: String
    /// Written in another format (an older or newer queryfs), not damaged.
    var isOtherFormat = false
    init(_ description: String, isOtherFormat: Bool = false) {
        self.description = description
        self.isOtherFormat = isOtherFormat
    }
}

/// Reads what `IndexWriter` wrote, from a borrowed buffer.
struct IndexReader {
    private let buffer: UnsafeBufferPointer<UInt8>
    private(set) var offset: Int

    init(_ buffer: UnsafeBufferPointer<UInt8>, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    var isAtEnd: Bool { offset >= buffer.count }
    var remaining: Int { buffer.count - offset }

    mutating func byte() throws(IndexDecodingError) -> UInt8 {
        guard offset < buffer.count else { throw IndexDecodingError("ends early at byte \(offset)") }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func integer() throws(IndexDecodingError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw IndexDecodingError("an integer longer than 64 bits at byte \(offset)") }
            value |= UInt64(next & 0x7f) << shift
            if next & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// A count or length, checked against what is left (each element takes at least one byte).
    mutating func count() throws(IndexDecodingError) -> Int {
        let value = try integer()
        guard value <= UInt64(remaining) else { throw IndexDecodingError("a length of \(value) with \(remaining) bytes left") }
        return Int(value)
    }

    mutating func int() throws(IndexDecodingError) -> Int { Int(truncatingIfNeeded: Int64(bitPattern: try integer())) }

    mutating func signed() throws(IndexDecodingError) -> Int64 {
        let raw = try integer()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func fixed64() throws(IndexDecodingError) -> UInt64 {
        guard remaining >= 8 else { throw IndexDecodingError("ends early at byte \(offset)") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(buffer[offset + index]) << UInt64(index * 8) }
        offset += 8
        return value
    }

    mutating func dataSlice() throws(IndexDecodingError) -> UnsafeBufferPointer<UInt8> {
        let length = try count()
        defer { offset += length }
        return UnsafeBufferPointer(rebasing: buffer[offset..<offset + length])
    }

    mutating func data() throws(IndexDecodingError) -> [UInt8] { Array(try dataSlice()) }

    /// The bytes read since `start` (an earlier `offset`).
    func bytes(since start: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: buffer[start..<offset])
    }

    /// Skips `length` bytes the caller checked are there.
    mutating func skip(_ length: Int) { offset = min(buffer.count, offset + length) }

    /// A string; bytes that are not UTF-8 (they never are when we wrote them) become U+FFFD.
    mutating func string() throws(IndexDecodingError) -> String { String(decoding: try dataSlice(), as: UTF8.self) }
}

/// The checksum of the index file's parts: 64-bit, eight bytes at a time,
/// each word mixed with splitmix64 (fast enough to check 100 MB in a few
/// tens of milliseconds; it guards against torn writes and bit rot, not
/// against someone forging an index).
enum IndexChecksum {
    static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0x5155_4552_5946_5321 ^ UInt64(bytes.count)
        var index = 0
        let raw = UnsafeRawBufferPointer(bytes)
        while index + 8 <= bytes.count {
            hash = mix(hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian)
            index += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count {
            tail |= UInt64(bytes[index]) << shift
            shift += 8
            index += 1
        }
        return mix(hash ^ tail ^ 0xff)
    }

    static func of(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBufferPointer { of($0) } }

    private static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
