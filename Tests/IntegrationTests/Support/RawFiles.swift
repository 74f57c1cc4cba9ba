import Foundation
import QueryFSCollection
#if canImport(Glibc)
import Glibc
#endif

/// File system calls on byte paths (names need not be UTF-8), returning
/// bytes or errno so tests can compare the mount with the backing directory
/// exactly.
enum RawFiles {
    /// Entry names in the order readdir returns them, without `.` and `..`; nil and errno on failure.
    static func list(_ path: [UInt8]) -> [[UInt8]]? {
        guard let directory = path.withCString({ opendir($0) }) else { return nil }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = DirectoryEntry(record: entry).name
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names
    }

    static func list(_ path: String) -> [[UInt8]]? { list(Array(path.utf8)) }

    static func readlink(_ path: [UInt8]) -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: 8192)
        let count = path.withCString { Glibc.readlink($0, &buffer, buffer.count) }
        guard count >= 0 else { return nil }
        return buffer[0..<count].map { UInt8(bitPattern: $0) }
    }

    /// A symlink's target as text (view entries' targets are UTF-8 paths).
    static func linkTarget(_ path: String) -> String? {
        readlink(Array(path.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    static func read(_ path: [UInt8]) -> [UInt8]? {
        let fd = path.withCString { open($0, O_RDONLY) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 { return nil }
            if count == 0 { return result }
            result += buffer[0..<count]
        }
    }

    static func read(_ path: String) -> [UInt8]? { read(Array(path.utf8)) }

    static func lstat(_ path: [UInt8]) -> Glibc.stat? {
        var status = Glibc.stat()
        return path.withCString { Glibc.lstat($0, &status) } == 0 ? status : nil
    }

    static func lstat(_ path: String) -> Glibc.stat? { lstat(Array(path.utf8)) }

    static func stat(_ path: [UInt8]) -> Glibc.stat? {
        var status = Glibc.stat()
        return path.withCString { fstatat(AT_FDCWD, $0, &status, 0) } == 0 ? status : nil
    }

    /// Writes `bytes` to a new or truncated file; errno on failure, 0 on success.
    @discardableResult
    static func write(_ path: String, _ bytes: [UInt8], flags: Int32 = O_WRONLY | O_CREAT | O_TRUNC, mode: mode_t = 0o644) -> Int32 {
        let fd = open(path, flags, mode)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        return written == bytes.count ? 0 : errno
    }

    /// The latest mtime of a path and, for a directory, of everything inside (SPEC §1 `modified`).
    static func latestModification(_ path: [UInt8]) -> timespec {
        guard let status = lstat(path) else { return timespec() }
        var latest = status.st_mtim
        if status.st_mode & S_IFMT == S_IFDIR, let names = list(path) {
            for name in names {
                let inner = latestModification(path + [0x2F] + name)
                if (inner.tv_sec, inner.tv_nsec) > (latest.tv_sec, latest.tv_nsec) { latest = inner }
            }
        }
        return latest
    }
}

extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }
}
