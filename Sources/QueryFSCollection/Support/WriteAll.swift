#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Writes all of `bytes` to `fd`: short writes continued, EINTR retried;
/// any other failure (or a write that makes no progress) is `path`'s error.
func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(SystemError) {
    var done = 0
    while done < bytes.count {
        let written = bytes.withUnsafeBytes { raw in retryingOnEINTR { write(fd, raw.baseAddress! + done, bytes.count - done) } }
        guard written > 0 else { throw written == 0 ? SystemError(errno: EIO, operation: "write", path: path) : .current("write", path: path) }
        done += written
    }
}
