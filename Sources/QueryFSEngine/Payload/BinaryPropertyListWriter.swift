/// Writes a value as a binary property list (`bplist00`), the format
/// `BinaryPropertyListParser` reads: every object once (strings, numbers and
/// the like shared where equal), the offset table, the trailer. Dictionary
/// keys are sorted, so the same value always gives the same bytes.
package enum BinaryPropertyListWriter {
    package static func write(_ value: PayloadValue) -> [UInt8] {
        var objects = ObjectTable()
        let top = objects.add(value)
        return objects.bytes(top: top)
    }

    private static let appleEpoch = 978_307_200.0

    private struct ObjectTable {
        /// Each object's encoding, with references still as object numbers.
        var objects: [(marker: [UInt8], references: [Int], tail: [UInt8])] = []
        var shared: [PayloadValue: Int] = [:]

        mutating func add(_ value: PayloadValue) -> Int {
            switch value {
            case .array(let elements):
                let references = elements.map { add($0) }
                return append(marker(0xA, count: references.count), references: references)
            case .dictionary(let members):
                let keys = members.keys.sorted()
                let keyReferences = keys.map { add(.string($0)) }
                let valueReferences = keys.map { add(members[$0]!) }
                return append(marker(0xD, count: keys.count), references: keyReferences + valueReferences)
            default:
                if let existing = shared[value] { return existing }
                let index = append(scalar(value), references: [])
                shared[value] = index
                return index
            }
        }

        private mutating func append(_ encoded: [UInt8], references: [Int]) -> Int {
            objects.append((encoded, references, []))
            return objects.count - 1
        }

        private func scalar(_ value: PayloadValue) -> [UInt8] {
            switch value {
            case .null: return [0x00]
            case .bool(let flag): return [flag ? 0x09 : 0x08]
            case .integer(let number):
                if number >= 0, number <= 0xFF { return [0x10, UInt8(number)] }
                if number >= 0, number <= 0xFFFF { return [0x11] + bigEndian(UInt64(number), size: 2) }
                if number >= 0, number <= 0xFFFF_FFFF { return [0x12] + bigEndian(UInt64(number), size: 4) }
                return [0x13] + bigEndian(UInt64(bitPattern: number), size: 8)
            case .real(let number): return [0x23] + bigEndian(number.bitPattern, size: 8)
            case .date(let seconds): return [0x33] + bigEndian((seconds - appleEpoch).bitPattern, size: 8)
            case .data(let bytes): return marker(0x4, count: bytes.count) + bytes
            case .string(let text):
                if text.utf8.allSatisfy({ $0 < 0x80 }) { return marker(0x5, count: text.utf8.count) + Array(text.utf8) }
                let units = Array(text.utf16)
                return marker(0x6, count: units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            case .array, .dictionary: return []
            }
        }

        private func marker(_ type: UInt8, count: Int) -> [UInt8] {
            if count < 15 { return [type << 4 | UInt8(count)] }
            let size = count <= 0xFF ? 0 : count <= 0xFFFF ? 1 : count <= 0xFFFF_FFFF ? 2 : 3
            return [type << 4 | 0x0F, 0x10 | UInt8(size)] + bigEndian(UInt64(count), size: 1 << size)
        }

        func bytes(top: Int) -> [UInt8] {
            let referenceSize = Self.size(for: objects.count)
            var bytes = Array("bplist00".utf8)
            var offsets: [Int] = []
            for object in objects {
                offsets.append(bytes.count)
                bytes += object.marker
                for reference in object.references { bytes += bigEndian(UInt64(reference), size: referenceSize) }
            }
            let tableOffset = bytes.count
            let offsetSize = Self.size(for: tableOffset)
            for offset in offsets { bytes += bigEndian(UInt64(offset), size: offsetSize) }
            bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            bytes += bigEndian(UInt64(objects.count), size: 8)
            bytes += bigEndian(UInt64(top), size: 8)
            bytes += bigEndian(UInt64(tableOffset), size: 8)
            return bytes
        }

        /// Bytes needed for numbers up to `limit`.
        static func size(for limit: Int) -> Int {
            limit <= 0xFF ? 1 : limit <= 0xFFFF ? 2 : limit <= 0xFFFF_FFFF ? 4 : 8
        }

        private func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }
}
