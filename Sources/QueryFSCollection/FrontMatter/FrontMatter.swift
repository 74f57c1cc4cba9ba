#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// The front matter of a Markdown (or plain text) note: a YAML block
/// between `---` lines, or a TOML block between `+++` lines, at the very
/// top of the file, as Obsidian, Zettlr, Foam, Logseq, Hugo and Jekyll
/// write it. Its keys are the note's payload: `title`, `tags`, `aliases`,
/// `created`/`date`, `updated`, `archived`, and any other as `payload.KEY`.
///
/// YAML is read by libyaml (through Yams), TOML by toml++ (through
/// TOMLKit): nothing here guesses at either syntax. What it adds is what
/// notes mean by their keys (SPEC-level rules in README «Markdown notes»):
/// - `tags` may be a list or one string of tags separated by commas or
///   spaces; a leading `#` is dropped; `a/b` stays one (nested) tag;
/// - without a `title`, the first `# ` heading of the body is the title;
/// - every value is bounded (`Limits`), so one hostile note costs a problem
///   line, never the daemon.
package enum FrontMatter {
    /// What a note's head held.
    package struct Parsed: Equatable, Sendable {
        /// The front matter as a payload (a dictionary), normalized as above;
        /// empty when the note has none.
        package var payload: [String: PayloadValue] = [:]
        /// Why some or all of it could not be read.
        package var problems: [String] = []
    }

    package enum Limits {
        /// Bytes of a note read for its front matter and first heading.
        package static let headBytes = 64 << 10
        /// Nesting of lists and maps (deeper is refused before it is built).
        package static let depth = 64
        /// Values in all (an alias counts again each time it is used:
        /// a "billion laughs" document is refused, not expanded).
        package static let values = 20_000
    }

    /// The extensions of notes: Markdown, and plain text (Zettlr, iA Writer).
    package static let noteExtensions: Set<String> = ["md", "markdown", "mdown", "mkd", "mdx", "txt", "text"]

    /// Whether item `name` is a note whose head is read for front matter.
    package static func isNote(_ name: ItemName) -> Bool {
        !name.isHidden && noteExtensions.contains(name.ext.lowercased())
    }

    /// The fences a block opens and closes with, and its language.
    private enum Syntax { case yaml, toml }

    /// Parses the head of a note (its first `Limits.headBytes` bytes, or all of it).
    /// `inlineTags`: `#tags` written in the text join the front matter's (`InlineTags`).
    package static func parse(_ head: [UInt8], inlineTags: Bool = false) -> Parsed {
        var parsed = Parsed()
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }  // a byte-order mark
        var body = bytes
        if let (syntax, block, rest) = split(bytes) {
            body = rest
            guard let text = String(validating: block, as: UTF8.self) else {
                parsed.problems.append("front matter: not UTF-8; ignored")
                return parsed
            }
            var duplicateKeys: [String] = []
            let read: Result<PayloadValue, FrontMatterError> = switch syntax {
            // The block starts on the note's second line (after the opening fence).
            case .yaml: Result { () throws(FrontMatterError) in
                let (value, duplicates) = try YAMLFrontMatter.readReporting(text, firstLine: 2)
                duplicateKeys = duplicates
                return value
            }
            case .toml: Result { () throws(FrontMatterError) in try TOMLFrontMatter.read(text, firstLine: 2) }
            }
            parsed.problems += duplicateKeys.map { "front matter: \($0) is given more than once; the last is read" }
            switch read {
            case .success(.dictionary(let dictionary)): parsed.payload = dictionary
            case .success(.null): break  // an empty block
            case .success(let other): parsed.problems.append("front matter: a \(other.typeName), not a map of keys; ignored")
            case .failure(let error): parsed.problems.append("front matter: \(error.message); ignored")
            }
        } else if let fence = openingFence(bytes) {
            parsed.problems.append(bytes.count >= Limits.headBytes
                ? "front matter: longer than \(Limits.headBytes / 1024) KiB; ignored"
                : "front matter: the block that \(fence) opens is never closed; read as text")
        }
        normalize(&parsed)
        if inlineTags {
            let written = InlineTags.read(body)
            if !written.isEmpty {
                var tags = FrontMatterEditor.tags(parsed)
                tags += written.filter { !tags.contains($0) }
                parsed.payload["tags"] = .array(tags.map(PayloadValue.string))
            }
        }
        if parsed.payload["title"] == nil, let heading = firstHeading(body) { parsed.payload["title"] = .string(heading) }
        return parsed
    }

    /// `---` or `+++` when the head's first line is one of them (a block
    /// opens, closed or not).
    private static func openingFence(_ bytes: ArraySlice<UInt8>) -> String? {
        let firstLine = bytes.prefix { $0 != UInt8(ascii: "\n") }
        guard firstLine.count < bytes.count else { return nil }
        var fence = firstLine
        while let last = fence.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { fence = fence.dropLast() }
        switch Array(fence) {
        case Array("---".utf8): return "---"
        case Array("+++".utf8): return "+++"
        default: return nil
        }
    }

    /// The text after the front matter (all of `head` when it has none).
    static func body(_ head: [UInt8]) -> ArraySlice<UInt8> {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return split(bytes)?.2 ?? bytes
    }

    /// The block between the opening fence (the first line) and the closing
    /// one, and the body after it; nil when the head opens with no block.
    /// Line by line without splitting the head into an array of lines
    /// (that allocation was 6 % of a scan of 100,000 notes).
    private static func split(_ bytes: ArraySlice<UInt8>) -> (Syntax, ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var line = line
            while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { line = line.dropLast() }
            return line
        }
        guard let firstEnd = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let syntax: Syntax
        let fence = trimmed(bytes[..<firstEnd])
        if fence.elementsEqual("---".utf8) {
            syntax = .yaml
        } else if fence.elementsEqual("+++".utf8) {
            syntax = .toml
        } else {
            return nil
        }
        var lineStart = firstEnd + 1
        while lineStart <= bytes.endIndex {
            let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            let line = trimmed(bytes[lineStart..<lineEnd])
            let closes = syntax == .yaml ? line.elementsEqual("---".utf8) || line.elementsEqual("...".utf8) : line.elementsEqual("+++".utf8)
            if closes { return (syntax, bytes[(firstEnd + 1)..<lineStart], bytes[min(lineEnd + 1, bytes.endIndex)...]) }
            lineStart = lineEnd + 1
        }
        return nil  // not closed within the head: not front matter (or too long, said by the caller)
    }

    /// What notes mean by their keys.
    private static func normalize(_ parsed: inout Parsed) {
        for key in ["tags", "aliases"] {
            guard let value = parsed.payload[key] else { continue }
            switch value {
            case .string(let text): parsed.payload[key] = .array(words(text, key: key).map(PayloadValue.string))
            case .array(let elements) where elements.allSatisfy({ if case .string(let text) = $0 { isOneWord(text) } else { false } }):
                continue  // the usual list, one plain tag an element: kept as it is, not rebuilt (3 mallocs a note)
            case .array(let elements):
                var names: [PayloadValue] = []
                var others = 0
                for element in elements {
                    switch element {
                    case .string(let text): names += words(text, key: key).map(PayloadValue.string)
                    case .integer, .real, .bool: names.append(.string(element.scalarText))  // `tags: [2024]`
                    default: others += 1
                    }
                }
                parsed.payload[key] = .array(names)
                if others > 0 { parsed.problems.append("front matter: \(key): \(others) not text; ignored") }
            case .null: parsed.payload[key] = nil
            default:
                parsed.payload[key] = nil
                parsed.problems.append("front matter: \(key): a \(value.typeName), not a list; ignored")
            }
        }
        // A date-time YAML reads as text (Obsidian writes `2024-06-04T13:33`, without seconds) is a date still.
        for key in ["created", "date", "updated", "modified"] {
            if case .string(let text)? = parsed.payload[key], let seconds = ISO8601.parse(text.trimming(" ")) { parsed.payload[key] = .date(seconds) }
        }
        // Dates by the names notes use; the date `queryfs` reads as the item's creation.
        if parsed.payload["created"] == nil, let date = parsed.payload["date"] { parsed.payload["created"] = date }
    }

    /// Tags in one string: separated by commas, or by spaces when there is
    /// no comma; `#` dropped (`#swift` is `swift`). Aliases: by commas only.
    /// Split as bytes (every separator is ASCII, so no character is cut):
    /// splitting Characters against a set of them was 4.7 % of a scan of
    /// 100,000 notes, most of whose `tags:` are such strings.
    private static func words(_ text: String, key: String) -> [String] {
        let comma = UInt8(ascii: ","), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), hash = UInt8(ascii: "#")
        var text = text
        text.makeContiguousUTF8()  // a no-op for what the parsers make; `withContiguousStorageIfAvailable` then always gives the bytes
        let utf8 = text.utf8
        // The common case, one plain tag: no splitting, no copies.
        if isOneWord(text) { return [text] }
        let isTags = key == "tags"
        let byComma = !isTags || utf8.contains(comma)
        return utf8.withContiguousStorageIfAvailable { bytes -> [String] in
            var words: [String] = []
            var start = 0
            func take(_ end: Int) {
                var lower = start, upper = end
                while lower < upper, bytes[lower] == space || bytes[lower] == tab { lower += 1 }
                while upper > lower, bytes[upper - 1] == space || bytes[upper - 1] == tab { upper -= 1 }
                if isTags, lower < upper, bytes[lower] == hash { lower += 1 }
                if lower < upper { words.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[lower..<upper]), as: UTF8.self)) }
            }
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if byComma ? byte == comma : byte == space || byte == tab {
                    take(index)
                    start = index + 1
                }
            }
            take(bytes.count)
            return words
        } ?? []
    }

    /// Whether `text` is one tag (or alias) as it stands: not empty, and
    /// no separator, `#` or blank that `words` would split at or trim.
    private static func isOneWord(_ text: String) -> Bool {
        !text.isEmpty && !text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "#") }
    }

    /// The text of the body's first `# ` heading (ATX, level 1), if any.
    /// Line by line over the bytes: only a heading line is made a String
    /// (validating every line as UTF-8 first was 3.3 % of a scan).
    private static func firstHeading(_ body: ArraySlice<UInt8>) -> String? {
        let newline = UInt8(ascii: "\n")
        var inFence = false
        var lineStart = body.startIndex
        while lineStart < body.endIndex {
            let lineEnd = body[lineStart...].firstIndex(of: newline) ?? body.endIndex
            let line = body[lineStart..<lineEnd]
            lineStart = lineEnd + 1
            let indented = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
            if indented.starts(with: "```".utf8) || indented.starts(with: "~~~".utf8) { inFence.toggle() }
            guard !inFence, line.starts(with: "# ".utf8) else { continue }
            // Not UTF-8: no title from it (the name stands).
            guard let text = String(validating: line, as: UTF8.self) else { return nil }
            var title = String(text.dropFirst(2)).trimming(" \t\r")
            // A closing sequence of #s (after a space) is not part of the heading.
            let withoutHashes = title.reversed().drop { $0 == "#" }
            if withoutHashes.count < title.count, withoutHashes.first == " " { title = String(withoutHashes.reversed()).trimming(" \t") }
            if !title.isEmpty { return title }
        }
        return nil
    }
}

/// Why a block could not be read.
struct FrontMatterError: Error {
    let message: String
}

extension String {
    /// The string without `characters` at either end.
    /// By Unicode scalars: "\r\n" is one Character, so a set of Characters
    /// would keep a lone "\n" that `characters` names.
    func trimming(_ characters: String) -> String {
        let set = Set(characters.unicodeScalars)
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !set.contains($0) }) else { return "" }
        let end = scalars.lastIndex(where: { !set.contains($0) })!
        return String(scalars[start...end])
    }
}

extension PayloadValue {
    /// A scalar as text (`2024`, `1.5`, `true`).
    var scalarText: String {
        switch self {
        case .string(let text): text
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .bool(let value): value ? "true" : "false"
        default: typeName
        }
    }
}
