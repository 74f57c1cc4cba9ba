// queryfs-bench smallfiles DIR [--count N] [--size BYTES]
//
// Small-file throughput: N files of SIZE bytes written (create, write,
// close) then read back (open, read, close) in DIR; prints files per second
// for each phase. Run against a mount with and without --no-coordination to
// see what coordination costs.

#if canImport(Glibc)
import Glibc
#endif

struct SmallFilesBenchmark {
    let directory: String
    let count: Int
    let size: Int

    /// Files per second (write, read), best of `rounds`.
    func run(rounds: Int = 3) -> (write: Double, read: Double) {
        var bestWrite = 0.0, bestRead = 0.0
        let data = [UInt8](repeating: 0x61, count: size)
        var buffer = [UInt8](repeating: 0, count: size + 1)
        for _ in 0..<rounds {
            var start = now()
            for index in 0..<count {
                let fd = open("\(directory)/small-\(index)", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                guard fd >= 0 else { fail("cannot create in \(directory): \(String(cString: strerror(errno)))") }
                _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            bestWrite = max(bestWrite, Double(count) / (now() - start))
            start = now()
            for index in 0..<count {
                let fd = open("\(directory)/small-\(index)", O_RDONLY)
                guard fd >= 0 else { fail("cannot open small-\(index) in \(directory): \(String(cString: strerror(errno)))") }
                _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            bestRead = max(bestRead, Double(count) / (now() - start))
        }
        for index in 0..<count { unlink("\(directory)/small-\(index)") }
        return (bestWrite, bestRead)
    }
}
