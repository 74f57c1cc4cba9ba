/// Assembles binary property lists object by object, so tests can write
/// what no well-behaved writer would: nesting 200,000 deep, containers
/// shared over and over, dates of ±infinity or NaN.
public struct BinaryPlistBuilder {
    public init() {}

    private var objects: [[UInt8]] = []
    private let referenceSize = 4

    /// Adds an object; returns its reference.
    @discardableResult
    public mutating func add(_ encoded: [UInt8]) -> Int {
        objects.append(encoded)
        return objects.count - 1
    }

    public mutating func string(_ text: String) -> Int {
        let bytes = Array(text.utf8)
        return add(Self.marker(0x5, count: bytes.count) + bytes)
    }

    public mutating func real(_ value: Double) -> Int {
        add([0x23] + Self.bigEndian(value.bitPattern, size: 8))
    }

    /// A date given in seconds since 1970 (stored since 2001, as Apple does).
    public mutating func date(_ secondsSince1970: Double) -> Int {
        add([0x33] + Self.bigEndian((secondsSince1970 - 978_307_200).bitPattern, size: 8))
    }

    public mutating func array(_ references: [Int]) -> Int {
        add(Self.marker(0xA, count: references.count) + references.flatMap { Self.bigEndian(UInt64($0), size: referenceSize) })
    }

    public mutating func dictionary(_ pairs: [(key: Int, value: Int)]) -> Int {
        add(Self.marker(0xD, count: pairs.count)
            + pairs.flatMap { Self.bigEndian(UInt64($0.key), size: referenceSize) }
            + pairs.flatMap { Self.bigEndian(UInt64($0.value), size: referenceSize) })
    }

    /// The file, with `top` as its root object.
    public func bytes(top: Int) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        for offset in offsets { bytes += Self.bigEndian(UInt64(offset), size: 8) }
        bytes += [0, 0, 0, 0, 0, 0, 8, UInt8(referenceSize)]
        bytes += Self.bigEndian(UInt64(objects.count), size: 8)
        bytes += Self.bigEndian(UInt64(top), size: 8)
        bytes += Self.bigEndian(UInt64(tableOffset), size: 8)
        return bytes
    }

    private static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        if count < 15 { return [type << 4 | UInt8(count)] }
        return [type << 4 | 0x0F, 0x13] + bigEndian(UInt64(count), size: 8)
    }

    private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
