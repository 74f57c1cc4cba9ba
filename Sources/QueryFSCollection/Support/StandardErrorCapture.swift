#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Collects what is written to standard error while `body` runs — by this
/// process or by a child it starts (libfuse runs the setuid `fusermount3`
/// when the caller may not mount, and that helper prints its reason there).
/// The text then becomes part of queryfs's own one error line instead of a
/// second line the user has to match up.
package enum StandardErrorCapture {
    package static func capture<R>(_ body: () throws -> R) rethrows -> (result: R, text: String) {
        var ends: [Int32] = [-1, -1]
        let saved = dup(2)
        guard saved >= 0, pipe(&ends) == 0 else {
            if saved >= 0 { close(saved) }
            return (try body(), "")
        }
        // Never block on a child that keeps the pipe open (auto_unmount helpers live on).
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        dup2(ends[1], 2)
        close(ends[1])
        defer {
            dup2(saved, 2)
            close(saved)
        }
        let result = try body()
        dup2(saved, 2)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = retryingOnEINTR { read(ends[0], &buffer, buffer.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(ends[0])
        let text = String(decoding: bytes, as: UTF8.self)
            .split(separator: "\n").map { $0.trimmingCharacters() }.filter { !$0.isEmpty }.joined(separator: "; ")
        return (result, text)
    }
}

private extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
