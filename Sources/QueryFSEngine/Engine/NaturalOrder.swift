/// Natural order of titles (SPEC §2), as a byte key whose bytewise order is
/// the natural order, so that sorting compares keys with memcmp instead of
/// re-splitting titles on every comparison.
///
/// A title is split into runs of ASCII digits and runs of other characters.
/// - digit run: `0x01`, the count of significant digits (4 bytes, big
///   endian), the significant digits, then the run's full length (4 bytes):
///   numeric value first, then length, so `7` < `07` < `10`.
/// - other run: `0x02`, the UTF-8 of its lowercased scalars (UTF-8 byte order
///   is scalar order; bytes 0x00 and 0x01 escaped as 0x01 0x01 and 0x01 0x02),
///   then a 0x00 terminator, so a run sorts before any longer run it prefixes.
/// The markers make a digit run sort before a non-digit run.
package enum NaturalOrder {
    package static func sortKey(_ title: String) -> [UInt8] {
        var title = title
        title.makeContiguousUTF8()  // a no-op for nearly every title; the bytes are then at hand
        if let key = title.utf8.withContiguousStorageIfAvailable(asciiSortKey) ?? nil { return key }
        return scalarSortKey(title)
    }

    /// The same key for an ASCII title, from its bytes (nil at the first
    /// byte that is not ASCII). Scalar by scalar through Unicode's
    /// properties, an index file's 100,000 titles were a third of decoding it.
    private static func asciiSortKey(_ title: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var key: [UInt8] = []
        key.reserveCapacity(title.count + 8)
        var digitStart: Int?
        var inOtherRun = false
        func flushDigits(upTo end: Int) {
            guard let start = digitStart else { return }
            var significantStart = start
            while significantStart < end, title[significantStart] == UInt8(ascii: "0") { significantStart += 1 }
            key.append(0x01)
            appendUInt32(UInt32(clamping: end - significantStart), to: &key)
            key.append(contentsOf: title[significantStart..<end])
            appendUInt32(UInt32(clamping: end - start), to: &key)
            digitStart = nil
        }
        for index in title.indices {
            var byte = title[index]
            guard byte < 0x80 else { return nil }
            if byte >= 0x30 && byte <= 0x39 {
                if inOtherRun {
                    key.append(0x00)
                    inOtherRun = false
                }
                if digitStart == nil { digitStart = index }
                continue
            }
            if !inOtherRun {
                flushDigits(upTo: index)
                key.append(0x02)
                inOtherRun = true
            }
            if byte >= 0x41 && byte <= 0x5A { byte += 0x20 }
            appendEscaped(byte, to: &key)
        }
        if inOtherRun { key.append(0x00) }
        flushDigits(upTo: title.count)
        return key
    }

    /// The key scalar by scalar: any title (tests hold the ASCII path to it).
    static func scalarSortKey(_ title: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(title.utf8.count + 8)
        var digits: [UInt8] = []
        var inOtherRun = false

        func flushDigits() {
            guard !digits.isEmpty else { return }
            let significant = digits.drop(while: { $0 == UInt8(ascii: "0") })
            key.append(0x01)
            appendUInt32(UInt32(clamping: significant.count), to: &key)
            key.append(contentsOf: significant)
            appendUInt32(UInt32(clamping: digits.count), to: &key)
            digits.removeAll(keepingCapacity: true)
        }

        for scalar in title.unicodeScalars {
            if scalar.value >= 0x30 && scalar.value <= 0x39 {
                if inOtherRun {
                    key.append(0x00)
                    inOtherRun = false
                }
                digits.append(UInt8(scalar.value))
                continue
            }
            if !inOtherRun {
                flushDigits()
                key.append(0x02)
                inOtherRun = true
            }
            appendLowercased(scalar, to: &key)
        }
        if inOtherRun { key.append(0x00) }
        flushDigits()
        return key
    }

    /// Compares two titles in natural order: negative, zero or positive.
    package static func compare(_ a: String, _ b: String) -> Int {
        compareBytes(sortKey(a), sortKey(b))
    }

    private static func appendUInt32(_ value: UInt32, to key: inout [UInt8]) {
        key.append(UInt8(value >> 24))
        key.append(UInt8(value >> 16 & 0xFF))
        key.append(UInt8(value >> 8 & 0xFF))
        key.append(UInt8(value & 0xFF))
    }

    private static func appendLowercased(_ scalar: Unicode.Scalar, to key: inout [UInt8]) {
        if scalar.isASCII {
            var byte = UInt8(scalar.value)
            if byte >= 0x41 && byte <= 0x5A { byte += 0x20 }
            appendEscaped(byte, to: &key)
            return
        }
        for lower in scalar.properties.lowercaseMapping.unicodeScalars {
            for byte in UTF8.encode(lower)! { appendEscaped(byte, to: &key) }
        }
    }

    @inline(__always)
    private static func appendEscaped(_ byte: UInt8, to key: inout [UInt8]) {
        if byte <= 0x01 {
            key.append(0x01)
            key.append(byte + 1)
        } else {
            key.append(byte)
        }
    }
}
