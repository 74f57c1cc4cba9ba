// queryfs-bench latency MOUNT BACKING [--samples N]
//
// Change latency: from a write in BACKING returning to the new state being
// visible through the mount, polled with lstat/readlink of the view entry
// that must appear or vanish (one lookup per poll, so polling itself stays
// cheap at any view size). Prints p50 and p99 per kind of change.

#if canImport(Glibc)
import Glibc
#endif
import QueryFSCollection

struct LatencyBenchmark {
    let mount: String
    let backing: String
    let samples: Int
    /// Give up on one sample after this long.
    let timeout = 5.0

    func run() {
        print("change latency through \(mount) (\(samples) samples each; write returned → visible in by-modified)")
        var counter = 0
        func unique() -> String {
            counter += 1
            return "zz latency \(getpid()) \(counter)"
        }
        var results: [(String, [Double])] = []
        itemCount.value = bundleNames().count

        // Payload rewrite: an existing bundle gets a new title and becomes the newest.
        let victims = bundleNames().prefix(samples)
        results.append(("payload rewrite", victims.map { name in
            let title = unique()
            nextClockTick()
            let start = now()
            writeSamplePayload("\(backing)/\(name)/payload.plist", title: title)
            return waitUntil { entryExists(view: "by-modified", rank: 1, title: title, ext: "hpwebsite") } - start
        }))
        // Create: a new bundle, newest of all.
        var created: [(name: String, title: String)] = []
        results.append(("create", (0..<samples).map { _ in
            let title = unique()
            let name = "\(title.replacingSpaces()).hpwebsite"
            created.append((name, title))
            itemCount.value += 1
            nextClockTick()
            let start = now()
            mkdir("\(backing)/\(name)", 0o755)
            writeSamplePayload("\(backing)/\(name)/payload.plist", title: title)
            return waitUntil { entryExists(view: "by-modified", rank: 1, title: title, ext: "hpwebsite") } - start
        }))
        // Rename: each created bundle gets a new name; its entry keeps its
        // name and rank (a rename leaves mtimes alone) and its target follows.
        // The k-th created (from 0) is at rank samples - k.
        var renamed: [(name: String, title: String)] = []
        results.append(("rename", created.enumerated().map { index, bundle in
            let newName = "r-" + bundle.name
            renamed.append((newName, bundle.title))
            let rank = created.count - index
            let start = now()
            rename("\(backing)/\(bundle.name)", "\(backing)/\(newName)")
            return waitUntil { target(view: "by-modified", rank: rank, title: bundle.title) == "../bundles/\(newName)" } - start
        }))
        // Delete: the newest bundle first, so the one removed is always at rank 1.
        results.append(("delete", renamed.reversed().map { bundle in
            itemCount.value -= 1
            let start = now()
            removeBundle("\(backing)/\(bundle.name)")
            return waitUntil { !entryExists(view: "by-modified", rank: 1, title: bundle.title, ext: "hpwebsite") } - start
        }))
        printLatencies(results, barMilliseconds: 100, timeout: timeout)
    }

    /// How many items BACKING holds, kept up to date by the samples (a
    /// directory listing per poll would cost more than the change measured).
    private let itemCount = Counter()

    private var width: Int {
        // Ranks are padded to max(4, digits of the view's count).
        max(4, String(itemCount.value).count)
    }

    private func entryName(rank: Int, title: String, ext: String) -> String {
        let digits = String(rank)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits + " " + title + "." + ext
    }

    private func entryExists(view: String, rank: Int, title: String, ext: String) -> Bool {
        var status = stat()
        return lstat("\(mount)/\(view)/\(entryName(rank: rank, title: title, ext: ext))", &status) == 0
    }

    private func target(view: String, rank: Int, title: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let path = "\(mount)/\(view)/\(entryName(rank: rank, title: title, ext: "hpwebsite"))"
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { readlink(path, $0.baseAddress!, $0.count) }
        }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// File times come from a coarse clock (one tick is up to 10 ms): two
    /// writes within a tick tie in by-modified and then rank by name, which
    /// would put the newest item at rank 2. Waiting out the tick before each
    /// sample keeps "newest" strict; it is not part of the time measured.
    private func nextClockTick() {
        usleep(12_000)
    }

    private func bundleNames() -> [String] {
        ((try? listNames(backing)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    private func waitUntil(_ condition: () -> Bool) -> Double {
        let deadline = now() + timeout
        while !condition() {
            if now() > deadline { return .infinity }  // counted and reported as a timeout
            usleep(200)
        }
        return now()
    }

    private func removeBundle(_ path: String) {
        if let names = try? listNames(path) { for name in names { unlink("\(path)/\(name)") } }
        rmdir(path)
    }
}

/// Names in a directory (excluding . and ..).
func listNames(_ path: String) throws -> [String] {
    guard let directory = opendir(path) else { throw POSIXFailure(path: path) }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = String(decoding: DirectoryEntry(record: entry).name, as: UTF8.self)
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

final class Counter { var value = 0 }

struct POSIXFailure: Error { let path: String }

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    func replacingSpaces() -> String { String(map { $0 == " " ? "-" : $0 }) }
}
