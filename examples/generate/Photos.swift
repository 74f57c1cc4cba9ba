// --shape photos: a camera's pictures sorted into YYYY/MM/, numbered in the
// order they were taken, half with a darktable sidecar (IMG_0001.jpg.xmp),
// a quarter with a digiKam one (IMG_0001.xmp), the rest with none.

/// Keyword hierarchies, root first. `&` and `'` must be escaped in XMP;
/// some have one level only.
let photoKeywords: [[String]] = [
    ["places", "beach"], ["places", "mountains"], ["places", "city", "Lisbon"], ["places", "city", "Kyoto"],
    ["people", "family"], ["people", "Anna & Ben"], ["events", "birthday"], ["events", "holiday 2024"],
    ["animals", "dog"], ["animals", "birds"], ["food & drink", "café"], ["nature", "flowers"],
    ["weather", "snow"], ["Grandma's garden"], ["film"],
]
let colorLabels = ["Red", "Yellow", "Green", "Blue", "Purple"]

/// `months`: the dates spread over that many months back from the reference time.
func writePhotos(to output: String, count: Int, seed: UInt64, months: Int) {
    var random = SeededGenerator(state: seed)
    var writer = TreeWriter(root: output)
    let span = months * 2_629_746  // an average month in seconds
    // Sorted, so that numbers rise with time as a camera counts.
    let times = (0..<count).map { _ in referenceNow - random.below(span) }.sorted()
    let firstNumber = 1 + random.below(5000)
    for (index, time) in times.enumerated() {
        let taken = CivilTime(time)
        let name = "IMG_\(padded(firstNumber + index, 4))"
        let folder = "\(padded(taken.year, 4))/\(padded(taken.month, 2))"
        writer.write("\(folder)/\(name).jpg", fakeJPEG(&random), time: time)
        let edited = min(referenceNow, time + random.below(30 * 86_400))
        let kind = random.below(100)
        let keywords = random.distinct(photoKeywords, upTo: random.below(4))
        let rating = random.below(6)
        let label: String? = random.chance(30) ? random.pick(colorLabels) : nil
        if kind < 50 {
            let xmp = darktableXMP(image: "\(name).jpg", keywords: keywords, rating: rating, label: label,
                                   formatTag: random.chance(50))
            writer.write("\(folder)/\(name).jpg.xmp", text: xmp, time: edited)
        } else if kind < 75 {
            let xmp = digiKamXMP(keywords: keywords, rating: rating, label: label)
            writer.write("\(folder)/\(name).xmp", text: xmp, time: edited)
        }
    }
    writer.finish()
}

/// A JFIF header, some noise and the end marker: a JPEG to `file`, not to a viewer.
func fakeJPEG(_ random: inout SeededGenerator) -> [UInt8] {
    let header: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00,
                           0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
    return header + random.bytes(16 + random.below(48)) + [0xFF, 0xD9]
}

/// The namespaces both tools declare on the description; the tools differ
/// in what they put inside it.
func xmpDescriptionOpening(rating: Int, label: String?, extra: String) -> String {
    let labelAttribute = label.map { " xmp:Label=\"\(markupEscaped($0))\"" } ?? ""
    return """
        <x:xmpmeta xmlns:x="adobe:ns:meta/">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/"
            xmlns:xmp="http://ns.adobe.com/xap/1.0/"
            xmlns:lr="http://ns.adobe.com/lightroom/1.0/"
            xmlns:digiKam="http://www.digikam.org/ns/1.0/"
            xmp:Rating="\(rating)"\(labelAttribute)\(extra)>

        """
}

let xmpDescriptionClosing = "  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n"

/// `<element><rdf:Bag|Seq>` with one `rdf:li` per value; nothing when there
/// are no values (the tools leave the element out).
func xmpList(_ element: String, _ container: String, _ values: [String]) -> String {
    guard !values.isEmpty else { return "" }
    let items = values.map { "     <rdf:li>\(markupEscaped($0))</rdf:li>\n" }.joined()
    return "   <\(element)>\n    <rdf:\(container)>\n\(items)    </rdf:\(container)>\n   </\(element)>\n"
}

/// darktable: leaf keywords in dc:subject, `|`-separated paths in
/// lr:hierarchicalSubject — including, as darktable does, its own
/// `darktable|format|jpg` tag now and then.
func darktableXMP(image: String, keywords: [[String]], rating: Int, label: String?, formatTag: Bool) -> String {
    let hierarchies = keywords.map { $0.joined(separator: "|") } + (formatTag ? ["darktable|format|jpg"] : [])
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        + xmpDescriptionOpening(rating: rating, label: label, extra: "\n    xmp:DerivedFrom=\"\(markupEscaped(image))\"")
        + xmpList("dc:subject", "Bag", keywords.map { $0.last! })
        + xmpList("lr:hierarchicalSubject", "Bag", hierarchies)
        + xmpDescriptionClosing
}

/// digiKam (through exiv2): an xpacket wrapper, capitalized `/`-separated
/// paths in digiKam:TagsList, and the leaves in dc:subject.
func digiKamXMP(keywords: [[String]], rating: Int, label: String?) -> String {
    let capitalized = keywords.map { $0.map(capitalizedFirst) }
    return "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
        + xmpDescriptionOpening(rating: rating, label: label, extra: "")
        + xmpList("digiKam:TagsList", "Seq", capitalized.map { $0.joined(separator: "/") })
        + xmpList("dc:subject", "Bag", capitalized.map { $0.last! })
        + xmpDescriptionClosing
        + "<?xpacket end=\"w\"?>\n"
}

func capitalizedFirst(_ word: String) -> String {
    guard let first = word.first else { return word }
    return first.uppercased() + word.dropFirst()
}
