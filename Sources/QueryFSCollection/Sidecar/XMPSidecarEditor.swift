import CExpat
import QueryFSEngine

/// Writes a file's tags back into its XMP sidecar, as small as the edit: an
/// `<rdf:li>` added to (or cut from) the keyword lists already there —
/// `dc:subject`, and for a nested tag `a/b` the hierarchical list the tool
/// keeps (`lr:hierarchicalSubject` as `a|b`, `digiKam:TagsList` as `a/b`) —
/// with the neighbouring element's indentation; a `dc:subject` made where
/// there is none; a sidecar made (darktable's `X.jpg.xmp`) where the file
/// has none. Every other byte stays.
///
/// Where each element lies comes from Expat's own byte offsets. The result
/// is read again by `XMPSidecar`, the reader the scan uses, and must hold
/// exactly the tags meant; otherwise nothing is written (`FrontMatterError`).
enum XMPSidecarEditor {
    static func settingTags(_ tags: [String], in sidecar: [UInt8]?) throws(FrontMatterError) -> [UInt8] {
        var bytes = sidecar ?? Array(newSidecar.utf8)
        let old = try Self.tags(bytes)
        for tag in old where !tags.contains(tag) { bytes = try remove(tag, from: bytes) }
        for tag in tags where !old.contains(tag) { bytes = try add(tag, to: bytes) }
        // The lists are read one after the other (keywords, then hierarchies): the same tags, whatever their order.
        let after = try Self.tags(bytes)
        guard Set(after) == Set(tags), after.count == Set(tags).count else {
            throw FrontMatterError(message: "the sidecar would not read back with these tags (\(after.sorted()) for \(tags.sorted())); left as it was")
        }
        return bytes
    }

    static func tags(_ bytes: [UInt8]) throws(FrontMatterError) -> [String] {
        guard case .dictionary(let payload) = try XMPSidecar.read(bytes), case .array(let tags)? = payload["tags"] else { return [] }
        return tags.compactMap { if case .string(let tag) = $0 { tag } else { nil } }
    }

    /// A sidecar as darktable starts one: a packet with an empty description.
    static let newSidecar = """
        <?xml version="1.0" encoding="UTF-8"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/">
          </rdf:Description>
         </rdf:RDF>
        </x:xmpmeta>

        """

    private static func add(_ tag: String, to bytes: [UInt8]) throws(FrontMatterError) -> [UInt8] {
        var layout = try XMPLayout(bytes)
        var bytes = bytes
        // An empty list written `<rdf:Bag/>` gets its end tag first: an element
        // inserted at a self-closed tag landed outside it, where no XMP reader looks.
        if let empty = layout.selfClosedContainers.first {
            let tag = bytes[empty]
            guard let nameEnd = tag.dropFirst().firstIndex(where: { $0 == 47 || $0 == 62 || $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) else {
                throw FrontMatterError(message: "an empty list this edit cannot open")
            }
            let name = Array(tag[(tag.startIndex + 1)..<nameEnd])
            var opened = Array(tag)
            guard let slash = opened.lastIndex(of: 47) else { throw FrontMatterError(message: "an empty list this edit cannot open") }
            opened.replaceSubrange(slash..., with: Array("></".utf8) + name + [62])
            bytes.replaceSubrange(empty, with: opened)
            layout = try XMPLayout(bytes)
        }
        let nested = tag.contains("/")
        // Latest place first, so earlier offsets stay true.
        var insertions: [(Int, String)] = []
        if nested, let list = layout.lists["lr"] { insertions.append(list.insertion(tag.split(separator: "/").joined(separator: "|"), in: bytes, rdf: layout.rdfPrefix)) }
        if nested, let list = layout.lists["digiKam"] { insertions.append(list.insertion(tag, in: bytes, rdf: layout.rdfPrefix)) }
        if insertions.isEmpty || !nested {
            if let list = layout.lists["tags"] {
                insertions.append(list.insertion(tag, in: bytes, rdf: layout.rdfPrefix))
            } else {
                guard let end = layout.descriptionEnd else { throw FrontMatterError(message: "no rdf:Description to hold the tags") }
                // The dc prefix the description already has in scope (declared on it or above: no second xmlns:dc).
                let dc = layout.dcPrefix.map { ($0, "") } ?? ("dc", " xmlns:dc=\"http://purl.org/dc/elements/1.1/\"")
                let rdf = layout.rdfPrefix
                let subject = "<\(dc.0):subject\(dc.1)><\(rdf):Bag><\(rdf):li>\(escaped(tag))</\(rdf):li></\(rdf):Bag></\(dc.0):subject>"
                // On a line of its own above the end tag, one step further in, the end tag's line untouched.
                var lineStart = end
                while lineStart > 0, bytes[lineStart - 1] == 32 || bytes[lineStart - 1] == 9 { lineStart -= 1 }
                if lineStart > 0, bytes[lineStart - 1] == 10 {
                    let indent = String(decoding: bytes[lineStart..<end], as: UTF8.self)
                    let newline = lineStart >= 2 && bytes[lineStart - 2] == 13 ? "\r\n" : "\n"
                    insertions.append((lineStart, indent + " " + subject + newline))
                } else {
                    insertions.append((end, subject))
                }
            }
        }
        for (offset, text) in insertions.sorted(by: { $0.0 > $1.0 }) { bytes.insert(contentsOf: Array(text.utf8), at: offset) }
        return bytes
    }

    private static func remove(_ tag: String, from bytes: [UInt8]) throws(FrontMatterError) -> [UInt8] {
        let layout = try XMPLayout(bytes)
        var cuts: [Range<Int>] = []
        for (key, list) in layout.lists {
            for element in list.elements {
                let meaning = key == "lr" ? element.text.split(separator: "|").joined(separator: "/") : element.text
                if meaning == tag { cuts.append(lineAware(element.range, in: bytes)) }
            }
        }
        var bytes = bytes
        for cut in cuts.sorted(by: { $0.lowerBound > $1.lowerBound }) { bytes.removeSubrange(cut) }
        return bytes
    }

    /// An element's range, with the blanks before it back to its line's
    /// start when nothing else shares the line (the line goes whole).
    private static func lineAware(_ range: Range<Int>, in bytes: [UInt8]) -> Range<Int> {
        var start = range.lowerBound
        while start > 0, bytes[start - 1] == 32 || bytes[start - 1] == 9 { start -= 1 }
        let lineStarts = start == 0 || bytes[start - 1] == 10
        var end = range.upperBound
        while end < bytes.count, bytes[end] == 32 || bytes[end] == 9 || bytes[end] == 13 { end += 1 }
        if lineStarts, end < bytes.count, bytes[end] == 10 { return start..<(end + 1) }
        return range
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// Where an XMP document's keyword lists and description lie (byte offsets), from Expat.
struct XMPLayout {
    struct List {
        /// Where the list's container (`rdf:Bag`, `rdf:Seq`) closes: new elements go before it.
        var close: Int
        var elements: [(range: Range<Int>, text: String)]

        /// Where and what to insert for `text`: after the last element, on a
        /// line of its own with that element's indentation (or in the container when empty).
        func insertion(_ text: String, in bytes: [UInt8], rdf: String) -> (Int, String) {
            let element = "<\(rdf):li>\(XMPSidecarEditor.escaped(text))</\(rdf):li>"
            guard let last = elements.last else { return (close, element) }
            var start = last.range.lowerBound
            while start > 0, bytes[start - 1] == 32 || bytes[start - 1] == 9 { start -= 1 }
            let indentation = String(decoding: bytes[start..<last.range.lowerBound], as: UTF8.self)
            let ownLine = start == 0 || bytes[start - 1] == 10
            // The file's own line ending (CRLF stayed CRLF only on the lines already there).
            let newline = start >= 2 && bytes[start - 1] == 10 && bytes[start - 2] == 13 ? "\r\n" : "\n"
            return (last.range.upperBound, (ownLine ? newline + indentation : "") + element)
        }
    }

    /// By the key `XMPSidecar` reads them as: "tags" (dc:subject), "lr", "digiKam".
    var lists: [String: List] = [:]
    /// Where the first rdf:Description closes (its end tag), nil when it is self-closed.
    var descriptionEnd: Int?
    var rdfPrefix = "rdf"
    var dcPrefix: String?
    /// Keyword lists' containers written as one empty tag (`<rdf:Bag/>`): their byte ranges.
    var selfClosedContainers: [Range<Int>] = []

    init(_ bytes: [UInt8]) throws(FrontMatterError) {
        guard let parser = XML_ParserCreateNS(nil, 0x20) else { throw FrontMatterError(message: "cannot start the XML parser") }
        defer { XML_ParserFree(parser) }
        XML_SetReturnNSTriplet(parser, 1)  // "namespace local prefix": the document's own prefixes
        let state = XMPLayoutState(parser: parser)
        XML_SetUserData(parser, Unmanaged.passUnretained(state).toOpaque())
        XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER)
        XML_SetStartDoctypeDeclHandler(parser) { data, _, _, _, _ in
            let state = Unmanaged<XMPLayoutState>.fromOpaque(data!).takeUnretainedValue()
            state.refused = true
            XML_StopParser(state.parser, 0)
        }
        XML_SetNamespaceDeclHandler(parser, { data, prefix, uri in
            Unmanaged<XMPLayoutState>.fromOpaque(data!).takeUnretainedValue().declared(prefix: prefix, uri: uri)
        }, nil)
        XML_SetElementHandler(parser, { data, name, _ in
            Unmanaged<XMPLayoutState>.fromOpaque(data!).takeUnretainedValue().start(name!)
        }, { data, name in
            Unmanaged<XMPLayoutState>.fromOpaque(data!).takeUnretainedValue().end(name!)
        })
        XML_SetCharacterDataHandler(parser) { data, text, length in
            Unmanaged<XMPLayoutState>.fromOpaque(data!).takeUnretainedValue().characters(text!, Int(length))
        }
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { XML_Parse(parser, $0.baseAddress, Int32(buffer.count), 1) }
        }
        guard !state.refused, status == XML_STATUS_OK else { throw FrontMatterError(message: "the sidecar is not XML this edit can change") }
        lists = state.lists
        selfClosedContainers = state.selfClosedContainers
        descriptionEnd = state.descriptionEnd
        rdfPrefix = state.rdfPrefix
        dcPrefix = state.dcPrefix
    }
}

/// Expat's callbacks' state while laying out a document.
private final class XMPLayoutState {
    let parser: XML_Parser
    var refused = false
    var lists: [String: XMPLayout.List] = [:]
    var descriptionEnd: Int?
    var rdfPrefix = "rdf"
    var dcPrefix: String?
    private var depth = 0
    /// The keyword list open now: its key and its element's depth.
    private var list: (key: String, depth: Int)?
    private var element: (start: Int, text: [UInt8])?
    /// The open list's container start tag: where it is and how long.
    private var container: Range<Int>?
    var selfClosedContainers: [Range<Int>] = []

    private static let keys = ["http://purl.org/dc/elements/1.1/ subject": "tags", "http://ns.adobe.com/lightroom/1.0/ hierarchicalSubject": "lr",
                               "http://www.digikam.org/ns/1.0/ TagsList": "digiKam"]
    private static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

    init(parser: XML_Parser) { self.parser = parser }

    private var offset: Int { Int(XML_GetCurrentByteIndex(parser)) }

    /// Namespace declarations of the element about to start (Expat reports them first).
    private var pendingDeclarations: [(prefix: String, uri: String)] = []
    /// Whether the first rdf:Description has started (declarations above or on it are in its scope).
    private var descriptionStarted = false

    func declared(prefix: UnsafePointer<CChar>?, uri: UnsafePointer<CChar>?) {
        guard let prefix, let uri else { return }
        pendingDeclarations.append((String(cString: prefix), String(cString: uri)))
    }

    func start(_ name: UnsafePointer<CChar>) {
        depth += 1
        let parts = String(cString: name).split(separator: " ").map(String.init)
        // Declared on the description or an element around it: in scope where a new dc:subject goes.
        if !descriptionStarted {
            for declaration in pendingDeclarations where declaration.uri == "http://purl.org/dc/elements/1.1/" { dcPrefix = declaration.prefix }
            if parts.count >= 2, parts[0] == Self.rdf, parts[1] == "Description" { descriptionStarted = true }
        }
        pendingDeclarations.removeAll()
        guard parts.count >= 2 else { return }
        let qualified = parts[0] + " " + parts[1]
        if parts[0] == Self.rdf, parts.count == 3 { rdfPrefix = parts[2] }
        if parts[0] == "http://purl.org/dc/elements/1.1/", parts.count == 3 { dcPrefix = parts[2] }
        if list == nil, let key = Self.keys[qualified], lists[key] == nil {
            list = (key, depth)
            lists[key] = XMPLayout.List(close: offset, elements: [])
        } else if let (_, listDepth) = list, depth == listDepth + 1 {
            container = offset..<(offset + Int(XML_GetCurrentByteCount(parser)))
        } else if let (key, listDepth) = list, depth == listDepth + 2, parts[0] == Self.rdf, parts[1] == "li" {
            element = (offset, [])
            _ = key
        }
    }

    func characters(_ pointer: UnsafePointer<CChar>, _ length: Int) {
        guard element != nil, (element?.text.count ?? 0) + length <= XMPSidecar.limit else { return }
        pointer.withMemoryRebound(to: UInt8.self, capacity: length) { element?.text.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }

    func end(_ name: UnsafePointer<CChar>) {
        defer { depth -= 1 }
        let parts = String(cString: name).split(separator: " ").map(String.init)
        let endOffset = offset + Int(XML_GetCurrentByteCount(parser))
        if let (key, listDepth) = list {
            if depth == listDepth + 2, let open = element {
                let text = String(decoding: open.text, as: UTF8.self).trimming(" \t\r\n")
                lists[key]?.elements.append((open.start..<endOffset, text))
                element = nil
            } else if depth == listDepth + 1 {
                lists[key]?.close = offset  // the container's end tag
                // No end tag of its own (Expat counts none): `<rdf:Bag/>`.
                if XML_GetCurrentByteCount(parser) == 0, let container { selfClosedContainers.append(container) }
            } else if depth == listDepth {
                list = nil
            }
        }
        if parts.count >= 2, parts[0] == Self.rdf, parts[1] == "Description", descriptionEnd == nil, XML_GetCurrentByteCount(parser) > 0 {
            descriptionEnd = offset
        }
    }
}
