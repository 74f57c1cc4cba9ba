import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// A test case with a fresh temporary backing directory (`mkdtemp`) per
/// test, removed in `tearDown` — byte for byte, so names that are not UTF-8
/// go too. Helpers write bundles, payloads and plain files, set mtimes, and
/// scan.
class FixtureTestCase: XCTestCase {
    /// The backing directory of the running test.
    private(set) var backing: String = ""

    override func setUp() {
        super.setUp()
        backing = makeTemporaryDirectory()
    }

    override func tearDown() {
        removeTree(backing)
        super.tearDown()
    }

    // MARK: Writing fixtures

    /// `backing/relative`.
    func path(_ relative: String) -> String { "\(backing)/\(relative)" }

    /// Creates a directory (and its parents) under the backing directory.
    @discardableResult
    func makeDirectory(_ relative: String) -> String {
        let full = path(relative)
        XCTAssertNoThrow(try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true))
        return full
    }

    /// Writes a file under the backing directory, creating its parents.
    @discardableResult
    func writeFile(_ relative: String, _ bytes: [UInt8]) -> String {
        let full = path(relative)
        let parent = (full as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: full, contents: Data(bytes)), "cannot write \(full)")
        return full
    }

    @discardableResult
    func writeFile(_ relative: String, _ text: String) -> String { writeFile(relative, Array(text.utf8)) }

    /// A bundle `name` holding `payload.plist` with this XML body (the part
    /// inside `<plist>`).
    @discardableResult
    func bundle(_ name: String, plistBody: String, mtime: Int64? = nil) -> String {
        bundle(name, file: "payload.plist", contents: Array(Self.xmlPlist(plistBody).utf8), mtime: mtime)
    }

    /// A bundle `name` holding one payload file with these bytes.
    @discardableResult
    func bundle(_ name: String, file: String, contents: [UInt8], mtime: Int64? = nil) -> String {
        let directory = makeDirectory(name)
        writeFile("\(name)/\(file)", contents)
        if let mtime {
            setMTime("\(directory)/\(file)", seconds: mtime)
            setMTime(directory, seconds: mtime)
        }
        return directory
    }

    /// A Hipstapaper-style bundle (`webTitle`, `isArchived`, `tags`).
    @discardableResult
    func hipstapaper(_ name: String, title: String, archived: Bool = false, tags: [String] = [], mtime: Int64? = nil) -> String {
        let tagXML = tags.map { "<string>\(Self.escaped($0))</string>" }.joined()
        return bundle(name, plistBody: """
            <dict>
              <key>isArchived</key><\(archived ? "true" : "false")/>
              <key>tags</key><array>\(tagXML)</array>
              <key>webLocation</key><dict><key>relative</key><string>https://example.com/\(name)</string></dict>
              <key>webTitle</key><string>\(Self.escaped(title))</string>
            </dict>
            """, mtime: mtime)
    }

    static func xmlPlist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        \(body)
        </plist>

        """
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }

    /// Sets atime and mtime of `path` (not following a final symlink).
    func setMTime(_ path: String, seconds: Int64, nanoseconds: Int = 0) {
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds), timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW), 0, "utimensat \(path)")
    }

    /// Creates a directory whose name is raw bytes (need not be UTF-8).
    func makeDirectory(named name: [UInt8], in parent: String? = nil) {
        let full = Array((parent ?? backing).utf8) + [UInt8(ascii: "/")] + name
        let result = full.withCString { mkdir($0, 0o755) }
        XCTAssertEqual(result, 0, "mkdir \(full)")
    }

    /// Creates a file whose path (under the backing directory) is raw bytes.
    func writeFile(named relative: [UInt8], _ contents: [UInt8]) {
        let full = Array(backing.utf8) + [UInt8(ascii: "/")] + relative
        let fd = full.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        XCTAssertGreaterThanOrEqual(fd, 0, "open \(full)")
        guard fd >= 0 else { return }
        contents.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    // MARK: Reading back

    func scan() throws -> [Item] {
        try Scanner().scan(directory: backing).sorted { $0.name < $1.name }
    }

    func scanItem(_ name: String) throws -> Item {
        let items = try scan()
        guard let item = items.first(where: { $0.name == ItemName(name) }) else {
            XCTFail("no item \(name) among \(items.map(\.name.description))")
            throw FixtureError.missing(name)
        }
        return item
    }

    func catalog() throws -> Catalog { try Catalog.load(backing: backing) }

    /// Entry names of a view as `queryfs ls` shows them.
    func listing(_ view: String) throws -> [String] {
        let catalog = try catalog()
        guard let definition = catalog.view(at: view) else {
            XCTFail("no view \(view)")
            return []
        }
        return catalog.entries(of: definition).map(\.nameString)
    }

    enum FixtureError: Error { case missing(String) }
}

// MARK: In-memory items

/// An item built in memory, for engine tests that need no files.
func makeItem(
    _ name: String, title: String? = nil, archived: Bool = false, tags: [String] = [],
    modified: Int64 = 0, created: Int64 = 0, kind: Item.Kind = .bundle
) -> Item {
    Item(
        name: ItemName(name), kind: kind, title: title, archived: archived, tags: tags,
        modified: Timestamp(seconds: modified), created: Timestamp(seconds: created))
}

/// Entry names of `view` over `items`.
func entryNames(_ view: ViewDefinition, _ items: [Item], linkStyle: LinkStyle = .relative) -> [String] {
    view.entries(of: items, linkStyle: linkStyle).map(\.nameString)
}

/// Item names of `view` over `items`, in the view's order.
func itemNames(_ view: ViewDefinition, _ items: [Item]) -> [String] {
    view.select(items).map { items[$0].name.description }
}

// MARK: Temporary directories

func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/queryfs-unit-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// `rm -rf` with raw byte names (FileManager cannot name non-UTF-8 entries).
func removeTree(_ path: String) {
    removeTree(Array(path.utf8))
}

private func removeTree(_ path: [UInt8]) {
    var status = stat()
    guard path.withCString({ lstat($0, &status) }) == 0 else { return }
    if status.st_mode & S_IFMT == S_IFDIR {
        if let stream = path.withCString({ opendir($0) }) {
            var children: [[UInt8]] = []
            while let entry = readdir(stream) {
                let name = DirectoryEntry(record: entry).name
                if name != [0x2E] && name != [0x2E, 0x2E] { children.append(name) }
            }
            closedir(stream)
            for child in children { removeTree(path + [UInt8(ascii: "/")] + child) }
        }
        _ = path.withCString { rmdir($0) }
    } else {
        _ = path.withCString { unlink($0) }
    }
}

/// The error of type `E` that `body` throws, or nil (no error, or another kind).
func thrown<E: Error>(_ type: E.Type, by body: () throws -> Void) -> E? {
    do {
        try body()
        return nil
    } catch let error as E {
        return error
    } catch {
        return nil
    }
}
