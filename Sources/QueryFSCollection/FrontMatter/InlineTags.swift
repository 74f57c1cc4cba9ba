/// Tags written in a note's text, as Obsidian reads them: `#tag` or
/// `#nested/tag` at the start of a line or after a blank, made of letters,
/// digits, `_`, `-` and `/`, with at least one that is not a digit (`#2024`
/// is no tag). Headings (`# Title`: a blank after the `#`), code fences and
/// inline code are not text, and neither is a `#` inside a word or a link
/// (`page#anchor`). Read in the note's head only (`FrontMatter.Limits`).
enum InlineTags {
    /// The tags of `body`, in order, each once.
    static func read(_ body: ArraySlice<UInt8>) -> [String] {
        var tags: [String] = []
        var seen = Set<String>()
        var inFence = false
        for line in body.split(separator: 10, omittingEmptySubsequences: true) {
            let trimmed = line.drop { $0 == 32 || $0 == 9 }
            if trimmed.starts(with: Array("```".utf8)) || trimmed.starts(with: Array("~~~".utf8)) {
                inFence.toggle()
                continue
            }
            guard !inFence else { continue }
            var inCode = false
            var previous: UInt8 = 32
            var index = line.startIndex
            while index < line.endIndex {
                let byte = line[index]
                if byte == UInt8(ascii: "`") { inCode.toggle() }
                if !inCode, byte == UInt8(ascii: "#"), previous == 32 || previous == 9 {
                    var end = index + 1
                    while end < line.endIndex, isTagByte(line[end]) { end += 1 }
                    let tag = line[(index + 1)..<end]
                    if !tag.isEmpty, tag.contains(where: { !(48...57).contains($0) }), let text = String(validating: tag, as: UTF8.self) {
                        let clean = String(text.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
                        if !clean.isEmpty, seen.insert(clean).inserted { tags.append(clean) }
                    }
                    previous = line[end - 1]
                    index = end
                    continue
                }
                previous = byte
                index += 1
            }
        }
        return tags
    }

    /// Letters (any non-ASCII byte of a UTF-8 letter too), digits, `_`, `-`, `/`.
    private static func isTagByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte >= 0x80
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "/")
    }
}
