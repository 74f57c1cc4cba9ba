import Foundation
import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection
@testable import QueryFSMount

/// The git-sync case without a mount: a backing directory that is a git
/// work tree, checked out commit by commit, oldest first; after each
/// checkout settles every view (tag folders included) equals a fresh scan.
/// Uses a history the test writes itself; set QUERYFS_HISTORY_BUNDLE to a git
/// bundle (e.g. ../shared/data/hpdata.bundle) to replay that one instead.
final class GitSyncTests: XCTestCase {
    func testCheckingOutEveryCommitKeepsEveryViewExact() throws {
        let backing = TemporaryBacking()
        let repository = backing.path + "-repo"
        defer { try? FileManager.default.removeItem(atPath: repository) }
        if let bundle = ProcessInfo.processInfo.environment["QUERYFS_HISTORY_BUNDLE"] {
            try git(["clone", "-q", bundle, repository], in: "/")
        } else {
            try writeHistory(in: repository, commits: 30)
        }
        let commits = try git(["rev-list", "--reverse", "HEAD"], in: repository).split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(commits.count, 10)

        try FileManager.default.removeItem(atPath: backing.path)
        try git(["clone", "-q", repository, backing.path], in: "/")
        try git(["checkout", "-q", commits[0]], in: backing.path)

        let catalog = try LiveCatalog(backingPath: backing.path, logger: .discarding)
        catalog.start()
        defer { catalog.stop() }
        for (number, commit) in commits.enumerated() {
            try git(["checkout", "-q", commit], in: backing.path)
            let fresh = try Catalog.load(backing: backing.path)
            let expected = Dictionary(uniqueKeysWithValues: fresh.views.map { ($0.pathString, fresh.entries(of: $0).map(\.nameString)) })
            let settled = eventually(timeout: 3) { listings(catalog) == expected }
            XCTAssertTrue(settled, "commit \(number) \(commit): views differ")
            if !settled {
                let live = listings(catalog)
                for key in Set(live.keys).union(expected.keys) where live[key] != expected[key] {
                    print("  \(key): live \(live[key] ?? []) expected \(expected[key] ?? [])")
                }
                return
            }
        }
    }

    private func listings(_ catalog: LiveCatalog) -> [String: [String]] {
        catalog.withIndex { index in
            Dictionary(uniqueKeysWithValues: index.views.map { view in
                (view.definition.pathString, view.records.enumerated().map {
                    String(decoding: $1.entryName(index: $0, count: view.count), as: UTF8.self)
                })
            })
        }
    }

    /// A reading list's life: bundles added, retitled, archived, tagged, untagged, deleted.
    private func writeHistory(in path: String, commits: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try git(["init", "-q"], in: path)
        var random = LiveIndexTests.Random(seed: 7)
        var live: [String] = []
        let tags = ["Tag Number 0", "Tag Number 1", "rock/metal", "Work", "work"]
        for number in 0..<commits {
            let action = live.count < 4 ? 0 : Int.random(in: 0..<5, using: &random)
            switch action {
            case 0, 1:
                let name = "B\(number).hpwebsite"
                live.append(name)
                try write(path, name, title: "Item \(number)", archived: false, tags: [tags.randomElement(using: &random)!])
            case 2:
                let name = live.randomElement(using: &random)!
                try write(path, name, title: "Edited \(number)", archived: Bool.random(using: &random),
                          tags: Array(tags.shuffled(using: &random).prefix(Int.random(in: 0...2, using: &random))))
            case 3:
                let name = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                try FileManager.default.removeItem(atPath: "\(path)/\(name)")
            default:
                let name = live.randomElement(using: &random)!
                try write(path, name, title: "Archived \(number)", archived: true, tags: [])
            }
            try git(["add", "-A"], in: path)
            try git(["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "step \(number)"], in: path)
        }
    }

    private func write(_ root: String, _ name: String, title: String, archived: Bool, tags: [String]) throws {
        try FileManager.default.createDirectory(atPath: "\(root)/\(name)", withIntermediateDirectories: true)
        try Data(TemporaryBacking.plist(title: title, archived: archived, tags: tags).utf8)
            .write(to: URL(fileURLWithPath: "\(root)/\(name)/payload.plist"))
    }

    @discardableResult
    private func git(_ arguments: [String], in directory: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "git", code: Int(process.terminationStatus), userInfo: [NSLocalizedDescriptionKey: "git \(arguments): "
                + String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)])
        }
        return String(decoding: data, as: UTF8.self)
    }
}
