#if canImport(Glibc)
import Glibc
#endif

/// The name of an item in the backing directory: raw bytes, because a Linux
/// file name need not be valid UTF-8 and must survive byte for byte.
package struct ItemName: Hashable, Comparable, Sendable, CustomStringConvertible {
    package let bytes: [UInt8]

    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    package init(_ string: String) { self.bytes = Array(string.utf8) }

    /// The bytes hashed as one block: the synthesized hash fed the hasher a
    /// byte at a time, and hashing names was a tenth of loading 100,000
    /// items from the index file.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    package static func == (a: ItemName, b: ItemName) -> Bool { a.bytes == b.bytes }

    /// Bytewise ascending: the tie-breaker of every order (SPEC §2).
    package static func < (a: ItemName, b: ItemName) -> Bool {
        compareBytes(a.bytes, b.bytes) < 0
    }

    /// Hidden entries (names starting with `.`) are never items (SPEC §1);
    /// in a recursive collection, neither is anything inside a hidden folder.
    package var isHidden: Bool {
        guard bytes.first != UInt8(ascii: ".") else { return true }
        guard bytes.contains(UInt8(ascii: "/")) else { return false }  // the common case: one scan, no pairs
        return zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: ".") }
    }

    /// Where the last path component starts (0 but for a nested item of a
    /// recursive collection, `folder/name`): `ext` and `stem` are its own.
    package var lastComponentStart: Int {
        bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
    }

    /// Index of the `.` that starts the extension, if any: the last `.` of
    /// the last component, provided it is not that component's first byte.
    var extensionDot: Int? {
        let start = lastComponentStart
        guard let dot = bytes[start...].lastIndex(of: UInt8(ascii: ".")), dot > start else { return nil }
        return dot
    }

    /// What follows the last `.` (SPEC §1 `ext`); empty when there is none.
    package var extensionBytes: ArraySlice<UInt8> {
        guard let dot = extensionDot else { return [] }
        return bytes[(dot + 1)...]
    }

    /// The name without `.ext` (and without the folders of a nested item).
    /// A name ending in `.` (empty ext) keeps its dot, since there is no
    /// `.ext` to remove.
    package var stemBytes: ArraySlice<UInt8> {
        let start = lastComponentStart
        guard let dot = extensionDot, dot + 1 < bytes.count else { return bytes[start...] }
        return bytes[start..<dot]
    }

    /// Whether the item lies in a folder of items (a recursive collection).
    package var isNested: Bool { bytes.contains(UInt8(ascii: "/")) }

    /// Whether this can name an item: not empty, no NUL, not hidden, and
    /// for a nested item a relative path of plain components (no empty,
    /// `.` or `..` component, no leading or trailing `/`).
    /// One pass, no allocation: an index file's every item is checked so.
    package var isItemPath: Bool {
        bytes.withUnsafeBufferPointer { Self.isItemPath($0) }
    }

    /// `isItemPath` of a name's bytes where they lie (an index file's).
    package static func isItemPath(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        // Empty, hidden, or an empty first or last component.
        guard let first = name.first, first != dot, first != slash, name.last != slash else { return false }
        var previous = first
        for byte in name.dropFirst() {
            // NUL; or after a `/`, an empty or hidden component (`//`, `/.`, `/..`).
            if byte == 0 || (previous == slash && (byte == slash || byte == dot)) { return false }
            previous = byte
        }
        return true
    }

    package var ext: String { String(decoding: extensionBytes, as: UTF8.self) }
    package var stem: String { String(decoding: stemBytes, as: UTF8.self) }

    /// Lossy display form (invalid UTF-8 shown as U+FFFD).
    package var description: String { String(decoding: bytes, as: UTF8.self) }

    /// The name as a C string for system calls.
    package func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}

/// memcmp-style comparison of byte sequences: negative, zero or positive.
@inline(__always)
package func compareBytes<A: Collection, B: Collection>(_ a: A, _ b: B) -> Int
where A.Element == UInt8, B.Element == UInt8 {
    var i = a.makeIterator(), j = b.makeIterator()
    while true {
        switch (i.next(), j.next()) {
        case let (x?, y?): if x != y { return x < y ? -1 : 1 }
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        }
    }
}

/// The same for byte arrays, with memcmp: sorting hot path.
@inline(__always)
package func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBufferPointer { x in
        b.withUnsafeBufferPointer { y in
            let common = min(x.count, y.count)
            if common > 0 {
                let result = memcmp(x.baseAddress!, y.baseAddress!, common)
                if result != 0 { return result < 0 ? -1 : 1 }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        }
    }
}
