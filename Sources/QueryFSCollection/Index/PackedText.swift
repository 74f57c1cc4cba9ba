/// A record's text fields in one block of bytes (`ItemRecord`): the title,
/// the URL, each tag as a LEB128 length and its bytes, then the display
/// title when it differs from the title. Sized exactly and written in
/// place: one allocation, which the record frees.
struct PackedText {
    let start: UnsafeMutablePointer<UInt8>
    let count: Int
    let titleEnd: UInt32
    let urlEnd: UInt32
    let tagsEnd: UInt32
    let hasURL: Bool
    let hasSeparateDisplayTitle: Bool

    /// `forEachTag` calls its argument with each tag's bytes, `tagCount` of them.
    init(title: UnsafeBufferPointer<UInt8>, url: UnsafeBufferPointer<UInt8>?, tagCount: Int,
         forEachTag: ((UnsafeBufferPointer<UInt8>) -> Void) -> Void, display: UnsafeBufferPointer<UInt8>?)
    {
        var tagsLength = 0
        forEachTag { tagsLength += Self.lengthOfLength($0.count) + $0.count }
        let total = title.count + (url?.count ?? 0) + tagsLength + (display?.count ?? 0)
        let start = UnsafeMutablePointer<UInt8>.allocate(capacity: max(total, 1))
        var end = 0
        func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            if let base = bytes.baseAddress, !bytes.isEmpty { (start + end).initialize(from: base, count: bytes.count) }
            end += bytes.count
        }
        append(title)
        titleEnd = UInt32(end)
        if let url { append(url) }
        urlEnd = UInt32(end)
        forEachTag { tag in
            var rest = tag.count
            while rest >= 0x80 {
                (start + end).initialize(to: UInt8(rest & 0x7F) | 0x80)
                end += 1
                rest >>= 7
            }
            (start + end).initialize(to: UInt8(rest))
            end += 1
            append(tag)
        }
        tagsEnd = UInt32(end)
        if let display { append(display) }
        precondition(end == total, "the packed text's size was worked out from the same fields")
        (self.start, count, hasURL, hasSeparateDisplayTitle) = (start, total, url != nil, display != nil)
    }

    private static func lengthOfLength(_ length: Int) -> Int {
        var bytes = 1, rest = length
        while rest >= 0x80 {
            bytes += 1
            rest >>= 7
        }
        return bytes
    }
}

extension Optional where Wrapped == [UInt8] {
    /// `body` with the bytes' buffer, or nil.
    func withOptionalBuffer<R>(_ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let bytes = self else { return body(nil) }
        return bytes.withUnsafeBufferPointer { body($0) }
    }
}
