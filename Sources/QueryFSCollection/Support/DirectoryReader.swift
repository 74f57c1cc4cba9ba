#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// An entry read from a directory: its name bytes and `d_type`.
package struct DirectoryEntry {
    package var name: [UInt8]
    package var type: UInt8

    package init(name: [UInt8], type: UInt8) {
        self.name = name
        self.type = type
    }

    /// The entry a `readdir` record holds, read within the record's bounds:
    /// a record is only as long as its name (`d_reclen`), so copying
    /// `pointee` or its 256-byte `d_name` reads past the last record of the
    /// buffer (AddressSanitizer: heap-buffer-overflow).
    package init(record: UnsafePointer<dirent>) {
        let raw = UnsafeRawPointer(record)
        let namePointer = raw.advanced(by: Self.nameOffset).assumingMemoryBound(to: CChar.self)
        name = Array(UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer)))
        type = raw.load(fromByteOffset: Self.typeOffset, as: UInt8.self)
    }

    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    private static let typeOffset = MemoryLayout<dirent>.offset(of: \dirent.d_type)!

    package var isDotOrDotDot: Bool {
        name == [0x2E] || name == [0x2E, 0x2E]
    }
}

package enum DirectoryReader {
    /// Reads every entry of the directory open at `fd` (except `.` and `..`),
    /// or the first `limit` of them in the directory's own order.
    /// Takes ownership of `fd` and closes it.
    package static func readEntries(consuming fd: Int32, limit: Int = .max) throws(SystemError) -> [DirectoryEntry] {
        guard let stream = fdopendir(fd) else {
            let error = SystemError.current("fdopendir")
            close(fd)
            throw error
        }
        defer { closedir(stream) }
        return try readEntries(stream, limit: limit)
    }

    /// Reads every entry of an open directory stream (except `.` and `..`), at most `limit`.
    static func readEntries(_ stream: OpaquePointer, limit: Int = .max) throws(SystemError) -> [DirectoryEntry] {
        var entries: [DirectoryEntry] = []
        while entries.count < limit {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemError.current("readdir") }
                return entries
            }
            let item = DirectoryEntry(record: entry)
            if !item.isDotOrDotDot { entries.append(item) }
        }
        return entries
    }

    /// Opens a directory relative to `dirfd` without following a final symlink.
    static func openDirectory(_ name: UnsafePointer<CChar>, in dirfd: Int32) -> Int32 {
        retryingOnEINTR { openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    package static func openForReading(_ path: String) -> Int32 {
        retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Reads everything from `fd` until end of file, then closes it.
    static func readAll(fd: Int32) throws(SystemError) -> [UInt8] {
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw in retryingOnEINTR { read(fd, raw.baseAddress!, raw.count) } }
            if count < 0 { throw SystemError.current("read") }
            if count == 0 { return result }
            result += chunk[0..<count]
        }
    }

    /// The first `count` bytes (fewer if it is shorter) of the regular file
    /// `name` relative to `dirfd`: opened as `readFile` opens, never a wait.
    static func readHead(_ name: UnsafePointer<CChar>, in dirfd: Int32, count: Int) throws(SystemError) -> [UInt8] {
        try readHead(name, in: dirfd, count: count) { _ in }
    }

    /// The same, and `alsoWith` given the open descriptor (a note's tags
    /// attribute read from it: through a path, lgetxattr resolves /proc's
    /// link again, 6 % of a scan of 100,000 notes).
    static func readHead(_ name: UnsafePointer<CChar>, in dirfd: Int32, count: Int, alsoWith: (Int32) -> Void) throws(SystemError) -> [UInt8] {
        let fd = retryingOnEINTR { openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW) }
        guard fd >= 0 else { throw SystemError.current("open") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw SystemError.current("stat") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw SystemError(errno: EINVAL, operation: "open", detail: "not a regular file") }
        alsoWith(fd)
        // As large as the file (one byte more, to see it grew), not `count`
        // zeroed bytes for every small note: that memset was 1.3 % of a scan.
        let size = min(count, Int(clamping: status.st_size) + 1)
        var buffer = [UInt8](repeating: 0, count: size)
        let count = size
        var filled = 0
        while filled < count {
            let requested = count - filled
            let read = buffer.withUnsafeMutableBytes { raw in retryingOnEINTR { pread(fd, raw.baseAddress! + filled, requested, off_t(filled)) } }
            if read < 0 { throw SystemError.current("read") }
            filled += read
            // A regular file reads short only at its end: no second call to
            // hear 0 (one pread per note, not two; 100,000 calls a scan).
            if read < requested { break }
        }
        buffer.removeSubrange(filled...)
        return buffer
    }

    /// Reads a whole regular file relative to `dirfd`, up to `limit` bytes.
    /// Anything else (a FIFO, a device, a socket swapped in under the name)
    /// is an error, never a wait: opened without blocking, checked, then read.
    /// `accepting` may refuse the file by its status (the error it returns is thrown).
    /// A final symbolic link is refused unless `followingLinks` (a
    /// configuration file may be a link elsewhere; an item's file may not).
    /// The one reader of regular files; `readAll` reads what `/proc` makes up
    /// as it is read (its files say size 0 and end reads short).
    static func readFile(_ name: UnsafePointer<CChar>, in dirfd: Int32, expectedSize: Int, limit: Int, followingLinks: Bool = false,
                         accepting: (stat) -> SystemError? = { _ in nil }) throws(SystemError) -> [UInt8] {
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW)
        let fd = retryingOnEINTR { openat(dirfd, name, flags) }
        guard fd >= 0 else { throw SystemError.current("open") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw SystemError.current("stat") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw SystemError(errno: EINVAL, operation: "open", detail: "not a regular file") }
        if let refusal = accepting(status) { throw refusal }
        let size = max(expectedSize, Int(clamping: status.st_size))
        var buffer = [UInt8](repeating: 0, count: min(max(size, 0), limit) + 1)
        var filled = 0
        while true {
            if filled == buffer.count {
                guard buffer.count <= limit else { throw SystemError(errno: EFBIG, operation: "read") }
                buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count))
            }
            let count = buffer.withUnsafeMutableBytes { raw in
                retryingOnEINTR { read(fd, raw.baseAddress! + filled, raw.count - filled) }
            }
            if count < 0 { throw SystemError.current("read") }
            if count == 0 { break }
            let requested = buffer.count - filled
            filled += count
            // A short read of a regular file is its end: skip the read that would return 0.
            if count < requested { break }
        }
        buffer.removeSubrange(filled...)
        return buffer
    }
}

/// `struct statx` fields as queryfs uses them.
struct FileStatus {
    var raw: qfs_stat

    /// lstat (via statx) of `name` relative to `dirfd`.
    init(_ name: UnsafePointer<CChar>, in dirfd: Int32) throws(SystemError) {
        var status = qfs_stat()
        guard qfs_lstatat(dirfd, name, &status) == 0 else { throw SystemError.current("stat") }
        raw = status
    }

    var isDirectory: Bool { raw.mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    var isRegularFile: Bool { raw.mode & UInt32(S_IFMT) == UInt32(S_IFREG) }

    /// What kind of file it is, in words (for a problem line).
    var typeDescription: String {
        switch raw.mode & UInt32(S_IFMT) {
        case UInt32(S_IFDIR): "a folder"
        case UInt32(S_IFLNK): "a symbolic link"
        case UInt32(S_IFIFO): "a FIFO"
        case UInt32(S_IFSOCK): "a socket"
        case UInt32(S_IFCHR), UInt32(S_IFBLK): "a device"
        default: "not a file"
        }
    }
    var size: UInt64 { raw.size }
    var modified: Timestamp { Timestamp(seconds: raw.mtime_sec, nanoseconds: raw.mtime_nsec) }
    /// Birth time where the filesystem records one, else mtime (SPEC §1 `created`).
    var created: Timestamp {
        raw.has_btime != 0 ? Timestamp(seconds: raw.btime_sec, nanoseconds: raw.btime_nsec) : modified
    }
}

extension Array where Element == UInt8 {
    /// Calls `body` with the bytes as a NUL-terminated C string.
    package func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var terminated = self
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}
