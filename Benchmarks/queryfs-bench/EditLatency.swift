#if canImport(Glibc)
import Glibc
#endif

/// Edits through views (issue 14): the time from `symlink` into a tag
/// folder (join) and `unlink` of the entry (leave) to the call's return —
/// when it returns every view already shows the change — against the I/O
/// the edit cannot avoid, done natively in the same run: the payload read,
/// written beside and renamed over, in BACKING.
struct EditLatencyBenchmark {
    let mount: String
    let backing: String
    let samples: Int

    func run() {
        let tag = "bench-edit-\(getpid())"
        guard mkdir("\(mount)/tag/\(tag)", 0o755) == 0 else { fail("mkdir \(mount)/tag/\(tag): \(String(cString: strerror(errno)))") }
        let names = bundleNames().prefix(samples)
        guard names.count == samples else { fail("\(backing) holds fewer than \(samples) bundles") }
        var joins: [Double] = [], leaves: [Double] = [], native: [Double] = []
        for name in names {
            var start = now()
            guard symlink("../../bundles/\(name)", "\(mount)/tag/\(tag)/x") == 0 else { fail("ln -s \(name): \(String(cString: strerror(errno)))") }
            joins.append(now() - start)
            guard let entry = entries("\(mount)/tag/\(tag)").first else { fail("no entry in tag/\(tag) after ln -s") }
            start = now()
            guard unlink("\(mount)/tag/\(tag)/\(entry)") == 0 else { fail("rm \(entry): \(String(cString: strerror(errno)))") }
            leaves.append(now() - start)
            start = now()
            rewriteNatively("\(backing)/\(name)/payload.plist")
            native.append(now() - start)
        }
        _ = rmdir("\(mount)/tag/\(tag)")
        let reference = percentile(native, 0.5)
        print("  native rewrite p50 \(format(reference, 2)) ms   p99 \(format(percentile(native, 0.99), 1)) ms   (read, write beside, fsync, rename in BACKING)")
        for (kind, values) in [("ln -s (join)", joins), ("rm (leave)", leaves)] {
            print("  \(kind.padding(14)) p50 \(format(percentile(values, 0.5), 1)) ms   p99 \(format(percentile(values, 0.99), 1)) ms"
                + "   = \(format(percentile(values, 0.5) / max(reference, 0.001), 1))x native at p50   (bar: p99 <= 50 ms)")
        }
    }

    private func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000
    }

    private func bundleNames() -> [String] {
        entries(backing).filter { !$0.hasPrefix(".") && $0.hasSuffix(".hpwebsite") }
    }

    private func entries(_ path: String) -> [String] { (try? listNames(path)) ?? [] }

    /// What an edit's write costs at least: read, write beside, fsync, rename.
    private func rewriteNatively(_ path: String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let count = read(fd, &buffer, buffer.count)
        close(fd)
        let temporary = path + ".bench"
        let out = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard out >= 0 else { return }
        _ = buffer.withUnsafeBytes { write(out, $0.baseAddress!, max(0, count)) }
        fsync(out)
        close(out)
        rename(temporary, path)
    }
}
