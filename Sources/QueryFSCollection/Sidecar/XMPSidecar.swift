import CExpat
import QueryFSEngine

/// An XMP sidecar (`IMG_0001.jpg.xmp` of darktable, `IMG_0001.xmp` of
/// digiKam and Lightroom) as a payload: what photo tools keep there.
///
/// | XMP | payload key |
/// |---|---|
/// | `dc:subject` (a bag of keywords) | `tags` |
/// | `lr:hierarchicalSubject` (`a|b`), `digiKam:TagsList` (`a/b`) | `tags`, as nested tags `a/b` |
/// | `dc:title`, `dc:description` (their first language) | `title`, `description` |
/// | `xmp:Rating`, `xmp:Label` (attributes or elements) | `rating` (a number), `label` |
/// | `xmp:CreateDate`, `exif:DateTimeOriginal`, `photoshop:DateCreated` | `created` |
///
/// Read by Expat. XMP has no DTD: a document that declares one is refused
/// before any entity could be declared or expanded ("billion laughs",
/// external entities), nothing is fetched, the document is at most
/// `limit` bytes and nests at most `depth` levels, so a hostile sidecar
/// costs a problem line, never the daemon.
enum XMPSidecar {
    static let limit = 1 << 20
    static let depth = 64

    private enum Namespace {
        static let dc = "http://purl.org/dc/elements/1.1/"
        static let xmp = "http://ns.adobe.com/xap/1.0/"
        static let lightroom = "http://ns.adobe.com/lightroom/1.0/"
        static let digiKam = "http://www.digikam.org/ns/1.0/"
        static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        static let exif = "http://ns.adobe.com/exif/1.0/"
        static let photoshop = "http://ns.adobe.com/photoshop/1.0/"
    }

    /// The properties read, by namespace and local name, and the key each feeds.
    fileprivate static let properties: [String: String] = [
        Namespace.dc + "subject": "tags", Namespace.lightroom + "hierarchicalSubject": "lr", Namespace.digiKam + "TagsList": "digiKam",
        Namespace.dc + "title": "title", Namespace.dc + "description": "description",
        Namespace.xmp + "Rating": "rating", Namespace.xmp + "Label": "label",
        Namespace.xmp + "CreateDate": "created", Namespace.exif + "DateTimeOriginal": "created", Namespace.photoshop + "DateCreated": "created",
    ]
    fileprivate static let description = Namespace.rdf + "Description"
    fileprivate static let listItem = Namespace.rdf + "li"

    static func read(_ bytes: [UInt8]) throws(FrontMatterError) -> PayloadValue {
        guard bytes.count <= limit else { throw FrontMatterError(message: "larger than \(limit >> 20) MiB") }
        // Names come as "namespace local" (the separator: a space, which neither may hold).
        guard let parser = XML_ParserCreateNS(nil, 0x20) else { throw FrontMatterError(message: "cannot start the XML parser") }
        defer { XML_ParserFree(parser) }
        let state = XMPParseState()
        let context = Unmanaged.passUnretained(state).toOpaque()
        XML_SetUserData(parser, context)
        XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER)
        XML_SetStartDoctypeDeclHandler(parser) { data, _, _, _, _ in
            let state = Unmanaged<XMPParseState>.fromOpaque(data!).takeUnretainedValue()
            state.refusal = "a DTD, which XMP never has"
            XML_StopParser(state.parser, XML_FALSE)
        }
        XML_SetElementHandler(parser, { data, name, attributes in
            Unmanaged<XMPParseState>.fromOpaque(data!).takeUnretainedValue().start(name!, attributes)
        }, { data, _ in
            Unmanaged<XMPParseState>.fromOpaque(data!).takeUnretainedValue().end()
        })
        XML_SetCharacterDataHandler(parser) { data, text, length in
            Unmanaged<XMPParseState>.fromOpaque(data!).takeUnretainedValue().characters(text!, Int(length))
        }
        state.parser = parser
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { XML_Parse(parser, $0.baseAddress, Int32(buffer.count), 1) }
        }
        if let refusal = state.refusal { throw FrontMatterError(message: refusal) }
        guard status == XML_STATUS_OK else {
            let reason = XML_ErrorString(XML_GetErrorCode(parser)).map { String(cString: $0) } ?? "unreadable"
            throw FrontMatterError(message: "not XML: \(reason) (line \(XML_GetCurrentLineNumber(parser)))")
        }
        return payload(state.values)
    }

    private static func payload(_ values: [String: [String]]) -> PayloadValue {
        var dictionary: [String: PayloadValue] = [:]
        var tags: [String] = []
        var seen = Set<String>()
        func add(_ tag: String) { if !tag.isEmpty, seen.insert(tag).inserted { tags.append(tag) } }
        for tag in values["tags"] ?? [] { add(tag) }
        for path in values["lr"] ?? [] { add(path.split(separator: "|").joined(separator: "/")) }
        for path in values["digiKam"] ?? [] { add(path) }
        if !tags.isEmpty { dictionary["tags"] = .array(tags.map(PayloadValue.string)) }
        for key in ["title", "description", "label"] { if let first = values[key]?.first { dictionary[key] = .string(first) } }
        if let rating = values["rating"]?.first {
            dictionary["rating"] = Int64(rating).map(PayloadValue.integer) ?? Double(rating).map(PayloadValue.real) ?? .string(rating)
        }
        if let created = values["created"]?.first { dictionary["created"] = ISO8601.parse(created).map(PayloadValue.date) ?? .string(created) }
        return .dictionary(dictionary)
    }
}

/// What the parse has found so far (Expat's callbacks reach it through their user data).
private final class XMPParseState {
    var parser: XML_Parser?
    var values: [String: [String]] = [:]
    var refusal: String?
    private var depth = 0
    /// The property being read (its key) and the depth of its element.
    private var open: (key: String, depth: Int)?
    private var text: [UInt8] = []

    func start(_ name: UnsafePointer<CChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        depth += 1
        guard depth <= XMPSidecar.depth else {
            refusal = "nested deeper than \(XMPSidecar.depth) levels"
            XML_StopParser(parser, XML_FALSE)
            return
        }
        let qualified = Self.name(name)
        if open == nil, let key = XMPSidecar.properties[qualified] {
            open = (key, depth)
        } else if qualified == XMPSidecar.description, let attributes {
            // Properties may be attributes of rdf:Description (`xmp:Rating="3"`).
            var index = 0
            while let attribute = attributes[index], let value = attributes[index + 1] {
                if let key = XMPSidecar.properties[Self.name(attribute)] { values[key, default: []].append(String(cString: value)) }
                index += 2
            }
        }
        text.removeAll(keepingCapacity: true)
    }

    func characters(_ pointer: UnsafePointer<CChar>, _ length: Int) {
        guard open != nil, text.count + length <= XMPSidecar.limit else { return }
        pointer.withMemoryRebound(to: UInt8.self, capacity: length) { text.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }

    func end() {
        if let (key, start) = open {
            // A list element's text, or a simple property's own.
            let value = String(decoding: text, as: UTF8.self).trimming(" \t\r\n")
            if !value.isEmpty { values[key, default: []].append(value) }
            if depth == start { open = nil }
        }
        text.removeAll(keepingCapacity: true)
        depth -= 1
    }

    /// "namespace local" as one key: namespace and local name joined.
    private static func name(_ pointer: UnsafePointer<CChar>) -> String {
        String(cString: pointer).split(separator: " ", maxSplits: 1).joined()
    }
}
