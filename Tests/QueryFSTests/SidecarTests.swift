import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection

/// Sidecars (issue 31): XMP as darktable and digiKam write it, JSON as
/// yt-dlp does; which names are sidecars of which file; and hostile XMP
/// (a DTD, entity expansion, nesting) refused with a problem, never expanded.
final class SidecarTests: XCTestCase {
    private func read(_ text: String) throws -> [String: PayloadValue] {
        guard case .dictionary(let dictionary) = try XMPSidecar.read(Array(text.utf8)) else { XCTFail("not a map"); return [:] }
        return dictionary
    }

    private let header = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/"
          xmlns:lr="http://ns.adobe.com/lightroom/1.0/" xmlns:digiKam="http://www.digikam.org/ns/1.0/"
        """
    private let footer = "</rdf:Description></rdf:RDF></x:xmpmeta>"

    func testDarktableAndDigiKamSidecars() throws {
        let darktable = try read(header + """
             xmp:Rating="4" xmp:Label="Red">
            <dc:subject><rdf:Bag><rdf:li>beach</rdf:li><rdf:li>Tom &amp; Jerry</rdf:li></rdf:Bag></dc:subject>
            <lr:hierarchicalSubject><rdf:Bag><rdf:li>places|beach</rdf:li></rdf:Bag></lr:hierarchicalSubject>
            <dc:title><rdf:Alt><rdf:li xml:lang="x-default">At the sea</rdf:li></rdf:Alt></dc:title>
            """ + footer)
        XCTAssertEqual(darktable["tags"], .array([.string("beach"), .string("Tom & Jerry"), .string("places/beach")]))
        XCTAssertEqual(darktable["rating"], .integer(4))
        XCTAssertEqual(darktable["label"], .string("Red"))
        XCTAssertEqual(darktable["title"], .string("At the sea"))
        let digiKam = try read(header + """
            ><xmp:Rating>2</xmp:Rating><xmp:CreateDate>2024-03-05T10:00:00</xmp:CreateDate>
            <digiKam:TagsList><rdf:Seq><rdf:li>Places/Beach</rdf:li></rdf:Seq></digiKam:TagsList>
            """ + footer)
        XCTAssertEqual(digiKam["tags"], .array([.string("Places/Beach")]))
        XCTAssertEqual(digiKam["rating"], .integer(2))
        XCTAssertEqual(digiKam["created"], .date(1_709_632_800))
    }

    func testHostileXMPIsRefusedNotExpanded() {
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>
            """
        XCTAssertThrowsError(try XMPSidecar.read(Array(laughs.utf8))) { XCTAssertTrue("\($0)".contains("DTD"), "\($0)") }
        let external = #"<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>"#
        XCTAssertThrowsError(try XMPSidecar.read(Array(external.utf8)))
        let deep = String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000)
        XCTAssertThrowsError(try XMPSidecar.read(Array(deep.utf8))) { XCTAssertTrue("\($0)".contains("nested"), "\($0)") }
        XCTAssertThrowsError(try XMPSidecar.read(Array("<x><y></x>".utf8)))
        XCTAssertThrowsError(try XMPSidecar.read([0xFF, 0xFE, 0x00, 0x3C]))
        XCTAssertThrowsError(try XMPSidecar.read([UInt8](repeating: 0x20, count: XMPSidecar.limit + 1)))
    }

    func testWhichNamesAreSidecarsOfWhichFile() {
        let both = Sidecars([.xmp, .json])
        let names = ["IMG_1.jpg", "IMG_1.jpg.xmp", "IMG_2.cr2", "IMG_2.xmp", "alone.xmp", "Clip [x].mp4", "Clip [x].info.json", "data.json"]
        XCTAssertEqual(both.sidecarNames(among: names.map { Array($0.utf8) }).map { String(decoding: $0, as: UTF8.self) }.sorted(),
                       ["Clip [x].info.json", "IMG_1.jpg.xmp", "IMG_2.xmp"], "a sidecar alone, and a JSON file of its own, stay items")
        XCTAssertEqual(both.owners(of: Array("IMG_2.xmp".utf8), among: Set(names.map { Array($0.utf8) })).map { String(decoding: $0, as: UTF8.self) },
                       ["IMG_2.cr2"])
        XCTAssertTrue(Sidecars().sidecarNames(among: names.map { Array($0.utf8) }).isEmpty, "no sidecars unless asked")
        // What yt-dlp writes beside a video is not the video: its .info.json is the video's alone.
        let side = ["Clip [x].webp", "Clip [x].description", "Clip [x].mp4.part", "Clip [x].JPG"]
        let all = Set((names + side).map { Array($0.utf8) })
        XCTAssertEqual(both.owners(of: Array("Clip [x].info.json".utf8), among: all).map { String(decoding: $0, as: UTF8.self) }, ["Clip [x].mp4"])
        for file in side { XCTAssertFalse(both.candidates(for: Array(file.utf8)).contains { $0.1 == Array("Clip [x].info.json".utf8) }, file) }
        XCTAssertTrue(both.candidates(for: Array("photo.jpg".utf8)).contains { $0.1 == Array("photo.json".utf8) }, "X.json is still a photo's")
    }

    func testScanReadsSidecarsAndLeavesThemOut() throws {
        let backing = TemporaryBacking()
        try FileManager.default.createDirectory(atPath: backing.path + "/2024/03", withIntermediateDirectories: true)
        backing.write(backing.path + "/2024/03/IMG_1.jpg", "jpeg")
        backing.write(backing.path + "/2024/03/IMG_1.jpg.xmp", header + #" xmp:Rating="5"><dc:subject><rdf:Bag><rdf:li>sea</rdf:li></rdf:Bag></dc:subject>"# + footer)
        backing.write(backing.path + "/2024/03/IMG_2.jpg", "jpeg")
        backing.write(backing.path + "/2024/03/IMG_2.xmp", "<!DOCTYPE x []><x/>")
        backing.write(backing.path + "/2024/03/orphan.xmp", header + ">" + footer)
        var sources = FieldSources()
        sources.recursive = true
        sources.sidecars = Sidecars([.xmp])
        let items = try Scanner(sources: sources).scan(directory: backing.path).sorted { $0.name < $1.name }
        XCTAssertEqual(items.map(\.name.description), ["2024/03/IMG_1.jpg", "2024/03/IMG_2.jpg", "2024/03/orphan.xmp"])
        XCTAssertEqual(items[0].tags, ["sea"])
        XCTAssertEqual(items[0].size, 4, "the file's own size")
        XCTAssertEqual(items[1].problems, ["IMG_2.xmp: a DTD, which XMP never has; ignored"], "one bad sidecar hides nothing")
        let root = try BackingDirectory(path: backing.path, readingAs: sources)
        guard case .gone = Scanner(sources: sources).scan(named: ItemName("2024/03/IMG_1.jpg.xmp"), in: root.fd) else {
            return XCTFail("a sidecar whose file is there is no item")
        }
    }

    func testPresetsAndSettings() throws {
        let photos = try Configuration(parsing: "format = \"darktable\"\n", file: "q", now: .now)
        XCTAssertEqual(photos.sources.sidecars, Sidecars([.xmp]))
        XCTAssertTrue(photos.sources.recursive)
        let archive = try Configuration(parsing: "format = \"archivebox\"\n[fields]\ntitle = [\"name\"]\n", file: "q", now: .now)
        XCTAssertEqual(archive.sources.payloadNames, ["index.json"])
        XCTAssertEqual(archive.sources.title, ["name"], "a setting written after the preset is taken over it")
        XCTAssertThrowsError(try Configuration(parsing: "format = \"evernote\"\n", file: "q", now: .now)) { error in
            XCTAssertTrue("\(error)".contains("'format' is one of \"hipstapaper\""), "\(error)")
        }
        XCTAssertThrowsError(try Configuration(parsing: "sidecars = [\"exif\"]\n", file: "q", now: .now))
        XCTAssertThrowsError(try Configuration(parsing: "payload = [\"../x\"]\n", file: "q", now: .now))
    }

    /// The one-line suggestion names each collection it plainly is, from
    /// two names asked for and a sample of BACKING's listing, not all of it.
    func testTheFormatSuggestionRecognizesEachCollection() throws {
        func suggestion(_ build: (String) -> Void, configuration: String = "") throws -> String? {
            let folder = NSTemporaryDirectory() + "suggest-" + String(UInt64.random(in: 0 ... .max))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            build(folder)
            return CollectionFormat.suggestion(for: folder, configuration: try Configuration(parsing: configuration, file: "q", now: .now))
        }
        let make = { (path: String) in FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)) }
        let mkdir = { (path: String) in try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        XCTAssertTrue(try suggestion { mkdir($0 + "/.obsidian") }?.contains("Obsidian vault") == true)
        XCTAssertNil(try suggestion({ mkdir($0 + "/.obsidian") }, configuration: "format = \"obsidian\"\n"), "a format is named")
        XCTAssertTrue(try suggestion { mkdir($0 + "/archive"); _ = make($0 + "/ArchiveBox.conf") }?.contains("ArchiveBox data folder") == true)
        XCTAssertTrue(try suggestion { folder in for n in 0..<3 { mkdir("\(folder)/17000000\(n).5"); _ = make("\(folder)/17000000\(n).5/index.json") } }?
            .contains("ArchiveBox's archive folder") == true)
        XCTAssertTrue(try suggestion { folder in for n in 0..<3 { _ = make("\(folder)/v\(n).info.json") } }?.contains("yt-dlp") == true)
        XCTAssertTrue(try suggestion { folder in for n in 0..<3 { _ = make("\(folder)/p\(n).jpg.xmp") } }?.contains("XMP sidecars") == true)
        // darktable's and digiKam's own layout: year and month folders.
        XCTAssertTrue(try suggestion { folder in mkdir(folder + "/2024/05"); for n in 0..<3 { _ = make("\(folder)/2024/05/p\(n).jpg.xmp") } }?
            .contains("XMP sidecars") == true)
        XCTAssertNil(try suggestion { folder in mkdir(folder + "/2024/05/deep"); for n in 0..<3 { _ = make("\(folder)/2024/05/deep/p\(n).xmp") } },
                     "two levels down, no further")
        XCTAssertNil(try suggestion { folder in for n in 0..<3 { mkdir("\(folder)/b\(n).hpwebsite") } })
        // More entries than the sample: still told, from the sample.
        XCTAssertTrue(try suggestion { folder in
            for n in 0..<(CollectionFormat.sampleSize + 500) { _ = make("\(folder)/v\(n).info.json") }
        }?.contains("yt-dlp") == true)
    }

    func testTagsAsOneStringAndTimesAsPayloadsWriteThem() {
        var sources = FieldSources()
        sources.created = ["bookmarked_date", "timestamp", "upload_date"]
        sources.tagsMayBeText = true
        let paths = sources.splitPaths
        let archive = PayloadFields(payload: .dictionary(["tags": .string("reading, swift,,swift"), "timestamp": .string("1709640000.5")]), paths: paths)
        XCTAssertEqual(archive.tags, ["reading", "swift"])
        XCTAssertEqual(archive.created, Timestamp(clampingSecondsSince1970: 1_709_640_000.5))
        let video = PayloadFields(payload: .dictionary(["upload_date": .string("20240305")]), paths: paths)
        XCTAssertEqual(video.created, Timestamp(clampingSecondsSince1970: 1_709_596_800), "a yt-dlp day, not 20 million seconds")
    }
}

/// Tags written back into XMP sidecars (issue 31): one `<rdf:li>` line,
/// the rest of the sidecar byte for byte.
final class XMPSidecarEditorTests: XCTestCase {
    private let darktable = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:lr="http://ns.adobe.com/lightroom/1.0/" xmp:Rating="3"
            xmlns:xmp="http://ns.adobe.com/xap/1.0/">
           <dc:subject>
            <rdf:Bag>
             <rdf:li>beach</rdf:li>
             <rdf:li>Tom &amp; Jerry</rdf:li>
            </rdf:Bag>
           </dc:subject>
           <lr:hierarchicalSubject>
            <rdf:Bag>
             <rdf:li>places|beach</rdf:li>
            </rdf:Bag>
           </lr:hierarchicalSubject>
          </rdf:Description>
         </rdf:RDF>
        </x:xmpmeta>

        """

    private func set(_ tags: [String], in text: String?) throws -> String {
        String(decoding: try XMPSidecarEditor.settingTags(tags, in: text.map { Array($0.utf8) }), as: UTF8.self)
    }

    func testATagIsOneLineOfTheList() throws {
        XCTAssertEqual(try XMPSidecarEditor.tags(Array(darktable.utf8)), ["beach", "Tom & Jerry", "places/beach"], "line breaks between elements are no tags")
        let added = try set(["beach", "Tom & Jerry", "places/beach", "sea & sun"], in: darktable)
        XCTAssertEqual(added, darktable.replacingOccurrences(of: "     <rdf:li>Tom &amp; Jerry</rdf:li>\n",
                                                             with: "     <rdf:li>Tom &amp; Jerry</rdf:li>\n     <rdf:li>sea &amp; sun</rdf:li>\n"))
        let removed = try set(["Tom & Jerry", "places/beach"], in: darktable)
        XCTAssertEqual(removed, darktable.replacingOccurrences(of: "     <rdf:li>beach</rdf:li>\n", with: ""))
        let nested = try set(["beach", "Tom & Jerry", "places/beach", "places/lake"], in: darktable)
        XCTAssertEqual(nested, darktable.replacingOccurrences(of: "     <rdf:li>places|beach</rdf:li>\n",
                                                              with: "     <rdf:li>places|beach</rdf:li>\n     <rdf:li>places|lake</rdf:li>\n"),
                       "a nested tag goes to the hierarchical list, as darktable keeps it")
        XCTAssertEqual(try set(["beach", "Tom & Jerry"], in: darktable), darktable.replacingOccurrences(of: "     <rdf:li>places|beach</rdf:li>\n", with: ""))
    }

    /// An empty list written `<rdf:Bag/>` is opened for the tag (it landed
    /// outside the Bag, found from outside); CRLF lines get CRLF lines.
    func testAnEmptySelfClosedListAndCRLFLines() throws {
        let empty = darktable.replacingOccurrences(of: "<rdf:Bag>\n     <rdf:li>beach</rdf:li>\n     <rdf:li>Tom &amp; Jerry</rdf:li>\n    </rdf:Bag>", with: "<rdf:Bag/>")
        XCTAssertNotEqual(empty, darktable, "the fixture has the list this test empties")
        XCTAssertEqual(try XMPSidecarEditor.tags(Array(empty.utf8)), ["places/beach"])
        let added = try set(["places/beach", "added"], in: empty)
        XCTAssertEqual(added, empty.replacingOccurrences(of: "<rdf:Bag/>", with: "<rdf:Bag><rdf:li>added</rdf:li></rdf:Bag>"))
        XCTAssertEqual(try set(["places/beach", "added"], in: empty.replacingOccurrences(of: "<rdf:Bag/>", with: "<rdf:Bag />")),
                       empty.replacingOccurrences(of: "<rdf:Bag/>", with: "<rdf:Bag ><rdf:li>added</rdf:li></rdf:Bag>"))
        let crlf = darktable.replacingOccurrences(of: "\n", with: "\r\n")
        XCTAssertEqual(try set(["beach", "Tom & Jerry", "places/beach", "sun"], in: crlf),
                       crlf.replacingOccurrences(of: "     <rdf:li>Tom &amp; Jerry</rdf:li>\r\n",
                                                 with: "     <rdf:li>Tom &amp; Jerry</rdf:li>\r\n     <rdf:li>sun</rdf:li>\r\n"))
    }

    /// A description whose properties are all attributes, dc declared on it:
    /// the new list uses that prefix (no second xmlns:dc) on a line of its
    /// own, the end tag's line as it was (found from outside: both changed).
    func testAListAddedToADescriptionOfAttributesUsesItsPrefixAndItsLines() throws {
        let attributes = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/">
             <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
              <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"
                xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4">
              </rdf:Description>
             </rdf:RDF>
            </x:xmpmeta>

            """
        let added = try set(["sun"], in: attributes)
        XCTAssertEqual(added, attributes.replacingOccurrences(of: "xmp:Rating=\"4\">\n  </rdf:Description>",
                                                              with: "xmp:Rating=\"4\">\n   <dc:subject><rdf:Bag><rdf:li>sun</rdf:li></rdf:Bag></dc:subject>\n  </rdf:Description>"))
        let made = try set(["new"], in: nil)
        XCTAssertEqual(made.components(separatedBy: "xmlns:dc=").count, 2, "one declaration of dc: \(made)")
    }

    func testASidecarIsMadeAndAListIsAdded() throws {
        let made = try set(["new"], in: nil)
        XCTAssertEqual(try XMPSidecarEditor.tags(Array(made.utf8)), ["new"])
        let bare = darktable.replacingOccurrences(of: "dc:subject", with: "dc:title")
        let added = try set(["new"], in: "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description rdf:about=\"\"></rdf:Description></rdf:RDF></x:xmpmeta>")
        XCTAssertEqual(try XMPSidecarEditor.tags(Array(added.utf8)), ["new"])
        XCTAssertTrue(added.contains("xmlns:dc=\"http://purl.org/dc/elements/1.1/\""), "the namespace declared where the document has none")
        _ = bare
    }

    func testWhatCannotBeChangedInPlaceIsRefused() {
        XCTAssertThrowsError(try set(["x"], in: "<!DOCTYPE x []><x/>"))
        XCTAssertThrowsError(try set(["x"], in: "not xml"))
        XCTAssertThrowsError(try set(["x"], in: "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>"), "no description to hold tags")
    }
}

/// Edits of files with sidecars, through the editor every view and command uses.
final class SidecarEditTests: XCTestCase {
    func testAPhotoIsTaggedInItsSidecarAndASidecarAloneInItsAttribute() throws {
        let backing = TemporaryBacking()
        backing.write(backing.path + "/IMG_1.jpg", "jpeg")
        backing.write(backing.path + "/orphan.xmp", "<x/>")
        var sources = FieldSources()
        sources.sidecars = Sidecars([.xmp])
        let editor = ItemEditor(backing: try BackingDirectory(path: backing.path, readingAs: sources), sources: sources, journals: false)
        XCTAssertNoThrow(try editor.apply([.addTag("print")], to: ItemName("IMG_1.jpg")))
        let made = try XCTUnwrap(FileManager.default.contents(atPath: backing.path + "/IMG_1.jpg.xmp"))
        XCTAssertEqual(try XMPSidecarEditor.tags(Array(made)), ["print"], "darktable's sidecar, made")
        XCTAssertEqual(FileManager.default.contents(atPath: backing.path + "/IMG_1.jpg"), Data("jpeg".utf8), "the photo untouched")
        XCTAssertNoThrow(try editor.apply([.addTag("stray")], to: ItemName("orphan.xmp")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: backing.path + "/orphan.xmp.xmp"), "no sidecar of a sidecar")
        XCTAssertEqual(try editor.fields(of: ItemName("orphan.xmp")).tags, ["stray"], "its attribute")
    }

    /// A photo whose name is 255 bytes has no room for `X.jpg.xmp`: its
    /// `X.xmp` is read and written (found from outside: "File name too long"
    /// stopped the search, the tags were missing and every tag edit failed),
    /// and a file with no room for any sidecar gets no problem for it.
    func testAPhotoWithTheLongestNameUsesItsShorterSidecar() throws {
        let backing = TemporaryBacking()
        let stem = String(repeating: "P", count: 251), bare = String(repeating: "Q", count: 255)
        backing.write(backing.path + "/\(stem).jpg", "jpeg")
        backing.write(backing.path + "/\(stem).xmp", """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:subject><rdf:Bag><rdf:li>beach</rdf:li></rdf:Bag>
            </dc:subject></rdf:Description></rdf:RDF></x:xmpmeta>
            """)
        backing.write(backing.path + "/\(bare)", "no extension")
        var sources = FieldSources()
        sources.sidecars = Sidecars([.xmp])
        let items = try Scanner(sources: sources).scan(directory: backing.path).sorted { $0.name < $1.name }
        XCTAssertEqual(items.map(\.name.description), ["\(stem).jpg", bare])
        XCTAssertEqual(items[0].tags, ["beach"])
        XCTAssertEqual(items[0].problems, [])
        XCTAssertEqual(items[1].problems, [], "no sidecar name fits: none is looked for")
        let editor = ItemEditor(backing: try BackingDirectory(path: backing.path, readingAs: sources), sources: sources, journals: false)
        XCTAssertNoThrow(try editor.apply([.addTag("sea")], to: ItemName("\(stem).jpg")))
        let written = try XCTUnwrap(FileManager.default.contents(atPath: backing.path + "/\(stem).xmp"))
        XCTAssertEqual(try XMPSidecarEditor.tags(Array(written)), ["beach", "sea"])
    }

    /// A sidecar made by root is its photo's owner's, with the photo's mode
    /// (it was root's, and the user's darktable could not write it).
    func testASidecarMadeByRootIsThePhotosOwners() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give a file away")
        let backing = TemporaryBacking()
        backing.write(backing.path + "/IMG_2.jpg", "jpeg")
        XCTAssertEqual(chown(backing.path + "/IMG_2.jpg", 4242, 4343), 0)
        XCTAssertEqual(chmod(backing.path + "/IMG_2.jpg", 0o640), 0)
        var sources = FieldSources()
        sources.sidecars = Sidecars([.xmp])
        let editor = ItemEditor(backing: try BackingDirectory(path: backing.path, readingAs: sources), sources: sources, journals: false)
        XCTAssertNoThrow(try editor.apply([.addTag("print")], to: ItemName("IMG_2.jpg")))
        var made = stat()
        XCTAssertEqual(stat(backing.path + "/IMG_2.jpg.xmp", &made), 0)
        XCTAssertEqual([made.st_uid, made.st_gid], [4242, 4343])
        XCTAssertEqual(made.st_mode & 0o7777, 0o640)
    }
}
