import CSystemShims
import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// Scanning a backing directory into items (SPEC §1): which entries are
/// items, names as bytes, and the fields that come from the file system.
final class ScannerTests: FixtureTestCase {
    /// statx of a path: (birth time if recorded, mtime).
    private func statx(_ path: String) -> (birth: Timestamp?, modified: Timestamp) {
        var status = qfs_stat()
        XCTAssertEqual(qfs_lstatat(AT_FDCWD, path, &status), 0, path)
        let modified = Timestamp(seconds: status.mtime_sec, nanoseconds: status.mtime_nsec)
        let birth = status.has_btime != 0 ? Timestamp(seconds: status.btime_sec, nanoseconds: status.btime_nsec) : nil
        return (birth, modified)
    }

    // MARK: Which entries are items

    func testHiddenEntriesAreNeverItems() throws {
        writeFile(".DS_Store", "junk")
        writeFile(".queryfs.toml", "[views]")
        writeFile(".git/HEAD", "ref: refs/heads/main")
        makeDirectory(".git/objects/ab")
        bundle(".hidden.hpwebsite", plistBody: "<dict><key>title</key><string>Hidden</string></dict>")
        writeFile(".hpwebsite", "a dot first: hidden, not an ext")
        hipstapaper("visible.hpwebsite", title: "Visible")
        XCTAssertEqual(try scan().map(\.name.description), ["visible.hpwebsite"])
        XCTAssertEqual(try listing("by-name"), ["0001 Visible.hpwebsite"])
        // Entries inside a bundle may be hidden: they are part of the bundle, not items.
        writeFile("visible.hpwebsite/.DS_Store", "12345")
        var payload = stat()
        XCTAssertEqual(lstat(path("visible.hpwebsite/payload.plist"), &payload), 0)
        XCTAssertEqual(try scanItem("visible.hpwebsite").size, UInt64(payload.st_size) + 5)
    }

    func testAnEmptyBackingDirectoryHasNoItems() throws {
        XCTAssertEqual(try scan().count, 0)
        XCTAssertEqual(try listing("by-name"), [])
    }

    func testPlainFilesAreItems() throws {
        writeFile("notes.txt", "hello world")                 // 11 bytes
        writeFile("archive.tar.gz", [UInt8](repeating: 7, count: 1000))
        writeFile("README", "")
        writeFile("a.", "x")
        setMTime(path("notes.txt"), seconds: 1_600_000_000, nanoseconds: 123_456_789)
        let items = try scan()
        XCTAssertEqual(items.map(\.name.description), ["README", "a.", "archive.tar.gz", "notes.txt"])
        XCTAssertTrue(items.allSatisfy { $0.kind == .file })
        XCTAssertTrue(items.allSatisfy { $0.problems.isEmpty }, "a plain file has no payload to miss")

        let notes = try scanItem("notes.txt")
        XCTAssertEqual(notes.size, 11)
        XCTAssertEqual(notes.title, "notes")
        XCTAssertEqual(notes.name.ext, "txt")
        XCTAssertEqual(notes.modified, Timestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789))
        XCTAssertFalse(notes.archived)
        XCTAssertEqual(notes.tags, [])
        XCTAssertNil(notes.url)

        let archive = try scanItem("archive.tar.gz")
        XCTAssertEqual(archive.size, 1000)
        XCTAssertEqual(archive.title, "archive.tar")
        XCTAssertEqual(archive.name.ext, "gz")
        XCTAssertEqual(try scanItem("README").size, 0)
        XCTAssertEqual(try scanItem("a.").title, "a.")

        XCTAssertEqual(try listing("by-name"), ["0001 a.", "0002 archive.tar.gz", "0003 notes.txt", "0004 README"])
    }

    func testAPayloadFileInAPlainFileIsNotRead() throws {
        // Only bundles have payloads; a plain file called payload.json is an item like any other.
        writeFile("payload.json", "{\"title\": \"Not a payload\"}")
        let item = try scanItem("payload.json")
        XCTAssertEqual(item.kind, .file)
        XCTAssertEqual(item.title, "payload")
    }

    // MARK: Names are bytes

    func testNamesThatAreNotUTF8SurviveByteForByte() throws {
        let bundleName: [UInt8] = Array("caf".utf8) + [0xE9, 0xFF] + Array(".hpwebsite".utf8)
        let fileName: [UInt8] = [0x80, 0x81, 0x20, 0xC3, 0x28, 0x2E, 0x74, 0x78, 0x74]  // "\x80\x81 \xC3(.txt"
        makeDirectory(named: bundleName)
        writeFile(named: bundleName + Array("/payload.plist".utf8),
                  Array(Self.xmlPlist("<dict><key>tags</key><array><string>t</string></array></dict>").utf8))
        writeFile(named: fileName, Array("abc".utf8))
        hipstapaper("plain.hpwebsite", title: "Plain")

        let items = try scan()
        XCTAssertEqual(items.count, 3)
        XCTAssertTrue(items.contains { $0.name.bytes == bundleName }, "\(items.map(\.name.bytes))")
        XCTAssertTrue(items.contains { $0.name.bytes == fileName })

        let bundle = items.first { $0.name.bytes == bundleName }!
        XCTAssertEqual(bundle.kind, .bundle)
        XCTAssertEqual(bundle.title, "caf\u{FFFD}\u{FFFD}")
        XCTAssertEqual(bundle.tags, ["t"])
        XCTAssertEqual(bundle.problems, [])
        let file = items.first { $0.name.bytes == fileName }!
        XCTAssertEqual(file.size, 3)
        XCTAssertEqual(file.name.ext, "txt")

        // Re-reading one item by its bytes finds the same item.
        let root = try BackingDirectory(path: backing)
        XCTAssertEqual(Scanner().scanItem(named: ItemName(bundleName), in: root.fd)?.name.bytes, bundleName)
        XCTAssertEqual(Scanner().scanItem(named: ItemName(fileName), in: root.fd)?.size, 3)

        // Entries: valid UTF-8 names, targets with the exact bytes.
        let catalog = try catalog()
        let entries = catalog.entries(of: .byName)
        XCTAssertEqual(entries.map(\.nameString), ["0001 caf\u{FFFD}\u{FFFD}.hpwebsite", "0002 Plain.hpwebsite", "0003 \u{FFFD}\u{FFFD} \u{FFFD}(.txt"])
        XCTAssertEqual(entries[0].target, Array("../bundles/".utf8) + bundleName)
        XCTAssertEqual(entries[2].target, Array("../bundles/".utf8) + fileName)
        for entry in entries {
            XCTAssertEqual(Array(String(decoding: entry.name, as: UTF8.self).utf8), entry.name)
        }
    }

    // MARK: modified, size, created

    func testModifiedReachesAFileDeepInsideABundle() throws {
        let directory = hipstapaper("deep.hpwebsite", title: "Deep")
        writeFile("deep.hpwebsite/a/b/c/d/deep.txt", "newest")
        writeFile("deep.hpwebsite/a/shallow.txt", "older")
        let newest = Timestamp(seconds: 1_700_000_500, nanoseconds: 987_654_321)
        setMTime(path("deep.hpwebsite/a/b/c/d/deep.txt"), seconds: newest.seconds, nanoseconds: Int(newest.nanoseconds))
        // Everything else is older, set bottom up (setting a child's time leaves its folder's alone).
        for relative in ["a/shallow.txt", "a/b/c/d", "a/b/c", "a/b", "a", "payload.plist", ""] {
            setMTime(directory + (relative.isEmpty ? "" : "/\(relative)"), seconds: 1_700_000_000)
        }
        XCTAssertEqual(statx(directory).modified, Timestamp(seconds: 1_700_000_000))
        XCTAssertEqual(try scanItem("deep.hpwebsite").modified, newest)

        // A deep folder that is newest counts too.
        setMTime(path("deep.hpwebsite/a/b/c/d/deep.txt"), seconds: 1_700_000_000)
        setMTime(path("deep.hpwebsite/a/b/c"), seconds: 1_700_000_900)
        XCTAssertEqual(try scanItem("deep.hpwebsite").modified, Timestamp(seconds: 1_700_000_900))

        // And the bundle's own mtime when it is the newest.
        setMTime(directory, seconds: 1_800_000_000)
        XCTAssertEqual(try scanItem("deep.hpwebsite").modified, Timestamp(seconds: 1_800_000_000))
    }

    func testADeepChangeMovesTheItemInByModified() throws {
        hipstapaper("a.hpwebsite", title: "A", mtime: 1000)
        hipstapaper("b.hpwebsite", title: "B", mtime: 2000)
        XCTAssertEqual(try listing("by-modified"), ["0001 B.hpwebsite", "0002 A.hpwebsite"])
        writeFile("a.hpwebsite/images/1/thumb.png", [1, 2, 3])
        setMTime(path("a.hpwebsite/images/1/thumb.png"), seconds: 3000)
        setMTime(path("a.hpwebsite/images/1"), seconds: 1000)
        setMTime(path("a.hpwebsite/images"), seconds: 1000)
        setMTime(path("a.hpwebsite"), seconds: 1000)
        XCTAssertEqual(try listing("by-modified"), ["0001 A.hpwebsite", "0002 B.hpwebsite"])
    }

    func testBundleSizeIsTheSumOfRegularFilesInside() throws {
        let payload = Array(Self.xmlPlist("<dict><key>title</key><string>Sized</string></dict>").utf8)
        bundle("sized.hpwebsite", file: "payload.plist", contents: payload)
        writeFile("sized.hpwebsite/big.bin", [UInt8](repeating: 1, count: 10_000))
        writeFile("sized.hpwebsite/a/b/small.txt", [UInt8](repeating: 2, count: 37))
        writeFile("sized.hpwebsite/a/empty", [])
        makeDirectory("sized.hpwebsite/empty-folder")
        // Symlinks are not regular files: neither the link nor its target counts again.
        XCTAssertEqual(symlink("big.bin", path("sized.hpwebsite/link-to-big")), 0)
        XCTAssertEqual(symlink("/etc/passwd", path("sized.hpwebsite/a/outside")), 0)
        XCTAssertEqual(symlink("a", path("sized.hpwebsite/loop")), 0)   // not followed, so no loop
        let item = try scanItem("sized.hpwebsite")
        XCTAssertEqual(item.size, UInt64(payload.count + 10_000 + 37))
        XCTAssertEqual(item.title, "Sized")
    }

    func testABundleWithOnlyAPayloadHasThePayloadsSize() throws {
        let payload = Array("{\"title\": \"J\"}".utf8)
        bundle("j.hpwebsite", file: "payload.json", contents: payload)
        XCTAssertEqual(try scanItem("j.hpwebsite").size, UInt64(payload.count))
        makeDirectory("empty.hpwebsite")
        XCTAssertEqual(try scanItem("empty.hpwebsite").size, 0)
    }

    func testCreatedIsTheBirthTimeWhereRecordedElseTheMtime() throws {
        let directory = hipstapaper("born.hpwebsite", title: "Born")
        let file = writeFile("born.txt", "x")
        // An mtime far in the past: the birth time (now) and the mtime differ.
        setMTime(path("born.hpwebsite/payload.plist"), seconds: 1_000_000)
        setMTime(directory, seconds: 1_000_000)
        setMTime(file, seconds: 2_000_000)
        for (name, fullPath) in [("born.hpwebsite", directory), ("born.txt", file)] {
            let status = statx(fullPath)
            let item = try scanItem(name)
            XCTAssertEqual(item.created, status.birth ?? status.modified, name)
            if let birth = status.birth {
                XCTAssertNotEqual(item.created, item.modified, "\(name): birth time, not mtime")
                XCTAssertGreaterThan(birth.seconds, 1_500_000_000)
            }
        }
    }

    func testByCreatedFollowsBirthTimesNotMtimes() throws {
        // Created in the order first, second, third; mtimes in the opposite order.
        for (index, name) in ["first", "second", "third"].enumerated() {
            hipstapaper("\(name).hpwebsite", title: name, mtime: Int64(3000 - index * 1000))
            usleep(15_000)   // past the file system's timestamp granularity
        }
        let expected = ["first.hpwebsite", "second.hpwebsite", "third.hpwebsite"]
            .map { name -> (String, Timestamp) in
                let status = statx(path(name))
                return (name, status.birth ?? status.modified)
            }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
            .enumerated().map { "000\($0.offset + 1) \($0.element.0)" }  // "<title>.hpwebsite" is the name
        XCTAssertEqual(try listing("by-created"), expected)
        if statx(path("first.hpwebsite")).birth != nil {
            XCTAssertEqual(expected, ["0001 third.hpwebsite", "0002 second.hpwebsite", "0003 first.hpwebsite"])
        }
        XCTAssertEqual(try listing("by-modified"), ["0001 first.hpwebsite", "0002 second.hpwebsite", "0003 third.hpwebsite"])
    }

    // MARK: Payload problems never hide items

    func testAMissingPayloadIsAProblemNamingTheItem() throws {
        makeDirectory("bare.hpwebsite/images")
        writeFile("bare.hpwebsite/images/a.png", [1, 2])
        writeFile("bare.hpwebsite/payload.xml", "<dict/>")   // not a payload name
        let item = try scanItem("bare.hpwebsite")
        XCTAssertEqual(item.kind, .bundle)
        XCTAssertEqual(item.title, "bare")
        XCTAssertEqual(item.size, 2 + 7)
        XCTAssertEqual(item.problems.count, 1)
        XCTAssertTrue(item.problems[0].contains("no payload"), item.problems[0])
        let problems = try catalog().problems
        XCTAssertEqual(problems.map(\.item), [ItemName("bare.hpwebsite")])
    }

    /// A payload's name on something that is not a file says so (it exists:
    /// "no payload" sent the user looking for a missing file).
    func testAPayloadThatIsNoRegularFileIsSaidAsWhatItIs() throws {
        makeDirectory("fifo.hpwebsite")
        XCTAssertEqual(mkfifo(path("fifo.hpwebsite/payload.plist"), 0o644), 0)
        makeDirectory("folder.hpwebsite/payload.json")
        makeDirectory("link.hpwebsite")
        XCTAssertEqual(symlink("/dev/zero", path("link.hpwebsite/payload.plist")), 0)
        XCTAssertEqual(try scanItem("fifo.hpwebsite").problems, ["payload.plist is not a regular file (a FIFO); ignored"])
        XCTAssertEqual(try scanItem("folder.hpwebsite").problems, ["payload.json is not a regular file (a folder); ignored"])
        XCTAssertEqual(try scanItem("link.hpwebsite").problems, ["payload.plist is not a regular file (a symbolic link); ignored"])
    }

    func testAPayloadThatIsAFolderIsMissing() throws {
        makeDirectory("odd.hpwebsite/payload.plist")
        let item = try scanItem("odd.hpwebsite")
        XCTAssertEqual(item.title, "odd")
        XCTAssertEqual(item.problems.count, 1)
    }

    func testMalformedPayloadsKeepTheItemWithNameDerivedFields() throws {
        let whole = Self.xmlPlist("<dict><key>webTitle</key><string>Cut</string></dict>")
        let truncated = String(whole[..<whole.range(of: "<string>Cu")!.upperBound])   // cut mid-value
        bundle("truncated.hpwebsite", file: "payload.plist", contents: Array(truncated.utf8), mtime: 1000)
        bundle("badjson.hpwebsite", file: "payload.json", contents: Array("{\"title\": \"Oops\",}".utf8), mtime: 2000)
        bundle("badbinary.hpwebsite", file: "payload.plist", contents: Array("bplist00garbage".utf8), mtime: 3000)
        bundle("empty.hpwebsite", file: "payload.plist", contents: [], mtime: 4000)
        bundle("array.hpwebsite", file: "payload.json", contents: Array("[\"not\", \"a\", \"dictionary\"]".utf8), mtime: 5000)
        bundle("binarygarbage.hpwebsite", file: "payload.json", contents: [0xFF, 0xFE, 0x00, 0x01], mtime: 6000)
        for name in ["truncated", "badjson", "badbinary", "empty", "array", "binarygarbage"] {
            let item = try scanItem("\(name).hpwebsite")
            XCTAssertEqual(item.kind, .bundle, name)
            XCTAssertEqual(item.title, name, name)
            XCTAssertFalse(item.archived, name)
            XCTAssertEqual(item.tags, [], name)
            XCTAssertNil(item.url, name)
            XCTAssertEqual(item.problems.count, 1, "\(name): \(item.problems)")
            XCTAssertGreaterThan(item.modified, Timestamp(seconds: 999), name)
            if name != "empty" { XCTAssertGreaterThan(item.size, 0, name) }
        }
        XCTAssertTrue(try scanItem("truncated.hpwebsite").problems[0].hasPrefix("payload.plist: malformed"))
        XCTAssertTrue(try scanItem("badjson.hpwebsite").problems[0].hasPrefix("payload.json: malformed"))
        XCTAssertTrue(try scanItem("array.hpwebsite").problems[0].contains("not a dictionary"))
    }

    func testOneMalformedBundleNeverHidesTheOthers() throws {
        for index in 0..<20 {
            if index % 4 == 1 {
                bundle("item\(index).hpwebsite", file: "payload.plist", contents: Array("<dict><key>".utf8))
            } else if index % 4 == 3 {
                makeDirectory("item\(index).hpwebsite")
            } else {
                hipstapaper("item\(index).hpwebsite", title: "Good \(index)", archived: index % 8 == 0, tags: ["t"])
            }
        }
        let catalog = try catalog()
        XCTAssertEqual(catalog.items.count, 20)
        XCTAssertEqual(catalog.entries(of: .byName).count, 20)
        XCTAssertEqual(Set(catalog.problems.map(\.item)).count, 10)
        XCTAssertEqual(catalog.entries(of: .byName).prefix(3).map(\.nameString),
                       ["0001 Good 0.hpwebsite", "0002 Good 2.hpwebsite", "0003 Good 4.hpwebsite"])
        XCTAssertEqual(catalog.entries(of: .archived).count, 3)   // 0, 8, 16
        XCTAssertEqual(catalog.view(at: "tag/t").map { catalog.entries(of: $0).count }, 10)
    }

    func testPayloadPlistWinsOverPayloadJSON() throws {
        bundle("both.hpwebsite", plistBody: "<dict><key>title</key><string>From plist</string></dict>")
        writeFile("both.hpwebsite/payload.json", "{\"title\": \"From JSON\"}")
        XCTAssertEqual(try scanItem("both.hpwebsite").title, "From plist")
    }

    func testManyItemsScanInParallelToTheSameResult() throws {
        for index in 0..<150 {
            hipstapaper(String(format: "%03d.hpwebsite", index), title: "T\(index % 7)", tags: ["t\(index % 5)"], mtime: Int64(index))
        }
        writeFile("plain.txt", "p")
        let serial = try Scanner().scan(directory: backing, threads: 1).sorted { $0.name < $1.name }
        let parallel = try Scanner().scan(directory: backing, threads: 4).sorted { $0.name < $1.name }
        XCTAssertEqual(serial.count, 151)
        XCTAssertEqual(serial, parallel)
    }

    func testAMissingBackingDirectoryIsAnError() {
        XCTAssertThrowsError(try Scanner().scan(directory: backing + "/does-not-exist"))
        writeFile("file", "x")
        XCTAssertThrowsError(try Scanner().scan(directory: path("file")))
    }
}
