import Foundation
import QueryFSTestSupport
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// A temporary backing directory for tests, removed when the test ends.
final class TemporaryBacking {
    let path: String

    init() {
        var template = Array("/tmp/queryfs-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes a bundle with an XML plist payload.
    @discardableResult
    func bundle(_ name: String, title: String, archived: Bool = false, tags: [String] = [], mtime: Int? = nil) -> String {
        let directory = "\(path)/\(name)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        write("\(directory)/payload.plist", Self.plist(title: title, archived: archived, tags: tags))
        if let mtime {
            setMTime("\(directory)/payload.plist", mtime)
            setMTime(directory, mtime)
        }
        return directory
    }

    static func plist(title: String, archived: Bool = false, tags: [String] = []) -> String {
        HipstapaperPlist.xml(title: title, archived: archived, tags: tags)
    }

    func write(_ path: String, _ text: String) {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), "cannot write \(path)")
    }

    func setMTime(_ path: String, _ seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    /// Entry names of a view as `queryfs ls` computes them from scratch.
    func freshListing(_ view: String) throws -> [String] {
        let catalog = try Catalog.load(backing: path)
        guard let definition = catalog.view(at: view) else { return [] }
        return catalog.entries(of: definition).map(\.nameString)
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Double = 2, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
