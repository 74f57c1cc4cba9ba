#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Why an edit could not be made: an errno for the mount to answer with,
/// and a sentence for the log or the command's one line.
package struct EditError: Error, Sendable, CustomStringConvertible {
    package let errno: Int32
    package let message: String
    /// The item's lock was held longer than the allowed wait (errno EBUSY).
    package let lockTimeout: ItemLock.Timeout?
    package init(_ errno: Int32, _ message: String, lockTimeout: ItemLock.Timeout? = nil) {
        self.errno = errno
        self.message = message
        self.lockTimeout = lockTimeout
    }
    package var description: String { message }
}

/// A payload being edited, in its own format: the edits are made on its
/// value at key paths (dictionary keys from the top), and `bytes` is the file
/// to write. XML and JSON payloads are edited as text — only the text of the
/// values that change is replaced, inserted or removed, so every other byte
/// (comments, order, indentation) stays and a git diff is as small as the
/// edit; a binary plist is written anew from its values.
protocol PayloadDocument {
    var bytes: [UInt8] { get }
    var value: PayloadValue { get }
    /// Sets the value at `path`, making the dictionaries on the way if missing.
    mutating func set(_ path: [String], to value: PayloadValue) throws(EditError)
    mutating func remove(_ path: [String]) throws(EditError)
    /// Appends to the array at `path` (made if missing).
    mutating func append(_ element: PayloadValue, toArrayAt path: [String]) throws(EditError)
    /// Replaces each element `change` maps to a value, removes each it maps to nil, keeps the rest.
    mutating func changeElements(ofArrayAt path: [String], _ change: (PayloadValue) -> PayloadValue??) throws(EditError)
}

enum PayloadDocuments {
    /// The document for a payload file's bytes, by format (as the scan decides it).
    static func open(_ bytes: [UInt8], fileName: String) throws(EditError) -> any PayloadDocument {
        if fileName.hasSuffix(".json") { return try TextPayloadDocument(bytes, format: .json) }
        if bytes.starts(with: Array("bplist".utf8)) { return try BinaryPayloadDocument(bytes) }
        return try TextPayloadDocument(bytes, format: .xml)
    }

    /// A new `payload.plist` for a bundle that has none.
    static let emptyXMLPlist = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        </dict>
        </plist>

        """.utf8)
}

/// An XML plist or JSON payload edited as text (see `PayloadDocument`).
struct TextPayloadDocument: PayloadDocument {
    enum Format { case xml, json }

    private(set) var bytes: [UInt8]
    private(set) var value: PayloadValue
    private var layout: PayloadLayout
    let format: Format

    init(_ bytes: [UInt8], format: Format) throws(EditError) {
        self.format = format
        self.bytes = bytes
        (value, layout) = try Self.read(bytes, format: format)
    }

    private static func read(_ bytes: [UInt8], format: Format) throws(EditError) -> (PayloadValue, PayloadLayout) {
        let value: PayloadValue
        do {
            value = format == .json ? try JSONParser.parse(bytes) : try XMLPropertyListParser.parse(bytes)
        } catch {
            throw EditError(EROFS, "the payload does not parse (\(error)); it is left as it is")
        }
        guard case .dictionary = value else { throw EditError(EROFS, "the payload's top level is not a dictionary") }
        guard let layout = format == .json ? JSONLayoutReader.read(bytes) : XMLPlistLayoutReader.read(bytes) else {
            throw EditError(EROFS, "the payload's layout cannot be read for editing")
        }
        return (value, layout)
    }

    /// Replaces `range` of the text with `text`, then reads the result again.
    private mutating func replace(_ range: Range<Int>, with text: [UInt8]) throws(EditError) {
        var edited = bytes
        edited.replaceSubrange(range, with: text)
        (value, layout) = try Self.read(edited, format: format)
        bytes = edited
    }

    private func render(_ value: PayloadValue, indent: [UInt8]) throws(EditError) -> [UInt8] {
        switch format {
        case .xml: return PayloadText.xml(value, indent: indent)
        case .json:
            guard let text = PayloadText.json(value) else { throw EditError(EINVAL, "\(value) cannot be written in JSON") }
            return text
        }
    }

    mutating func set(_ path: [String], to newValue: PayloadValue) throws(EditError) {
        if let member = layout.member(at: path) {
            let indent = layout.indentation(ofLineAt: member.range.lowerBound)
            return try replace(member.value.range, with: try render(newValue, indent: indent))
        }
        // Make the missing part of the path: the deepest dictionary there is gets one member.
        var existing = path
        var nested = newValue
        while existing.count > 1, layout.node(at: Array(existing.dropLast())) == nil {
            nested = .dictionary([existing.removeLast(): nested])
        }
        guard case .dictionary(let range, let members, let isEmptyForm)? = layout.node(at: Array(existing.dropLast())) else {
            throw EditError(EINVAL, "payload.\(path.joined(separator: ".")): a value on the way is not a dictionary")
        }
        try insert(key: existing.last!, value: nested, into: range, members: members.map(\.range), isEmptyForm: isEmptyForm)
    }

    /// Inserts a member into a dictionary: after its last one, on a line of
    /// its own where the dictionary is written over several lines (JSON:
    /// first, so that no other line needs a new comma).
    private mutating func insert(key: String, value newValue: PayloadValue, into range: Range<Int>, members: [Range<Int>],
                                 isEmptyForm: Bool) throws(EditError)
    {
        switch format {
        case .xml:
            let keyText = Array("<key>".utf8) + PayloadText.xmlEscaped(key) + Array("</key>".utf8)
            try insertElement(keyText, newValue, into: range, after: members.last, isEmptyForm: isEmptyForm, container: "dict")
        case .json:
            let member = Array(JSON.string(key).utf8) + Array(": ".utf8) + (try render(newValue, indent: []))
            try insertJSON(member, into: range, first: members.first, last: members.last, isEmptyForm: isEmptyForm, brackets: ("{", "}"))
        }
    }

    /// XML: `head` (a `<key>…</key>`, or nothing for an array element) and the value after the last child.
    private mutating func insertElement(_ head: [UInt8], _ newValue: PayloadValue, into range: Range<Int>, after last: Range<Int>?,
                                        isEmptyForm: Bool, container: String) throws(EditError)
    {
        let outer = layout.indentation(ofLineAt: range.lowerBound)
        if let last {
            let indent = layout.indentation(ofLineAt: last.lowerBound)
            let multiLine = layout.hasLineBreak(from: range.lowerBound, to: last.lowerBound)
            let separator: [UInt8] = multiLine ? [0x0A] + indent : []
            let text = separator + head + (head.isEmpty ? [] : separator) + (try render(newValue, indent: indent))
            return try replace(last.upperBound..<last.upperBound, with: text)
        }
        let inner = outer + [0x09]
        let body = [0x0A] + inner + head + (head.isEmpty ? [] : [0x0A] + inner) + (try render(newValue, indent: inner)) + [0x0A] + outer
        if isEmptyForm {
            return try replace(range, with: Array("<\(container)>".utf8) + body + Array("</\(container)>".utf8))
        }
        // `<dict></dict>`, or with only white space inside: the body goes in place of that space.
        guard let open = layout.bytes[range].firstIndex(of: UInt8(ascii: ">")) else { throw EditError(EIO, "unreadable \(container)") }
        let closing = layout.bytes[..<range.upperBound].lastIndex(of: UInt8(ascii: "<")) ?? range.upperBound
        try replace((open + 1)..<closing, with: body)
    }

    /// JSON: `text` (a member or an element) into the container. In a
    /// container laid out over lines it goes first, not last: the last has
    /// no comma, so a line there would change two lines of the file (the
    /// diff of one tag added must be one line). On one line it goes last,
    /// where a reader expects a new tag (`["a", "b", "new"]`), in the
    /// container's own separator (`","` or `", "`).
    private mutating func insertJSON(_ text: [UInt8], into range: Range<Int>, first: Range<Int>?, last: Range<Int>?, isEmptyForm: Bool,
                                     brackets: (Character, Character)) throws(EditError)
    {
        guard let first, let last else {
            return try replace(range, with: Array("\(brackets.0)".utf8) + text + Array("\(brackets.1)".utf8))
        }
        let multiLine = layout.hasLineBreak(from: range.lowerBound, to: first.lowerBound)
        if !multiLine {
            // The separator the container uses after its first child (a comma, then a space or none).
            let spaced = first != last && layout.bytes[first.upperBound..<last.lowerBound].contains(UInt8(ascii: " "))
                || first == last
            return try replace(last.upperBound..<last.upperBound, with: [UInt8(ascii: ",")] + (spaced ? [0x20] : []) + text)
        }
        let separator: [UInt8] = [0x0A] + layout.indentation(ofLineAt: first.lowerBound)
        try replace(first.lowerBound..<first.lowerBound, with: text + [UInt8(ascii: ",")] + separator)
    }

    mutating func remove(_ path: [String]) throws(EditError) {
        guard let member = layout.member(at: path),
              case .dictionary(let range, let members, _)? = layout.node(at: Array(path.dropLast())),
              let index = members.lastIndex(where: { $0.range == member.range }) else { return }
        try removeChild(at: index, of: members.map(\.range), in: range)
    }

    /// Removes child `index` of a container with the text that belongs to it.
    private mutating func removeChild(at index: Int, of children: [Range<Int>], in container: Range<Int>) throws(EditError) {
        let child = children[index]
        switch format {
        case .xml:
            // The last child: the container in the empty form Apple's writer
            // uses (`<array/>`), so that a tag added and removed again leaves
            // the file as it was (found from outside: `<array>` and
            // `</array>` on two lines were left where `<array/>` had been).
            if children.count == 1, let name = Self.xmlContainerName(layout.bytes[container]) {
                return try replace(container, with: Array("<\(name)/>".utf8))
            }
            // The child and the white space before it (its line break and indentation).
            try replace(layout.startOfSpace(before: child.lowerBound)..<child.upperBound, with: [])
        case .json:
            if children.count == 1 {
                let open = layout.bytes[container.lowerBound]
                try replace(container, with: [open, open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")])
            } else if index + 1 < children.count {
                try replace(child.lowerBound..<children[index + 1].lowerBound, with: [])
            } else {
                try replace(children[index - 1].upperBound..<child.upperBound, with: [])
            }
        }
    }

    /// `array` or `dict` when `bytes` are that whole element, open and close tags included.
    private static func xmlContainerName(_ bytes: ArraySlice<UInt8>) -> String? {
        for name in ["array", "dict"] where bytes.starts(with: Array("<\(name)>".utf8)) && bytes.reversed().starts(with: Array("</\(name)>".utf8).reversed()) {
            return name
        }
        return nil
    }

    mutating func append(_ element: PayloadValue, toArrayAt path: [String]) throws(EditError) {
        guard let node = layout.node(at: path) else { return try set(path, to: .array([element])) }
        guard case .array(let range, let elements, let isEmptyForm) = node else {
            throw EditError(EINVAL, "payload.\(path.joined(separator: ".")) is not an array")
        }
        switch format {
        case .xml: try insertElement([], element, into: range, after: elements.last?.range, isEmptyForm: isEmptyForm, container: "array")
        case .json: try insertJSON(try render(element, indent: []), into: range, first: elements.first?.range, last: elements.last?.range,
                                   isEmptyForm: isEmptyForm,
                                   brackets: ("[", "]"))
        }
    }

    mutating func changeElements(ofArrayAt path: [String], _ change: (PayloadValue) -> PayloadValue??) throws(EditError) {
        // From the last element back: earlier ranges stay valid while later text changes.
        guard case .array(_, let elements, _)? = layout.node(at: path), case .array(let values)? = value.value(at: path) else { return }
        for index in elements.indices.reversed() {
            guard let outcome = change(values[index]) else { continue }
            guard case .array(let range, let current, _)? = layout.node(at: path) else { return }
            if let replacement = outcome {
                try replace(current[index].range, with: try render(replacement, indent: layout.indentation(ofLineAt: current[index].range.lowerBound)))
            } else {
                try removeChild(at: index, of: current.map(\.range), in: range)
            }
        }
    }
}

/// A binary plist payload: its values edited, then written anew (keys sorted,
/// so the same values always give the same bytes). Plists holding UIDs
/// (keyed archives) are refused: their UIDs would come back as integers.
struct BinaryPayloadDocument: PayloadDocument {
    private(set) var value: PayloadValue

    init(_ bytes: [UInt8]) throws(EditError) {
        guard !BinaryPropertyListParser.containsUIDs(bytes) else {
            throw EditError(EPERM, "the payload is a keyed archive (it holds UIDs); it is left as it is")
        }
        do {
            value = try BinaryPropertyListParser.parse(bytes)
        } catch {
            throw EditError(EROFS, "the payload does not parse (\(error)); it is left as it is")
        }
        guard case .dictionary = value else { throw EditError(EROFS, "the payload's top level is not a dictionary") }
    }

    var bytes: [UInt8] { BinaryPropertyListWriter.write(value) }

    mutating func set(_ path: [String], to newValue: PayloadValue) throws(EditError) {
        value = try value.setting(path[...], to: newValue)
    }

    mutating func remove(_ path: [String]) throws(EditError) {
        value = try value.setting(path[...], to: nil)
    }

    mutating func append(_ element: PayloadValue, toArrayAt path: [String]) throws(EditError) {
        switch value.value(at: path) {
        case nil: try set(path, to: .array([element]))
        case .array(let elements)?: try set(path, to: .array(elements + [element]))
        default: throw EditError(EINVAL, "payload.\(path.joined(separator: ".")) is not an array")
        }
    }

    mutating func changeElements(ofArrayAt path: [String], _ change: (PayloadValue) -> PayloadValue??) throws(EditError) {
        guard case .array(let elements)? = value.value(at: path) else { return }
        let changed = elements.compactMap { element -> PayloadValue? in
            guard let outcome = change(element) else { return element }
            return outcome
        }
        try set(path, to: .array(changed))
    }
}

extension PayloadValue {
    /// The value at a path of keys already split.
    func value(at path: [String]) -> PayloadValue? {
        value(atKeyPath: path.map { Substring($0) })
    }

    /// The value with `path` set to `newValue` (nil: removed), dictionaries made on the way.
    func setting(_ path: ArraySlice<String>, to newValue: PayloadValue?) throws(EditError) -> PayloadValue {
        guard let key = path.first else { return newValue ?? self }
        guard case .dictionary(var dictionary) = self else { throw EditError(EINVAL, "a value on the key path is not a dictionary") }
        if path.count == 1 {
            dictionary[key] = newValue
        } else {
            let inner = dictionary[key] ?? .dictionary([:])
            dictionary[key] = try inner.setting(path.dropFirst(), to: newValue)
        }
        return .dictionary(dictionary)
    }
}
