#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// The backing directory, held open: every later read is relative to this
/// descriptor, so the scan sees one directory even if its path is renamed.
package final class BackingDirectory: @unchecked Sendable {
    package let path: String
    package let fd: Int32

    /// Opens `path`; fails with a clear error when it is missing, not a
    /// directory, or unreadable.
    package init(path: String) throws(SystemError) {
        self.path = path
        let fd = retryingOnEINTR { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Names of the items: every entry whose name does not start with `.`.
    package func itemNames() throws(SystemError) -> [ItemName] {
        let copy = dup(fd)
        guard copy >= 0 else { throw SystemError.current("dup", path: path) }
        // A dup shares the file offset: rewind so each listing starts at the top.
        lseek(copy, 0, SEEK_SET)
        do {
            return try DirectoryReader.readEntries(consuming: copy)
                .map { ItemName($0.name) }
                .filter { !$0.isHidden }
        } catch {
            throw SystemError(errno: error.errno, operation: "readdir", path: path)
        }
    }
}
