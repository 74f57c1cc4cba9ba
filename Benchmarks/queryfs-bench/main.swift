// queryfs-bench: measurements that need to be taken inside the process.
//
//   queryfs-bench scan BACKING [--rounds N] [--threads N]
//   queryfs-bench phases BACKING                 (where `queryfs ls` spends its time)
//   queryfs-bench latency MOUNT BACKING [--samples N]   (see Latency.swift)
//   queryfs-bench notes-latency MOUNT BACKING [--samples N]   (see NotesLatency.swift)
//   queryfs-bench memory BACKING                 (where the bytes go; MemoryBreakdown.swift)
//   queryfs-bench smallfiles DIR [--count N]     (prints files/s written and read; SmallFiles.swift)
//   queryfs-bench edits MOUNT BACKING [--samples N]     (ln -s / rm through a tag folder; EditLatency.swift)
//   queryfs-bench events MOUNT BACKING [--samples N]    (change in BACKING → inotify event; EventLatency.swift)
//
// Scans BACKING into items and compares the time against the I/O floor: the
// same directory walked with the same statx/open/getdents/read calls and no
// parsing, measured in the same run (interleaved, best of N rounds, caches
// warm). Also reports the peak memory above the process's baseline.

import Logging
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    let line = Array("queryfs-bench: \(message)\n".utf8)
    line.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    exit(2)
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Peak resident set size of this process so far, in bytes.
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return String(rounded)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "latency", arguments.count >= 3 {
    let samples = arguments.count >= 5 && arguments[3] == "--samples" ? Int(arguments[4]) ?? 100 : 100
    LatencyBenchmark(mount: arguments[1], backing: arguments[2], samples: samples).run()
    exit(0)
}
if arguments.first == "notes-latency", arguments.count >= 3 {
    let samples = arguments.count >= 5 && arguments[3] == "--samples" ? Int(arguments[4]) ?? 100 : 100
    NotesLatencyBenchmark(mount: arguments[1], backing: arguments[2], samples: samples).run()
    exit(0)
}
if arguments.first == "edits", arguments.count >= 3 {
    let samples = arguments.count >= 5 && arguments[3] == "--samples" ? Int(arguments[4]) ?? 100 : 100
    EditLatencyBenchmark(mount: arguments[1], backing: arguments[2], samples: samples).run()
    exit(0)
}
if arguments.first == "events", arguments.count >= 3 {
    let samples = arguments.count >= 5 && arguments[3] == "--samples" ? Int(arguments[4]) ?? 100 : 100
    EventLatencyBenchmark(mount: arguments[1], backing: arguments[2], samples: samples).run()
    exit(0)
}
if arguments.first == "memory", arguments.count >= 2 {
    MemoryBreakdown(backing: arguments[1]).run()
    exit(0)
}
if arguments.first == "smallfiles", arguments.count >= 2 {
    let count = arguments.count >= 4 && arguments[2] == "--count" ? Int(arguments[3]) ?? 2000 : 2000
    let result = SmallFilesBenchmark(directory: arguments[1], count: count, size: 4096).run()
    print("\(Int(result.write)) \(Int(result.read))")
    exit(0)
}
if arguments.first == "mount-phases", arguments.count >= 2 {
    // Where the time before a mount is ready goes.
    var start = now()
    let catalog: LiveCatalog
    do { catalog = try LiveCatalog(backingPath: arguments[1], logger: Logger(label: "queryfs-bench", factory: { StreamLogHandler.standardOutput(label: $0) })) } catch { fail("\(error)") }
    print("live catalog (scan + watches + index): \(format(now() - start, 3)) s")
    start = now()
    do { _ = try QueryFilesystem(catalog: catalog) } catch { fail("\(error)") }
    print("filesystem tables: \(format(now() - start, 3)) s")
    exit(0)
}
if arguments.first == "phases", arguments.count >= 2 {
    // Where the time of `queryfs ls BACKING by-modified` goes.
    var start = now()
    let catalog: Catalog
    do { catalog = try Catalog.load(backing: arguments[1]) } catch { fail("\(error)") }
    print("load:   \(format(now() - start, 3)) s")
    for view in [ViewDefinition.byModified, .byName] {
        start = now()
        let selected = view.select(catalog.items)
        print("\(view.pathString) select+sort: \(format(now() - start, 3)) s (\(selected.count))")
        start = now()
        let entries = catalog.entries(of: view)
        print("\(view.pathString) entries:     \(format(now() - start, 3)) s (\(entries.count))")
    }
    exit(0)
}
guard arguments.first == "scan", arguments.count >= 2 else { fail("usage: queryfs-bench scan BACKING [--rounds N] [--threads N]") }
let backing = arguments[1]
var rounds = 3
var threads = Scanner.defaultThreads
var index = 2
while index < arguments.count {
    let value = index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
    switch (arguments[index], value) {
    case ("--rounds", let value?): rounds = max(1, value)
    case ("--threads", let value?): threads = max(1, value)
    default: fail("unexpected argument '\(arguments[index])'")
    }
    index += 2
}

let baseline = peakResidentBytes()
let root: BackingDirectory
do { root = try BackingDirectory(path: backing) } catch { fail("\(error)") }
let scanner = Scanner()

// Warm the page cache and dentry cache once, so both sides read from memory.
_ = try? scanner.walkWithoutParsing(root, threads: threads)

var floorBest = Double.infinity
var scanBest = Double.infinity
var itemCount = 0
var kept: [Item] = []
for _ in 0..<rounds {
    var start = now()
    _ = try? scanner.walkWithoutParsing(root, threads: threads)
    floorBest = min(floorBest, now() - start)

    kept = []
    start = now()
    do { kept = try scanner.scan(root, threads: threads) } catch { fail("\(error)") }
    scanBest = min(scanBest, now() - start)
    itemCount = kept.count
}
let peak = peakResidentBytes()
let perItem = itemCount > 0 ? Double(peak - baseline) / Double(itemCount) : 0

print("scan of \(itemCount) items in \(backing) (\(threads) threads, best of \(rounds))")
print("  scan:        \(format(scanBest, 3)) s  (\(Int(Double(itemCount) / scanBest)) items/s)")
print("  I/O floor:   \(format(floorBest, 3)) s  (same statx/open/getdents/read calls, no parsing)")
print("  ratio:       \(format(scanBest / floorBest))x the floor   (bar: <= 2x)")
print("  peak memory: \(format(Double(peak - baseline) / 1_048_576, 1)) MiB above baseline = \(Int(perItem)) bytes/item   (bar: <= 1024)")
withExtendedLifetime(kept) {}
