// What the latency benchmarks share: the sample payload they write, and
// their report (p50/p99 per kind of change against a bar).

#if canImport(Glibc)
import Glibc
#endif

/// Prints p50 and p99 of each kind's samples (seconds; a timed-out sample
/// is infinite and counted apart) against `barMilliseconds` at p99.
func printLatencies(_ results: [(String, [Double])], barMilliseconds: Int, timeout: Double) {
    for (kind, samples) in results {
        let sorted = samples.filter(\.isFinite).sorted()
        let timedOut = samples.count - sorted.count
        guard !sorted.isEmpty else {
            print("  \(kind.padding(16)) every sample timed out after \(Int(timeout)) s")
            continue
        }
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
        print("  \(kind.padding(16)) p50 \(format(percentile(0.5), 1)) ms   p99 \(format(percentile(0.99), 1)) ms   (bar: p99 <= \(barMilliseconds) ms)"
            + (timedOut > 0 ? "   TIMED OUT: \(timedOut)" : "")
            // p99 is the slowest sample of 100 and the third slowest of 300:
            // the slowest few say whether it stood alone, and their places in
            // the run (#1 is the first change) whether it was the run's start.
            + "   slowest: " + slowest(samples, 4).map { "\(format(samples[$0] * 1000, 1)) (#\($0 + 1))" }.joined(separator: " "))
    }
}

/// The places of the `count` slowest finite samples, slowest first.
private func slowest(_ samples: [Double], _ count: Int) -> [Int] {
    samples.indices.filter { samples[$0].isFinite }.sorted { samples[$0] > samples[$1] }.prefix(count).map { $0 }
}

/// A Hipstapaper payload titled `title`, written at `path` in place (O_TRUNC, as an app saves).
func writeSamplePayload(_ path: String, title: String) {
    let text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>isArchived</key><false/><key>tags</key><array/>\
        <key>webTitle</key><string>\(title)</string></dict></plist>
        """
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = text.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}
