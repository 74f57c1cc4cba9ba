/// Where the top-level keys of a TOML front-matter block lie, line by line:
/// only the shapes an edit rewrites — `key = "text"`, `key = true`, and an
/// array of strings `key = ["a", 'b']` (over lines too) — before the first
/// `[table]` header (keys after one belong to that table). The result of
/// every edit is read again by toml++ (`FrontMatterEditor`), which is what
/// decides whether it holds; this only finds places.
struct TOMLBlockLayout {
    struct Array {
        /// Offsets of `[` and `]`.
        var open: Int
        var close: Int
        var elements: [YAMLBlockLayout.Scalar]
    }

    private var lines: [(key: String, valueStart: Int, valueEnd: Int)] = []
    private let bytes: [UInt8]
    /// Where a new top-level key goes: after the last line before the first
    /// `[table]` header that is neither blank nor a comment (a comment just
    /// above a table is the table's), or at the end when there is no table.
    private(set) var topLevelEnd: Int

    init(_ text: String) {
        bytes = Swift.Array(text.utf8)
        topLevelEnd = bytes.count
        var start = 0
        var afterLastKeyLine = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 10) ?? bytes.count
            var line = bytes[start..<end]
            while let last = line.last, last == 13 { line = line.dropLast() }
            let trimmed = line.drop { $0 == 32 || $0 == 9 }
            if trimmed.first == UInt8(ascii: "[") {  // a table: what follows is not top level
                topLevelEnd = afterLastKeyLine
                break
            }
            if !trimmed.isEmpty && trimmed.first != UInt8(ascii: "#") { afterLastKeyLine = Swift.min(end + 1, bytes.count) }
            if let equals = trimmed.firstIndex(of: UInt8(ascii: "=")) {
                var key = String(decoding: trimmed[..<equals], as: UTF8.self).trimming(" \t")
                // A quoted key without escapes is the key it quotes (`"ünï" = 1` is `ünï`).
                if key.count >= 2, let quote = key.first, quote == "\"" || quote == "'", key.last == quote,
                   !key.dropFirst().dropLast().contains(quote), !key.contains("\\") {
                    key = String(key.dropFirst().dropLast())
                }
                let valueStart = trimmed[(equals + 1)...].firstIndex { $0 != 32 && $0 != 9 } ?? line.endIndex
                lines.append((key, valueStart, line.endIndex))
            }
            start = end + 1
        }
    }

    func hasKey(_ key: String) -> Bool { lines.contains { $0.key == key } }

    /// The range of a string, boolean or number (or date) value of `key`.
    func scalar(_ key: String) -> Range<Int>? {
        guard let line = lines.first(where: { $0.key == key }), line.valueStart < line.valueEnd else { return nil }
        let first = bytes[line.valueStart]
        if first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") {
            return string(at: line.valueStart, end: line.valueEnd).map { line.valueStart..<$0.end }
        }
        for word in ["true", "false"] where bytes[line.valueStart...].starts(with: word.utf8) {
            return line.valueStart..<(line.valueStart + word.utf8.count)
        }
        // A number or a date (`3`, `-1.5e3`, `0x1F`, `1_000`, `inf`, `2024-05-01T10:00:00Z`):
        // one word, up to a blank, comment or the line's end (found from
        // outside: `set payload.rating=4` was refused on `rating = 3`). A date
        // with a blank before its time is two words: what is written then
        // fails toml++'s reading again, and the edit is refused whole.
        let numberStart = Set("0123456789+-in".utf8)
        guard numberStart.contains(first) else { return nil }
        let word = bytes[line.valueStart..<line.valueEnd].prefix { byte in
            byte != 32 && byte != 9 && byte != UInt8(ascii: "#") && byte != UInt8(ascii: ",")
        }
        return line.valueStart..<(line.valueStart + word.count)
    }

    /// An array of strings under `key`, on one line or over several (each
    /// element a one-line string; comments between them): found from
    /// outside, a Hugo note's `tags = [` list over lines could not be edited.
    func array(_ key: String) -> Array? {
        guard let line = lines.first(where: { $0.key == key }), line.valueStart < line.valueEnd,
              bytes[line.valueStart] == UInt8(ascii: "[") else { return nil }
        var elements: [YAMLBlockLayout.Scalar] = []
        var index = line.valueStart + 1
        while index < bytes.count {
            let byte = bytes[index]
            let lineEnd = bytes[index...].firstIndex(of: 10) ?? bytes.count
            if byte == 32 || byte == 9 || byte == 10 || byte == 13 || byte == UInt8(ascii: ",") {
                index += 1
            } else if byte == UInt8(ascii: "#") {
                index = lineEnd  // a comment, to the end of its line
            } else if byte == UInt8(ascii: "]") {
                return Array(open: line.valueStart, close: index, elements: elements)
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'"), let string = string(at: index, end: lineEnd) {
                elements.append(YAMLBlockLayout.Scalar(range: index..<string.end, style: byte == UInt8(ascii: "'") ? .singleQuoted : .doubleQuoted,
                                                       text: string.text))
                index = string.end
            } else {
                return nil  // not an array of one-line strings
            }
        }
        return nil
    }

    /// A quoted string starting at `start`: where it ends and its text
    /// (the escapes a tag or title uses undone; toml++ judges the rest).
    private func string(at start: Int, end: Int) -> (end: Int, text: String)? {
        let quote = bytes[start]
        var text: [UInt8] = []
        var index = start + 1
        while index < end {
            let byte = bytes[index]
            if byte == quote { return (index + 1, String(decoding: text, as: UTF8.self)) }
            if quote == UInt8(ascii: "\""), byte == UInt8(ascii: "\\"), index + 1 < end {
                text.append(bytes[index + 1])
                index += 2
                continue
            }
            text.append(byte)
            index += 1
        }
        return nil
    }
}
