#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// The lock of an item (SPEC §5): `flock(2)` on the item itself in the
/// backing directory — the bundle directory or the plain file — shared to
/// read, exclusive to write. The same lock `flock(1)` takes from a shell.
///
/// An `ItemLock` owns its own open file description, so it conflicts with
/// every other holder, including other `ItemLock`s in this process.
package final class ItemLock: @unchecked Sendable {
    package enum Mode: Sendable {
        case shared, exclusive
        var operation: Int32 { self == .shared ? LOCK_SH : LOCK_EX }
    }

    /// The lock could not be taken within the allowed wait.
    package struct Timeout: Error, CustomStringConvertible, Sendable {
        package let path: String
        package let seconds: Double
        package var description: String {
            "\(path): still locked by another process after \(seconds) s"
        }
    }

    package let fd: Int32
    package let path: String

    /// Only bundles and regular files carry a lock: anything else (a FIFO,
    /// a socket, a device) is not opened — opening a device can act on it —
    /// and reads as this error (errno ENOTSUP).
    package static let notLockable = "not a bundle or a regular file: it has no lock"

    /// Opens the item `name` inside the directory `dirfd` for locking.
    package init(item name: ItemName, in dirfd: Int32, displayPath: String? = nil) throws(SystemError) {
        path = displayPath ?? name.description
        let path = self.path
        fd = try name.bytes.withCString { cName in Result { () throws(SystemError) in try Self.open(cName, in: dirfd, path: path) } }.get()
    }

    /// Opens the item at `path` for locking.
    package init(path: String) throws(SystemError) {
        self.path = path
        fd = try path.withCString { cPath in Result { () throws(SystemError) in try Self.open(cPath, in: AT_FDCWD, path: path) } }.get()
    }

    private static func open(_ name: UnsafePointer<CChar>, in dirfd: Int32, path: String) throws(SystemError) -> Int32 {
        var status = stat()
        guard fstatat(dirfd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { throw SystemError.current("open", path: path) }
        let type = status.st_mode & S_IFMT
        guard type == S_IFDIR || type == S_IFREG else { throw SystemError(errno: ENOTSUP, operation: "lock", path: path, detail: notLockable) }
        var fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        // A write-only file (mode 0200) can still be locked through a descriptor opened for writing.
        if fd < 0, errno == EACCES, type == S_IFREG { fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        return fd
    }

    deinit { close(fd) }

    /// Takes the lock without waiting; false if someone else holds a conflicting one.
    package func tryLock(_ mode: Mode) throws(SystemError) -> Bool {
        if flock(fd, mode.operation | LOCK_NB) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw SystemError.current("flock", path: path)
    }

    /// Takes the lock, waiting at most `timeout` seconds (nil: as long as it takes).
    /// Polls with a growing pause, so a waiter never blocks in the kernel
    /// beyond its bound and stays cancellable. The pause starts short and
    /// stays at most 1 ms for the first 50 ms: the usual holder is the live
    /// index reading the item for a few milliseconds, and a writer that
    /// overslept it would pay more than the lock itself costs.
    package func lock(_ mode: Mode, timeout: Double?) throws -> Void {
        guard let timeout else {
            while flock(fd, mode.operation) != 0 {
                guard errno == EINTR else { throw SystemError.current("flock", path: path) }
            }
            return
        }
        let start = monotonicSeconds()
        let deadline = start + timeout
        var pause: useconds_t = 20
        while true {
            if try tryLock(mode) { return }
            let now = monotonicSeconds()
            if now >= deadline { throw Timeout(path: path, seconds: timeout) }
            usleep(pause)
            pause = min(pause * 2, now - start < 0.05 ? 1_000 : 20_000)
        }
    }

    package func unlock() {
        _ = flock(fd, LOCK_UN)
    }

    /// Runs `body` holding the lock.
    package func withLock<R>(_ mode: Mode, timeout: Double?, _ body: () throws -> R) throws -> R {
        try lock(mode, timeout: timeout)
        defer { unlock() }
        return try body()
    }
}
