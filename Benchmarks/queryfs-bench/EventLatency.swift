// queryfs-bench events MOUNT BACKING [--samples N]
//
// Event latency (issue 15): from a change in BACKING returning to the
// inotify event for it arriving at a watcher of MOUNT/by-modified — the
// kernel's own inotify, as inotifywait and GIO use it (read here directly,
// so a helper process's scheduling is not part of the time). Prints p50 and
// p99 per kind of change.

#if canImport(Glibc)
import Glibc
#endif

struct EventLatencyBenchmark {
    let mount: String
    let backing: String
    let samples: Int
    let timeout = 5.0

    func run() {
        let watcher = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard watcher >= 0 else { fail("inotify_init1: \(String(cString: strerror(errno)))") }
        defer { close(watcher) }
        let view = "\(mount)/by-modified"
        guard inotify_add_watch(watcher, view, UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE)) >= 0 else {
            fail("inotify_add_watch \(view): \(String(cString: strerror(errno)))")
        }
        print("event latency at \(view) (\(samples) samples each; write in BACKING returned → event read by an inotify watcher)")
        var count = ((try? listNames(backing)) ?? []).filter { !$0.hasPrefix(".") }.count
        var results: [(String, [Double])] = []
        var created: [String] = []
        results.append(("create", (0..<samples).map { number in
            let title = "zz event \(getpid()) \(number)"
            let name = title.replacingSpaces() + ".hpwebsite"
            created.append(name)
            count += 1
            usleep(12_000)  // a new clock tick: the new bundle is strictly the newest (see Latency.swift)
            drain(watcher)
            let start = now()
            writeBundle("\(backing)/\(name)", title: title)
            return waitFor(watcher, name: entryName(rank: 1, title: title, count: count), kinds: UInt32(IN_CREATE | IN_MOVED_TO)) - start
        }))
        results.append(("payload rewrite", created.enumerated().map { number, name in
            let title = "zz rewritten \(getpid()) \(number)"
            usleep(12_000)
            drain(watcher)
            let start = now()
            writeSamplePayload("\(backing)/\(name)/payload.plist", title: title)
            return waitFor(watcher, name: entryName(rank: 1, title: title, count: count), kinds: UInt32(IN_CREATE | IN_MOVED_TO)) - start
        }))
        results.append(("delete", created.reversed().enumerated().map { number, name in
            // The newest first: the one removed is always at rank 1.
            let title = "zz rewritten \(getpid()) \(created.count - 1 - number)"
            let entry = entryName(rank: 1, title: title, count: count)
            count -= 1
            drain(watcher)
            let start = now()
            unlink("\(backing)/\(name)/payload.plist")
            rmdir("\(backing)/\(name)")
            return waitFor(watcher, name: entry, kinds: UInt32(IN_DELETE | IN_MOVED_FROM)) - start
        }))
        printLatencies(results, barMilliseconds: 50, timeout: timeout)
    }

    private func entryName(rank: Int, title: String, count: Int) -> String {
        let width = max(4, String(count).count)
        let digits = String(rank)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits + " " + title + ".hpwebsite"
    }

    /// Reads events until one of `kinds` for `name` arrives; the time it was read.
    private func waitFor(_ watcher: Int32, name: String, kinds: UInt32) -> Double {
        let deadline = now() + timeout
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while now() < deadline {
            var descriptor = pollfd(fd: watcher, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(watcher, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            var offset = 0
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                guard offset + 16 + length <= count else { break }
                let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                if mask & kinds != 0, String(decoding: nameBytes, as: UTF8.self) == name { return now() }
                offset += 16 + length
            }
        }
        return .infinity
    }

    private func drain(_ watcher: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while buffer.withUnsafeMutableBytes({ read(watcher, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// The bundle made beside BACKING and renamed in: one change, as a sync tool makes it.
    private func writeBundle(_ path: String, title: String) {
        let staging = backing + "/../.event-staging"
        mkdir(staging, 0o755)
        writeSamplePayload(staging + "/payload.plist", title: title)
        rename(staging, path)
    }
}
