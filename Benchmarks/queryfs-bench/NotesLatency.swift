// queryfs-bench notes-latency MOUNT BACKING [--samples N]
//
// Change latency at depth (issue 31): a recursive collection of notes, each
// sample a note in the deepest folders — its front matter rewritten in
// place, a new note written, a note removed — from the write returning to
// by-modified showing it, polled with one lstat of the entry per poll (as
// `latency` does for the flat reading list, whose figures these are
// compared with).

#if canImport(Glibc)
import Glibc
#endif

struct NotesLatencyBenchmark {
    let mount: String
    let backing: String
    let samples: Int
    let timeout = 5.0

    func run() {
        var files: [String] = []
        walk("", into: &files)
        var itemCount = files.count
        let deepest = files.map { $0.count { $0 == "/" } }.max() ?? 0
        let notes = files.filter { $0.hasSuffix(".md") && $0.count { $0 == "/" } == deepest }.sorted()
        print("change latency at depth \(deepest) through \(mount) (\(samples) samples each, \(itemCount) items; write returned → visible in by-modified)")
        var counter = 0
        func unique() -> String {
            counter += 1
            return "zz note latency \(getpid()) \(counter)"
        }
        var results: [(String, [Double])] = []
        results.append(("front matter", notes.prefix(samples).map { path in
            let title = unique()
            usleep(12_000)  // a new clock tick: the note is strictly the newest (see Latency.swift)
            let start = now()
            write(note: "\(backing)/\(path)", title: title)
            return waitUntil { exists(rank: 1, title: title, count: itemCount) } - start
        }))
        let folder = notes.first.map { String($0[..<$0.lastIndex(of: "/")!]) } ?? ""
        var created: [(path: String, title: String)] = []
        results.append(("create", (0..<samples).map { _ in
            let title = unique()
            let path = "\(folder)/\(title.replacingSpaces()).md"
            created.append((path, title))
            itemCount += 1
            usleep(12_000)
            let start = now()
            write(note: "\(backing)/\(path)", title: title)
            return waitUntil { exists(rank: 1, title: title, count: itemCount) } - start
        }))
        results.append(("delete", created.reversed().map { note in
            itemCount -= 1
            let start = now()
            unlink("\(backing)/\(note.path)")
            return waitUntil { !exists(rank: 1, title: note.title, count: itemCount + 1) && !exists(rank: 1, title: note.title, count: itemCount) } - start
        }))
        printLatencies(results, barMilliseconds: 100, timeout: timeout)
    }

    /// Every item's path below BACKING: files at any depth, hidden names skipped.
    private func walk(_ relative: String, into files: inout [String]) {
        let path = relative.isEmpty ? backing : "\(backing)/\(relative)"
        for name in (try? listNames(path)) ?? [] where !name.hasPrefix(".") {
            let child = relative.isEmpty ? name : "\(relative)/\(name)"
            var status = stat()
            guard lstat("\(backing)/\(child)", &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR { walk(child, into: &files) } else { files.append(child) }
        }
    }

    private func write(note path: String, title: String) {
        // No tags, as `latency`'s sample payload has none: the same view work, so the figures compare.
        let text = "---\ntitle: \(title)\ntags: []\n---\n# \(title)\n\nBody.\n"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
    }

    private func exists(rank: Int, title: String, count: Int) -> Bool {
        let digits = String(rank)
        let width = max(4, String(count).count)
        let name = String(repeating: "0", count: max(0, width - digits.count)) + digits + " " + title + ".md"
        var status = stat()
        return lstat("\(mount)/by-modified/\(name)", &status) == 0
    }

    private func waitUntil(_ condition: () -> Bool) -> Double {
        let deadline = now() + timeout
        while !condition() {
            if now() > deadline { return .infinity }
            usleep(200)
        }
        return now()
    }
}
