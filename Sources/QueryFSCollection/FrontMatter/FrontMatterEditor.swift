import QueryFSEngine

/// Writes an edit back into a note's front matter, as small as the edit:
/// a tag added or removed, a title or the archived flag set. Every other
/// byte stays: the body, comments, key order, quoting, and the style of
/// the list (block `- a` lines, flow `[a, b]`, or one string `a, b`).
///
/// Where each value lies comes from the parsers (`YAMLBlockLayout`, from
/// libyaml's events; for TOML, `TOMLBlockLayout`). The result is then read
/// again by `FrontMatter.parse`, the reader the scan uses, and must say
/// exactly what the edit meant, every other key unchanged; otherwise the
/// edit is refused (`FrontMatterError`) and the note left as it was.
enum FrontMatterEditor {
    /// The note with its front-matter tags made `tags` (tags it had keep
    /// their place; new ones go at the end). A Markdown note without front
    /// matter gets a YAML block holding them.
    /// Whether `note` opens with a front-matter block (after a byte order mark): `---` or `+++` on its first line.
    static func startsWithBlock(_ note: [UInt8]) -> Bool {
        let text = note.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(note.dropFirst(3)) : note
        return ["---\n", "---\r\n", "+++\n", "+++\r\n"].contains { text.starts(with: Array($0.utf8)) }
    }

    /// `note` without a block that holds nothing but an empty list of tags
    /// (`---`, `tags: []`, `---`, as an edit's first tag leaves it once taken
    /// back), or nil when it has no such block.
    static func removingEmptyTagsBlock(_ note: [UInt8]) -> [UInt8]? {
        let mark = note.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        for eol in ["\n", "\r\n"] {
            for block in ["---\(eol)tags: []\(eol)---\(eol)", "+++\(eol)tags = []\(eol)+++\(eol)"] where note.dropFirst(mark).starts(with: Array(block.utf8)) {
                return Array(note.prefix(mark)) + Array(note.dropFirst(mark + block.utf8.count))
            }
        }
        return nil
    }

    static func settingTags(_ tags: [String], in note: [UInt8], name: ItemName) throws(FrontMatterError) -> [UInt8] {
        let before = FrontMatter.parse(Array(note.prefix(FrontMatter.Limits.headBytes)))
        let old = Self.tags(before)
        guard old != tags else { return note }
        let text = try edit(note, name: name) { (block) throws(FrontMatterError) in try block.replaceTags(old, with: tags) }
        var expected = before.payload
        expected["tags"] = .array(tags.map(PayloadValue.string))
        try verify(text, means: expected)
        return text
    }

    /// The note with the scalar `key` (`title`, `archived`) set to `value`.
    static func setting(_ key: String, to value: PayloadValue, in note: [UInt8], name: ItemName) throws(FrontMatterError) -> [UInt8] {
        let before = FrontMatter.parse(Array(note.prefix(FrontMatter.Limits.headBytes)))
        var expected = before.payload
        expected[key] = value
        let text = try edit(note, name: name) { (block) throws(FrontMatterError) in try block.set(key, to: value) }
        try verify(text, means: expected)
        return text
    }

    /// Whether the note has a block, or may be given one (Markdown, not
    /// plain text, and text at all: UTF-8 without NUL bytes as far as the
    /// first 64 KiB go). A block put in front of UTF-16 or binary bytes
    /// named `.md` would make them unreadable (found from outside); such a
    /// file takes tags in its attribute, as any plain file.
    static func canHoldFrontMatter(_ note: [UInt8], name: ItemName) -> Bool {
        if ((try? FrontMatterBlock(in: note)) ?? nil) != nil { return true }
        return FrontMatterBlock.markdownExtensions.contains(name.ext.lowercased()) && looksLikeUTF8Text(note.prefix(FrontMatter.Limits.headBytes))
    }

    /// UTF-8 without NUL; a sequence cut by the end of the slice still counts.
    static func looksLikeUTF8Text(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard !bytes.contains(0) else { return false }
        // Up to three bytes of a character the slice cut off are not held against it.
        for cut in 0...min(3, bytes.count) {
            if String(validating: bytes.dropLast(cut), as: UTF8.self) != nil { return true }
        }
        return false
    }

    static func tags(_ parsed: FrontMatter.Parsed) -> [String] {
        guard case .array(let elements)? = parsed.payload["tags"] else { return [] }
        return elements.compactMap { if case .string(let tag) = $0 { tag } else { nil } }
    }

    /// One edit of the block (made first when a Markdown note has none).
    private static func edit(_ note: [UInt8], name: ItemName, _ change: (inout FrontMatterBlock) throws(FrontMatterError) -> Void)
        throws(FrontMatterError) -> [UInt8]
    {
        var block: FrontMatterBlock
        if let found = try FrontMatterBlock(in: note) {
            block = found
        } else {
            guard FrontMatterBlock.markdownExtensions.contains(name.ext.lowercased()) else {
                throw FrontMatterError(message: "the note has no front matter to hold it")
            }
            block = try FrontMatterBlock.newYAML(before: note)
        }
        try change(&block)
        return block.note
    }

    /// The edited note must read back as `expected`: the fields meant, and every other key as it was.
    private static func verify(_ note: [UInt8], means expected: [String: PayloadValue]) throws(FrontMatterError) {
        let after = FrontMatter.parse(Array(note.prefix(FrontMatter.Limits.headBytes)))
        guard after.problems.isEmpty else { throw FrontMatterError(message: "the edit would not read back (\(after.problems[0]))") }
        // No tags and an empty list of them mean the same.
        func withoutEmptyTags(_ payload: [String: PayloadValue]) -> [String: PayloadValue] {
            var payload = payload
            if payload["tags"] == .array([]) { payload["tags"] = nil }
            return payload
        }
        guard withoutEmptyTags(after.payload) == withoutEmptyTags(expected) else { throw FrontMatterError(message: "the edit would not read back as meant; the note is left as it was") }
    }
}

/// A note's front-matter block, edited in place: its text, where it lies in
/// the note, and its syntax.
struct FrontMatterBlock {
    static let markdownExtensions: Set<String> = ["md", "markdown", "mdown", "mkd", "mdx"]

    enum Syntax { case yaml, toml }
    let syntax: Syntax
    /// The whole note, kept current with every edit.
    private(set) var note: [UInt8]
    /// Where the block's text starts (after the opening fence's line) and ends (at the closing fence).
    private var blockStart: Int
    private var blockEnd: Int
    /// The line break the note uses ("\r\n" or "\n").
    private let newline: [UInt8]

    private var text: String { String(decoding: note[blockStart..<blockEnd], as: UTF8.self) }

    /// The block at the top of `note`, nil when it opens with none. A
    /// fence no line closes within the head's bound (a block never closed,
    /// or longer than the reader reads) is an error, not "no block": a
    /// block made in front of it would leave the note's own block as body
    /// text, its keys lost to every reader.
    init?(in note: [UInt8]) throws(FrontMatterError) {
        var start = 0
        if note.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        let head = note[start..<min(note.count, start + FrontMatter.Limits.headBytes)]
        guard let firstBreak = head.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let fence = Array(head[start..<firstBreak]).trimmingLineEnd()
        switch fence {
        case Array("---".utf8): syntax = .yaml
        case Array("+++".utf8): syntax = .toml
        default: return nil
        }
        newline = firstBreak > start && note[firstBreak - 1] == UInt8(ascii: "\r") ? [13, 10] : [10]
        let closers: [[UInt8]] = syntax == .yaml ? [Array("---".utf8), Array("...".utf8)] : [Array("+++".utf8)]
        var lineStart = firstBreak + 1
        while lineStart <= head.endIndex {
            let lineEnd = head[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? head.endIndex
            if closers.contains(Array(note[lineStart..<lineEnd]).trimmingLineEnd()) {
                self.note = note
                blockStart = firstBreak + 1
                blockEnd = lineStart
                guard String(validating: note[blockStart..<blockEnd], as: UTF8.self) != nil else {
                    throw FrontMatterError(message: "the front matter is not UTF-8")
                }
                return
            }
            lineStart = lineEnd + 1
        }
        let fenceText = String(decoding: fence, as: UTF8.self)
        throw FrontMatterError(message: "the block that \(fenceText) opens is not closed within \(FrontMatter.Limits.headBytes / 1024) KiB")
    }

    /// An empty YAML block put in front of `body` (a Markdown note without one).
    static func newYAML(before body: [UInt8]) throws(FrontMatterError) -> FrontMatterBlock {
        let newline: [UInt8] = body.firstIndex(of: 10).map { $0 > 0 && body[$0 - 1] == 13 } == true ? [13, 10] : [10]
        let fence = Array("---".utf8) + newline
        // A byte order mark stays first, where readers look for it (found
        // from outside: put after the block, the note's heading no longer
        // read as one, and the edit was refused).
        let mark: [UInt8] = body.starts(with: [0xEF, 0xBB, 0xBF]) ? [0xEF, 0xBB, 0xBF] : []
        guard let block = try FrontMatterBlock(in: mark + fence + fence + body.dropFirst(mark.count)) else {
            throw FrontMatterError(message: "no front matter could be made")
        }
        return block
    }

    /// Replaces `range` of the block's text (byte offsets into it) with `replacement`.
    private mutating func replace(_ range: Range<Int>, with replacement: String) {
        let bytes = Array(replacement.utf8).replacingNewlines(with: newline)
        note.replaceSubrange((blockStart + range.lowerBound)..<(blockStart + range.upperBound), with: bytes)
        blockEnd += bytes.count - range.count
    }

    private var textBytes: ArraySlice<UInt8> { note[blockStart..<blockEnd] }

    /// The offset (in the block) where the line holding `offset` starts, and where the next one starts.
    private func line(around offset: Int) -> (start: Int, next: Int) {
        let bytes = textBytes
        let absolute = blockStart + offset
        let start = bytes[..<absolute].lastIndex(of: 10).map { $0 + 1 } ?? blockStart
        let next = bytes[absolute...].firstIndex(of: 10).map { $0 + 1 } ?? blockEnd
        return (start - blockStart, next - blockStart)
    }

    /// Appends a line at the end of the block (YAML) or the start (TOML: later keys may sit in a table).
    private mutating func insertLine(_ line: String) {
        if syntax == .toml {
            // After the top-level keys, before any `[table]` (found from
            // outside: a new key went above the note's title).
            let end = TOMLBlockLayout(text).topLevelEnd
            let needsBreak = end > 0 && note[blockStart + end - 1] != 10
            replace(end..<end, with: (needsBreak ? "\n" : "") + line + "\n")
            return
        }
        let count = blockEnd - blockStart
        let needsBreak = count > 0 && note[blockEnd - 1] != 10
        replace(count..<count, with: (needsBreak ? "\n" : "") + line + "\n")
    }

    // MARK: Edits

    /// Tags `old` made `new`: a string of tags is written once, whole (its
    /// separator is its own); a list loses and gains elements one by one.
    mutating func replaceTags(_ old: [String], with new: [String]) throws(FrontMatterError) {
        if syntax == .yaml, case .scalar(let scalar)? = try YAMLBlockLayout(text).entry("tags")?.value,
           !(scalar.text.isEmpty || scalar.text == "~" || scalar.text == "null") {
            return try rewrite(scalar, tags: new, original: scalar.text)
        }
        if try renameInPlace(old, to: new) { return }
        for tag in old where !new.contains(tag) { try removeTag(tag) }
        for tag in new where !old.contains(tag) { try addTag(tag) }
    }

    /// A rename (as many tags, some changed): each changed tag rewritten
    /// where it stands, its neighbours, order and comments as they were.
    /// Removing and appending moved it to the end, which the check after
    /// refused for a one-line list (found from outside: `mv tag/p tag/pp`
    /// failed on `[p, q]`). False when the list is not one it can do this in.
    private mutating func renameInPlace(_ old: [String], to new: [String]) throws(FrontMatterError) -> Bool {
        guard old.count == new.count else { return false }
        let elements: [YAMLBlockLayout.Scalar]
        let render: (String) -> String
        switch syntax {
        case .yaml:
            guard case .list(let style, _, let list)? = try YAMLBlockLayout(text).entry("tags")?.value,
                  list.map({ FrontMatterTagString.normalized($0.text) }) == old else { return false }
            elements = list
            if case .flow = style { render = { YAMLText.render($0, inFlow: true) } } else { render = { YAMLText.render($0) } }
        case .toml:
            guard let array = TOMLBlockLayout(text).array("tags"), array.elements.map(\.text) == old else { return false }
            elements = array.elements
            render = { TOMLText.render($0) }
        }
        // From the last: each replacement leaves the earlier ranges where they were.
        for (element, (was, now)) in zip(elements, zip(old, new)).reversed() where was != now {
            replace(element.range, with: render(now))
        }
        return true
    }

    mutating func addTag(_ tag: String) throws(FrontMatterError) {
        switch syntax {
        case .yaml:
            let layout = try YAMLBlockLayout(text)
            guard let entry = layout.entry("tags") else { return insertLine("tags:\n  - " + YAMLText.render(tag)) }
            switch entry.value {
            case .list(.flow, let range, let elements):
                if let last = elements.last {
                    if appendOnALineOfItsOwn(after: last, in: range, YAMLText.render(tag, inFlow: true)) { return }
                    replace(last.range.upperBound..<last.range.upperBound, with: ", " + YAMLText.render(tag, inFlow: true))
                } else {
                    // `[]`: inside the brackets.
                    replace((range.upperBound - 1)..<(range.upperBound - 1), with: YAMLText.render(tag, inFlow: true))
                }
            case .list(_, _, let elements):
                guard let last = elements.last else { throw FrontMatterError(message: "an empty list of tags") }
                let (lineStart, _) = line(around: last.range.lowerBound)
                let lastLine = line(around: last.range.upperBound)
                let prefix = String(decoding: textBytes.dropFirst(lineStart).prefix(last.range.lowerBound - lineStart), as: UTF8.self)
                guard prefix.allSatisfy({ $0 == " " || $0 == "-" }), prefix.contains("-") else {
                    throw FrontMatterError(message: "tags in a list this edit cannot extend")
                }
                replace(lastLine.next..<lastLine.next, with: prefix + YAMLText.render(tag) + (lastLine.next == blockEnd - blockStart && note[blockEnd - 1] != 10 ? "" : "\n"))
            case .scalar(let scalar) where scalar.text.isEmpty || scalar.text == "~" || scalar.text == "null":
                // `tags:` with nothing: a flow list in its place.
                let replacement = "[" + YAMLText.render(tag, inFlow: true) + "]"
                replace(scalar.range, with: scalar.range.isEmpty ? " " + replacement : replacement)
            case .scalar(let scalar):
                try rewrite(scalar, tags: FrontMatterTagString.words(scalar.text) + [tag], original: scalar.text)
            case .other:
                throw FrontMatterError(message: "the tags are not a list this edit can change")
            }
        case .toml:
            let layout = TOMLBlockLayout(text)
            guard let array = layout.array("tags") else {
                guard layout.hasKey("tags") == false else { throw Self.notATOMLArray }
                return insertLine("tags = [" + TOMLText.render(tag) + "]")
            }
            if let last = array.elements.last {
                if appendOnALineOfItsOwn(after: last, in: array.open..<(array.close + 1), TOMLText.render(tag)) { return }
                replace(last.range.upperBound..<last.range.upperBound, with: ", " + TOMLText.render(tag))
            } else {
                replace(array.close..<array.close, with: TOMLText.render(tag))
            }
        }
    }

    mutating func removeTag(_ tag: String) throws(FrontMatterError) {
        switch syntax {
        case .yaml:
            let layout = try YAMLBlockLayout(text)
            guard let entry = layout.entry("tags") else { return }
            switch entry.value {
            case .list(.flow, let range, let elements):
                try removeFlowElement(tag, elements: elements, in: range, matches: { FrontMatterTagString.normalized($0.text) == tag })
            case .list(_, _, let elements):
                guard let element = elements.first(where: { FrontMatterTagString.normalized($0.text) == tag }) else {
                    throw FrontMatterError(message: "tag '\(tag)' is not one element of the list")
                }
                let first = line(around: element.range.lowerBound), last = line(around: max(element.range.lowerBound, element.range.upperBound - 1))
                let before = String(decoding: textBytes.dropFirst(first.start).prefix(element.range.lowerBound - first.start), as: UTF8.self)
                guard before.allSatisfy({ $0 == " " || $0 == "-" }) else { throw FrontMatterError(message: "tags in a list this edit cannot shorten") }
                if elements.count == 1 {
                    // The last one: the key keeps an empty list, on its own line.
                    let keyLine = line(around: entry.keyRange.lowerBound)
                    replace(keyLine.start..<last.next, with: "tags: []\n")
                } else {
                    replace(first.start..<last.next, with: "")
                }
            case .scalar(let scalar):
                let words = FrontMatterTagString.words(scalar.text)
                guard words.contains(tag) else { return }
                try rewrite(scalar, tags: words.filter { $0 != tag }, original: scalar.text)
            case .other:
                throw FrontMatterError(message: "the tags are not a list this edit can change")
            }
        case .toml:
            let layout = TOMLBlockLayout(text)
            guard let array = layout.array("tags") else {
                if layout.hasKey("tags") { throw Self.notATOMLArray }
                return
            }
            try removeFlowElement(tag, elements: array.elements, in: array.open..<(array.close + 1), matches: { $0.text == tag })
        }
    }

    /// A list over lines, its last element on a line of its own (Hugo's
    /// `tags = [`, one tag a line): the new one goes on a line of its own
    /// below, as indented, with a comma after it if the last had one (found
    /// from outside: it was put on the last element's line). False for any
    /// other list, which takes `, new` after its last element.
    private mutating func appendOnALineOfItsOwn(after last: YAMLBlockLayout.Scalar, in range: Range<Int>, _ rendered: String) -> Bool {
        let own = line(around: last.range.lowerBound)
        guard own.start > range.lowerBound, own.next <= range.upperBound else { return false }
        let indent = Array(textBytes.dropFirst(own.start).prefix(last.range.lowerBound - own.start))
        guard !indent.isEmpty, indent.allSatisfy({ $0 == 32 || $0 == 9 }) else { return false }
        let after = Array(textBytes.dropFirst(last.range.upperBound).prefix(own.next - last.range.upperBound))
        let blank: (UInt8) -> Bool = { $0 == 32 || $0 == 9 }
        let afterBlanks = after.drop(while: blank)
        let comma = afterBlanks.first == UInt8(ascii: ",")
        let rest = (comma ? afterBlanks.dropFirst() : afterBlanks).drop(while: blank)
        guard rest.first.map({ $0 == UInt8(ascii: "#") || $0 == 10 || $0 == 13 }) ?? true else { return false }
        // (`replace` writes the note's own line ends.)
        let newLine = String(decoding: indent, as: UTF8.self) + rendered + (comma ? "," : "") + "\n"
        // The last one gets a comma first when it had none: `"b"` then `  "new"` below is no list.
        if !comma { replace(last.range.upperBound..<last.range.upperBound, with: ",") }
        replace((own.next + (comma ? 0 : 1))..<(own.next + (comma ? 0 : 1)), with: newLine)
        return true
    }

    /// In TOML, only an array of strings is written to: one string of tags
    /// (`tags = "a, b"`) or anything else is said as such, not as "no list".
    private static let notATOMLArray = FrontMatterError(message: "the tags are not a TOML array of strings (tags = [\"a\", \"b\"]), which is all this edit writes")

    /// Removes one element of a list `[a, b, c]` with the separator that goes with it.
    private mutating func removeFlowElement(_ tag: String, elements: [YAMLBlockLayout.Scalar], in range: Range<Int>,
                                            matches: (YAMLBlockLayout.Scalar) -> Bool) throws(FrontMatterError) {
        guard let index = elements.firstIndex(where: matches) else { throw FrontMatterError(message: "tag '\(tag)' is not one element of the list") }
        // An element on a line of its own (a list over lines): that line goes, its comment with it.
        let element = elements[index].range, own = line(around: element.lowerBound)
        let before = textBytes.dropFirst(own.start).prefix(element.lowerBound - own.start)
        let after = Array(textBytes.dropFirst(element.upperBound).prefix(max(0, own.next - element.upperBound)))
        let blank: (UInt8) -> Bool = { $0 == 32 || $0 == 9 }
        let afterBlanks = after.drop(while: blank)
        let afterComma = afterBlanks.first == UInt8(ascii: ",") ? afterBlanks.dropFirst() : afterBlanks
        let rest = afterComma.drop(while: blank)
        if own.next <= range.upperBound, own.start > range.lowerBound, before.allSatisfy(blank),
           rest.first.map({ $0 == UInt8(ascii: "#") || $0 == 10 || $0 == 13 }) ?? true {
            return replace(own.start..<own.next, with: "")
        }
        var cut: Range<Int>
        if elements.count == 1 {
            cut = elements[0].range
            // Its trailing comma too (`[\n  "a",\n]`): a list of none that starts with one is no TOML.
            let rest = Array(textBytes.dropFirst(cut.upperBound).prefix(range.upperBound - cut.upperBound))
            if let offset = rest.firstIndex(where: { $0 != 32 && $0 != 9 }), rest[offset] == UInt8(ascii: ",") {
                cut = cut.lowerBound..<(cut.upperBound + offset + 1)
            }
        } else if index > 0 {
            cut = elements[index - 1].range.upperBound..<elements[index].range.upperBound  // `, b`
        } else {
            cut = elements[0].range.lowerBound..<elements[1].range.lowerBound  // `a, `
        }
        replace(cut, with: "")
    }

    /// A string of tags (`tags: a, b`) written anew in its own style: the
    /// separator, `#` marks and quoting it had.
    private mutating func rewrite(_ scalar: YAMLBlockLayout.Scalar, tags: [String], original: String) throws(FrontMatterError) {
        guard scalar.style == .plain || scalar.style == .singleQuoted || scalar.style == .doubleQuoted else {
            throw FrontMatterError(message: "tags in a block of text this edit cannot change")
        }
        // `tags: 42` (or `yes`, a date) is no text of tags to the reader, which
        // ignores it: written over, the value was lost (found from outside).
        if scalar.style == .plain {
            let value = YAMLScalar.resolve(scalar.text)
            guard case .string = value else {
                throw FrontMatterError(message: "the tags are a \(value.typeName), not a list or text this edit can change")
            }
        }
        let hashes = original.split(whereSeparator: { $0 == "," || $0 == " " }).allSatisfy { $0.hasPrefix("#") } && !original.isEmpty
        // Its own separator; one tag alone says none, and a comma reads either way.
        let separator = original.contains(",") || FrontMatterTagString.words(original).count < 2 ? ", " : " "
        let joined = tags.map { hashes ? "#" + $0 : $0 }.joined(separator: separator)
        replace(scalar.range, with: YAMLText.render(joined, style: hashes && scalar.style == .plain ? .doubleQuoted : scalar.style))
    }

    mutating func set(_ key: String, to value: PayloadValue) throws(FrontMatterError) {
        switch syntax {
        case .yaml:
            let rendered = try YAMLText.render(value)
            let layout = try YAMLBlockLayout(text)
            guard let entry = layout.entry(key) else { return insertLine(YAMLText.render(key) + ": " + rendered) }
            guard case .scalar(let scalar) = entry.value, scalar.style != .literal, scalar.style != .folded else {
                throw FrontMatterError(message: "'\(key)' is not a value this edit can change")
            }
            replace(scalar.range, with: scalar.range.isEmpty ? " " + rendered : rendered)
        case .toml:
            let rendered = try TOMLText.render(value)
            let layout = TOMLBlockLayout(text)
            guard let range = layout.scalar(key) else {
                if layout.hasKey(key) { throw FrontMatterError(message: "'\(key)' is not a value this edit can change") }
                // A key that is no bare key (`ünï`, `a b`) is written quoted (found from outside:
                // it was written bare, and the edit refused as TOML that does not read back).
                let bare = !key.isEmpty && key.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 95 }
                return insertLine((bare ? key : try TOMLText.render(.string(key))) + " = " + rendered)
            }
            replace(range, with: rendered)
        }
    }
}

/// Tags in one string, as `FrontMatter` reads them.
enum FrontMatterTagString {
    static func words(_ text: String) -> [String] {
        let separators: Set<Character> = text.contains(",") ? [","] : [" ", "\t"]
        return text.split(whereSeparator: { separators.contains($0) }).map { normalized(String($0)) }.filter { !$0.isEmpty }
    }

    static func normalized(_ tag: String) -> String {
        let trimmed = tag.trimming(" \t")
        return trimmed.hasPrefix("#") ? String(trimmed.dropFirst()) : trimmed
    }
}

extension Array where Element == UInt8 {
    /// The line without its `\r` and trailing blanks.
    func trimmingLineEnd() -> [UInt8] {
        var line = self[...]
        while let last = line.last, last == 13 || last == 32 || last == 9 { line = line.dropLast() }
        return Array(line)
    }

    /// `\n` written as the note's own line break.
    func replacingNewlines(with newline: [UInt8]) -> [UInt8] {
        guard newline != [10] else { return self }
        return flatMap { $0 == 10 ? newline : [$0] }
    }
}
