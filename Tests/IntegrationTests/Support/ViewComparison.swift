import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Compares what a mount shows with what `queryfs ls` computes from scratch.
enum ViewComparison {
    /// Every view path of BACKING, from `queryfs views`.
    static func viewPaths(backing: String) -> [String] {
        QueryfsBinary.run(["views", backing, "--no-index"]).stdoutText.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    /// `queryfs ls BACKING VIEW` (names in order), read afresh (no index file).
    static func expected(backing: String, view: String) -> [String] {
        // `--`: a query may start with `-`.
        QueryfsBinary.run(["ls", backing, "--no-index", "--", view]).stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init).filter { !$0.isEmpty }
    }

    /// The mount's listing of a view, sorted as `ls` would (ranks make byte order the view order).
    /// A tag's folder also holds its nested tags' folders: those are not entries.
    static func mounted(mountPoint: String, view: String) -> [String] {
        let folder = mountPoint + "/" + view
        return (RawFiles.list(folder) ?? []).filter { name in
            guard view.hasPrefix("tag/") else { return true }
            var status = stat()
            return lstat(folder + "/" + String(decoding: name, as: UTF8.self), &status) != 0 || status.st_mode & S_IFMT != S_IFDIR
        }.map { String(decoding: $0, as: UTF8.self) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// The mount's tag folders, nested ones as `a/b`.
    static func mountedTagFolders(mountPoint: String) -> Set<String> {
        var found = Set<String>()
        func walk(_ relative: String) {
            for name in RawFiles.list(mountPoint + "/tag" + (relative.isEmpty ? "" : "/" + relative)) ?? [] {
                let child = (relative.isEmpty ? "" : relative + "/") + String(decoding: name, as: UTF8.self)
                var status = stat()
                guard lstat(mountPoint + "/tag/" + child, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { continue }
                found.insert(child)
                walk(child)
            }
        }
        walk("")
        return found
    }

    /// The differences between every view of the mount and a fresh computation; empty when equal.
    /// `queries` are also compared: `query/<query>` of the mount against `queryfs ls BACKING <query>`.
    /// `including` picks the views whose entries are compared (each costs a `queryfs ls`); tag folder names always are.
    static func differences(backing: String, mountPoint: String, queries: [String] = [],
                            including: (String) -> Bool = { _ in true }) -> [String] {
        var problems: [String] = []
        for query in queries {
            let mine = mounted(mountPoint: mountPoint, view: "query/" + query)
            let fresh = expected(backing: backing, view: query)
            if mine != fresh { problems.append("query/\(query): mount \(mine.prefix(5))… (\(mine.count)) expected \(fresh.prefix(5))… (\(fresh.count))") }
        }
        let paths = viewPaths(backing: backing)
        let expectedTags = Set(paths.filter { $0.hasPrefix("tag/") }.map { String($0.dropFirst(4)) })
        let mountedTags = mountedTagFolders(mountPoint: mountPoint)
        if expectedTags != mountedTags {
            problems.append("tag folders: mount \(mountedTags.sorted()) expected \(expectedTags.sorted())")
        }
        for path in paths where including(path) {
            let mine = mounted(mountPoint: mountPoint, view: path)
            let fresh = expected(backing: backing, view: path)
            if mine != fresh { problems.append("\(path): mount \(mine.prefix(5))… (\(mine.count)) expected \(fresh.prefix(5))… (\(fresh.count))") }
        }
        return problems
    }

    /// Waits until the mount equals a fresh computation; returns the last differences.
    static func settle(backing: String, mountPoint: String, timeout: Double, queries: [String] = [],
                       including: (String) -> Bool = { _ in true }) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var last = differences(backing: backing, mountPoint: mountPoint, queries: queries, including: including)
        while !last.isEmpty && Date() < deadline {
            usleep(50_000)
            last = differences(backing: backing, mountPoint: mountPoint, queries: queries, including: including)
        }
        return last
    }
}
