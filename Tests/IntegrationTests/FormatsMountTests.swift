import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The other shapes of collection (issue 31), mounted: photos in year/month
/// folders with darktable and digiKam XMP sidecars, a yt-dlp folder with
/// JSON sidecars, and ArchiveBox's archive folder (payload `index.json`,
/// tags as one comma-separated string). Views are checked against what the
/// test wrote; sidecars are never items while their file is there; changes
/// to a sidecar show live; an edit keeps ArchiveBox's tags one string, and
/// undo restores the bytes.
final class FormatsMountTests: MountTestCase {
    private func names(_ view: String) -> [String] { (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).sorted() }

    private static func xmp(tags: [String], rating: Int, hierarchy: String? = nil) -> String {
        let items = tags.map { "<rdf:li>\($0)</rdf:li>" }.joined()
        let tree = hierarchy.map { "<lr:hierarchicalSubject><rdf:Bag><rdf:li>\($0)</rdf:li></rdf:Bag></lr:hierarchicalSubject>" } ?? ""
        return """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/"
             xmlns:lr="http://ns.adobe.com/lightroom/1.0/" xmp:Rating="\(rating)"><dc:subject><rdf:Bag>\(items)</rdf:Bag></dc:subject>\(tree)
            </rdf:Description></rdf:RDF></x:xmpmeta>
            """
    }

    func testPhotosWithXMPSidecarsAtAnyDepth() throws {
        fixture = MountedFixture { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("format = \"darktable\"\n".utf8))
            for folder in ["2023", "2023/07", "2024", "2024/03"] { mkdir(corpus.path + "/" + folder, 0o755) }
            corpus.file(Array("2023/07/IMG_1.jpg".utf8), contents: [0xFF, 0xD8, 0xFF, 0xE0], mtime: 1_000)
            corpus.file(Array("2023/07/IMG_1.jpg.xmp".utf8), contents: Array(Self.xmp(tags: ["beach", "family"], rating: 4, hierarchy: "places|beach").utf8), mtime: 1_000)
            corpus.file(Array("2024/03/IMG_2.cr2".utf8), contents: [1, 2, 3], mtime: 2_000)
            corpus.file(Array("2024/03/IMG_2.xmp".utf8), contents: Array(Self.xmp(tags: ["beach"], rating: 2).utf8), mtime: 2_000)
            corpus.file(Array("2024/03/IMG_3.jpg".utf8), contents: [0xFF, 0xD8], mtime: 3_000)
            corpus.file(Array("2024/03/broken.jpg".utf8), contents: [0xFF], mtime: 4_000)
            corpus.file(Array("2024/03/broken.jpg.xmp".utf8), contents: Array("<!DOCTYPE x [<!ENTITY a \"a\">]><x>&a;</x>".utf8), mtime: 4_000)
        }
        try fixture.mount()
        XCTAssertEqual(names("by-name"), ["0001 broken.jpg", "0002 IMG_1.jpg", "0003 IMG_2.cr2", "0004 IMG_3.jpg"], "no sidecar is an item")
        XCTAssertEqual(names("tag/beach"), ["0001 IMG_2.cr2", "0002 IMG_1.jpg"])
        XCTAssertEqual(names("tag/family"), ["0001 IMG_1.jpg"])
        XCTAssertEqual(names("tag").filter { $0.hasPrefix("places") }, ["places"])
        XCTAssertEqual(names("tag/places"), ["0001 IMG_1.jpg", "beach"], "a nested tag's folder in its parent's, beside the parent's entries")
        XCTAssertEqual(names("tag/places/beach"), ["0001 IMG_1.jpg"])
        XCTAssertEqual(RawFiles.readlink(Array(fixture.mounted("tag/places/beach/0001 IMG_1.jpg").utf8))?.text, "../../../bundles/2023/07/IMG_1.jpg")
        XCTAssertEqual(RawFiles.read(fixture.mounted("tag/places/beach/0001 IMG_1.jpg")), [0xFF, 0xD8, 0xFF, 0xE0])
        XCTAssertEqual(names("query/payload.rating>=3"), ["0001 IMG_1.jpg"])
        XCTAssertTrue(QueryfsBinary.run(["status", fixture.mountPoint]).stdoutText.contains("a DTD, which XMP never has"))

        // Live: a sidecar retagged, a photo with its sidecar added in a new folder, a sidecar removed.
        let corpus = Corpus(path: fixture.backing)
        corpus.write(fixture.backed("2024/03/IMG_2.xmp.tmp"), Array(Self.xmp(tags: ["mountains"], rating: 5).utf8))
        XCTAssertEqual(rename(fixture.backed("2024/03/IMG_2.xmp.tmp"), fixture.backed("2024/03/IMG_2.xmp")), 0, "saved as editors save")
        XCTAssertTrue(eventually { self.names("tag/mountains") == ["0001 IMG_2.cr2"] }, "\(names("tag/mountains"))")
        XCTAssertEqual(names("tag/beach"), ["0001 IMG_1.jpg"])
        mkdir(fixture.backed("2024/04"), 0o755)
        corpus.write(fixture.backed("2024/04/IMG_4.jpg.xmp"), Array(Self.xmp(tags: ["city"], rating: 1).utf8))
        corpus.write(fixture.backed("2024/04/IMG_4.jpg"), [0xFF, 0xD8])
        XCTAssertTrue(eventually { self.names("tag/city") == ["0001 IMG_4.jpg"] }, "\(names("tag/city"))")
        XCTAssertTrue(eventually { !self.names("by-name").contains { $0.hasSuffix(".xmp") } }, "the sidecar written first left when its file came: \(names("by-name"))")
        // Through views: a tag linked in and one removed are one line of the sidecar each; undo gives its bytes back.
        let sidecar = fixture.backed("2023/07/IMG_1.jpg.xmp")
        let before = try XCTUnwrap(RawFiles.read(sidecar))
        XCTAssertEqual(mkdir(fixture.mounted("tag/print"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/2023/07/IMG_1.jpg", fixture.mounted("tag/print/x")), 0, String(cString: strerror(Glibc.errno)))
        let added = try XCTUnwrap(RawFiles.read(sidecar))
        XCTAssertEqual(added.count - before.count, "<rdf:li>print</rdf:li>".utf8.count, "one element added: \(added.text)")
        XCTAssertEqual(unlink(fixture.mounted("tag/family/0001 IMG_1.jpg")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertFalse(RawFiles.read(sidecar)?.text.contains("family") ?? true)
        XCTAssertEqual(RawFiles.read(fixture.backed("2023/07/IMG_1.jpg")), [0xFF, 0xD8, 0xFF, 0xE0], "the photo is untouched")
        for _ in 0..<2 { XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0) }
        XCTAssertEqual(RawFiles.read(sidecar), before, "undone, byte for byte")
        // A photo without a sidecar gets one, darktable's way; undo removes it again.
        XCTAssertEqual(symlink("../../bundles/2024/03/IMG_3.jpg", fixture.mounted("tag/print/y")), 0, String(cString: strerror(Glibc.errno)))
        XCTAssertNotNil(RawFiles.read(fixture.backed("2024/03/IMG_3.jpg.xmp")))
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertNil(RawFiles.lstat(fixture.backed("2024/03/IMG_3.jpg.xmp")), "undo takes the sidecar it made away")

        XCTAssertEqual(unlink(fixture.backed("2023/07/IMG_1.jpg.xmp")), 0)
        XCTAssertTrue(eventually { self.names("tag/family").isEmpty }, "\(names("tag/family"))")

        // A tag for a photo whose sidecar cannot take it is refused, not hidden in the attribute.
        XCTAssertEqual(symlink("../../bundles/2024/03/broken.jpg", fixture.mounted("tag/print/z")), -1)
        XCTAssertEqual(Glibc.errno, EROFS)
        XCTAssertNil(WriteChecks.tagAttribute(fixture.backed("2024/03/broken.jpg")))
        // A sidecar left alone, its photo removed or renamed, is an item of its own at once, as a fresh scan says.
        XCTAssertEqual(unlink(fixture.backed("2024/03/IMG_2.cr2")), 0)
        XCTAssertEqual(rename(fixture.backed("2024/04/IMG_4.jpg"), fixture.backed("2024/04/IMG_5.jpg")), 0)
        // (The tag folders made and emptied through views stay until rmdir: SPEC §2.)
        for folder in ["tag/print", "tag/family"] { XCTAssertEqual(rmdir(fixture.mounted(folder)), 0, folder) }
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 10), [])
        XCTAssertTrue(names("by-name").contains { $0.hasSuffix(" IMG_2.xmp") }, "\(names("by-name"))")
        XCTAssertTrue(names("by-name").contains { $0.hasSuffix(" IMG_4.jpg.xmp") }, "\(names("by-name"))")
    }

    /// A photo's stamp covers its sidecar, and stamps are compared as the
    /// scan made them: a command without a mount reads nothing again while
    /// nothing changed (a stamper without the sidecar kinds found every
    /// photo with one changed), and reads a photo again when its sidecar is.
    func testCommandsReadNoPhotoAgainWhileItsSidecarIsUnchanged() throws {
        fixture = MountedFixture { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("format = \"darktable\"\n".utf8))
            mkdir(corpus.path + "/2024", 0o755)
            for number in 0..<6 {
                corpus.file(Array("2024/IMG_\(number).jpg".utf8), contents: [0xFF, 0xD8], mtime: 1_000 + number)
                if number % 2 == 0 {
                    corpus.file(Array("2024/IMG_\(number).jpg.xmp".utf8), contents: Array(Self.xmp(tags: ["sea"], rating: 3).utf8), mtime: 1_000)
                }
            }
        }
        usleep(100_000)  // reads in the clock tick of a change are not vouched for (ItemStamp)
        let index = fixture.root + "/cache/photos.index"
        func status() -> String { QueryfsBinary.run(["status", fixture.backing, "--index", index]).stdoutText }
        for _ in 0..<2 { XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "tag/sea", "--index", index]).status, 0) }
        XCTAssertTrue(status().contains("stamps compared\n"), status())
        Corpus(path: fixture.backing).write(fixture.backed("2024/IMG_2.jpg.xmp"), Array(Self.xmp(tags: ["sea", "sun"], rating: 5).utf8))
        usleep(100_000)
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "tag/sun", "--index", index]).stdoutText, "0001 IMG_2.jpg\n")
        XCTAssertTrue(status().contains("stamps compared\n"), "read again, then written back: \(status())")
    }

    func testYtDlpVideosWithJSONSidecars() throws {
        fixture = MountedFixture { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("format = \"yt-dlp\"\n".utf8))
            corpus.file(Array("Intro to Swift [abc].mp4".utf8), contents: [0, 0, 0, 24], mtime: 1_000)
            corpus.file(Array("Intro to Swift [abc].info.json".utf8), contents: Array(#"{"id": "abc", "title": "Intro to Swift: part 1", "tags": ["swift", "tutorial"], "webpage_url": "https://example.com/abc", "upload_date": "20240305"}"#.utf8), mtime: 1_000)
            corpus.file(Array("notes.json".utf8), contents: Array("{}".utf8), mtime: 2_000)
        }
        try fixture.mount()
        XCTAssertEqual(names("by-name"), ["0001 Intro to Swift: part 1.mp4", "0002 notes.json"])
        XCTAssertEqual(names("tag/tutorial"), ["0001 Intro to Swift: part 1.mp4"])
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "created<2024-03-06 created>2024-03-04"]).stdoutText, "0001 Intro to Swift: part 1.mp4\n")
        // The sidecar is yt-dlp's: a tag taken out of it is refused (EROFS), not
        // answered 0 and left (found from outside); one added goes to the attribute,
        // journaled with the tags the item had, and comes out again.
        let sidecar = RawFiles.read(fixture.backed("Intro to Swift [abc].info.json"))
        XCTAssertEqual(unlink(fixture.mounted("tag/tutorial/0001 Intro to Swift: part 1.mp4")), -1)
        XCTAssertEqual(Glibc.errno, EROFS)
        let removed = QueryfsBinary.run(["tag", fixture.backing, "Intro to Swift [abc].mp4", "--remove", "swift"])
        XCTAssertEqual(removed.status, 2)
        XCTAssertTrue(removed.stderrText.contains("is in the sidecar Intro to Swift [abc].info.json"), removed.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("Intro to Swift [abc].info.json")), sidecar)
        XCTAssertEqual(mkdir(fixture.mounted("tag/watched"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/Intro to Swift [abc].mp4", fixture.mounted("tag/watched/x")), 0)
        XCTAssertEqual(WriteChecks.tagAttribute(fixture.backed("Intro to Swift [abc].mp4")), Array("watched".utf8))
        XCTAssertTrue(QueryfsBinary.run(["history", fixture.backing]).stdoutText
            .contains("tags\t[\"swift\", \"tutorial\"] -> [\"swift\", \"tutorial\", \"watched\"]"))
        XCTAssertEqual(unlink(fixture.mounted("tag/watched/0001 Intro to Swift: part 1.mp4")), 0)
        XCTAssertNil(WriteChecks.tagAttribute(fixture.backed("Intro to Swift [abc].mp4")))
        XCTAssertEqual(RawFiles.read(fixture.backed("Intro to Swift [abc].info.json")), sidecar)
    }

    func testArchiveBoxTagsStayOneStringThroughEditsAndUndo() throws {
        let index = #"{"url": "https://example.com/a", "title": "Saved page", "timestamp": "1709640000.5", "tags": "reading,swift", "bookmarked_date": "2024-03-05 12:00"}"#
        fixture = MountedFixture { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("format = \"archivebox\"\n".utf8))
            mkdir(corpus.path + "/1709640000.5", 0o755)
            corpus.file(Array("1709640000.5/index.json".utf8), contents: Array(index.utf8), mtime: 1_000)
            corpus.file(Array("1709640000.5/index.html".utf8), contents: Array("<html></html>".utf8), mtime: 1_000)
        }
        try fixture.mount()
        XCTAssertEqual(names("tag/swift"), ["0001 Saved page.5"])
        XCTAssertEqual(QueryfsBinary.run(["ls", fixture.backing, "created>2024-03-05 created<2024-03-06"]).stdoutText, "0001 Saved page.5\n", "created from bookmarked_date")
        XCTAssertEqual(mkdir(fixture.mounted("tag/later"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/1709640000.5", fixture.mounted("tag/later/x")), 0, String(cString: strerror(Glibc.errno)))
        let written = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(RawFiles.read(fixture.backed("1709640000.5/index.json"))))) as? [String: Any]
        XCTAssertEqual(written?["tags"] as? String, "reading,swift,later", "still one string")
        XCTAssertEqual(unlink(fixture.mounted("tag/reading/0001 Saved page.5")), 0)
        let removed = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(RawFiles.read(fixture.backed("1709640000.5/index.json"))))) as? [String: Any]
        XCTAssertEqual(removed?["tags"] as? String, "swift,later")
        for _ in 0..<2 { XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0) }
        XCTAssertEqual(RawFiles.read(fixture.backed("1709640000.5/index.json")), Array(index.utf8), "undone, byte for byte")
    }

    /// A snapshot without a `tags` key gets one string, as one with `null`
    /// does (it got a JSON array), and a tag with a comma, which would read
    /// back as two, is refused (it was split into two, and exited 0).
    func testArchiveBoxTagsWithoutAKeyOrWithACommaStayOneStringOrAreRefused() throws {
        let index = "{\n    \"url\": \"https://b.example/\",\n    \"timestamp\": \"1700000000.2\",\n    \"title\": \"B\"\n}\n"
        fixture = MountedFixture { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("format = \"archivebox\"\n".utf8))
            mkdir(corpus.path + "/1700000000.2", 0o755)
            corpus.file(Array("1700000000.2/index.json".utf8), contents: Array(index.utf8), mtime: 1_000)
        }
        try fixture.mount()
        let comma = QueryfsBinary.run(["tag", fixture.backing, "1700000000.2", "--add", "p,q"])
        XCTAssertNotEqual(comma.status, 0)
        XCTAssertTrue(comma.stderrText.contains("separated by commas"), comma.stderrText)
        XCTAssertEqual(RawFiles.read(fixture.backed("1700000000.2/index.json")), Array(index.utf8), "nothing written")
        XCTAssertEqual(mkdir(fixture.mounted("tag/p,q"), 0o755), 0)
        XCTAssertNotEqual(symlink("../../bundles/1700000000.2", fixture.mounted("tag/p,q/x")), 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("1700000000.2/index.json")), Array(index.utf8), "nothing written")

        XCTAssertEqual(mkdir(fixture.mounted("tag/later"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/1700000000.2", fixture.mounted("tag/later/x")), 0, String(cString: strerror(Glibc.errno)))
        let written = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(RawFiles.read(fixture.backed("1700000000.2/index.json"))))) as? [String: Any]
        XCTAssertEqual(written?["tags"] as? String, "later", "one string, not a list")
        XCTAssertEqual(rename(fixture.mounted("tag/later"), fixture.mounted("tag/a,b")), -1, "a rename to a name with a comma is refused too")
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("1700000000.2/index.json")), Array(index.utf8), "undone, byte for byte")
    }

    /// ArchiveBox writes `null` for a snapshot with no tags or no title yet:
    /// no value and no problem, and a tag linked in starts the one string.
    func testArchiveBoxNullsAreFieldsNotGiven() throws {
        let index = #"{"url": "https://b.example/", "title": null, "timestamp": "1700000100.0", "tags": null}"#
        fixture = MountedFixture { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("format = \"archivebox\"\n".utf8))
            mkdir(corpus.path + "/1700000100.0", 0o755)
            corpus.file(Array("1700000100.0/index.json".utf8), contents: Array(index.utf8), mtime: 1_000)
        }
        try fixture.mount()
        XCTAssertEqual(names("by-name"), ["0001 1700000100.0"])
        XCTAssertFalse(QueryfsBinary.run(["status", fixture.mountPoint]).stdoutText.contains("found null"))
        XCTAssertEqual(mkdir(fixture.mounted("tag/later"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/1700000100.0", fixture.mounted("tag/later/x")), 0, String(cString: strerror(Glibc.errno)))
        let written = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(RawFiles.read(fixture.backed("1700000100.0/index.json"))))) as? [String: Any]
        XCTAssertEqual(written?["tags"] as? String, "later", "one string, as ArchiveBox keeps tags")
        XCTAssertEqual(names("tag/later"), ["0001 1700000100.0"])
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertEqual(RawFiles.read(fixture.backed("1700000100.0/index.json")), Array(index.utf8), "undone, byte for byte")
    }

    /// A link into a tag folder returns only once the item is in it: a
    /// bundle whose format reads tags only as a list, but whose payload
    /// holds one string, is refused (the string grew and no view changed
    /// before); so is a tag with a comma for a file whose tags are its
    /// attribute (it came back as two tags).
    func testATagThatWouldNotShowIsRefused() throws {
        fixture = MountedFixture { corpus in
            mkdir(corpus.path + "/C3.hpwebsite", 0o755)
            corpus.file(Array("C3.hpwebsite/payload.json".utf8), contents: Array(#"{"title":"Gamma","tags":"notalist"}"#.utf8), mtime: 1_000)
            corpus.file(Array("plain.txt".utf8), contents: Array("plain".utf8), mtime: 1_000)
        }
        try fixture.mount()
        XCTAssertEqual(mkdir(fixture.mounted("tag/todo"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/C3.hpwebsite", fixture.mounted("tag/todo/x")), -1)
        XCTAssertEqual(Glibc.errno, EROFS)
        XCTAssertEqual(RawFiles.read(fixture.backed("C3.hpwebsite/payload.json"))?.text, #"{"title":"Gamma","tags":"notalist"}"#)
        XCTAssertEqual(mkdir(fixture.mounted("tag/a,b"), 0o755), 0)
        XCTAssertEqual(symlink("../../bundles/plain.txt", fixture.mounted("tag/a,b/x")), -1)
        XCTAssertEqual(Glibc.errno, EROFS)
        XCTAssertNil(WriteChecks.tagAttribute(fixture.backed("plain.txt")))
        XCTAssertEqual(names("tag/todo"), [])
    }
}
