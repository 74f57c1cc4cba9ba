#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// Coordinated reads and writes of items, in the spirit of
/// NSFileCoordinator and JSBFilesystem's helpers: every call takes the
/// item's lock (shared to read, exclusive to write) for exactly as long as it
/// needs, so no other coordinated process sees a half-done change.
package struct Coordinator: Sendable {
    package let backing: BackingDirectory
    /// Longest wait for a lock, in seconds (nil: wait as long as it takes).
    package var timeout: Double?

    package init(backing: BackingDirectory, timeout: Double? = 10) {
        self.backing = backing
        self.timeout = timeout
    }

    // MARK: Files inside an item

    /// Reads `file` of bundle `item` (or the plain file `item` itself when
    /// `file` is nil) under the item's shared lock.
    package func read(_ item: ItemName, file: String? = nil) throws -> [UInt8] {
        let lock = try ItemLock(item: item, in: backing.fd)
        return try lock.withLock(.shared, timeout: timeout) {
            try readUnlocked(item, file: file)
        }
    }

    /// Replaces the contents of `file` in bundle `item` (or the plain file
    /// `item`) under the item's exclusive lock: written beside, flushed, then
    /// renamed over, so even an uncoordinated reader sees old or new, whole.
    package func write(_ data: [UInt8], to item: ItemName, file: String? = nil) throws {
        let lock = try ItemLock(item: item, in: backing.fd)
        try lock.withLock(.exclusive, timeout: timeout) {
            try writeUnlocked(data, item, file: file)
        }
    }

    /// Reads, transforms and writes back `file` as one coordinated step: no
    /// other writer can slip in between the read and the write.
    package func transform(_ item: ItemName, file: String? = nil, _ change: ([UInt8]) throws -> [UInt8]) throws {
        let lock = try ItemLock(item: item, in: backing.fd)
        try lock.withLock(.exclusive, timeout: timeout) {
            try writeUnlocked(try change(try readUnlocked(item, file: file)), item, file: file)
        }
    }

    // MARK: Whole bundles

    /// Every regular file at the top of bundle `item`, read under one shared lock.
    package func readBundle(_ item: ItemName) throws -> [String: [UInt8]] {
        let lock = try ItemLock(item: item, in: backing.fd)
        return try lock.withLock(.shared, timeout: timeout) {
            let bundleFD = try openDirectory(item)
            defer { close(bundleFD) }
            var files: [String: [UInt8]] = [:]
            for entry in try DirectoryReader.readEntries(consuming: dup(bundleFD)) {
                let status = try entry.name.withCString { try FileStatus($0, in: bundleFD) }
                guard status.isRegularFile else { continue }
                files[String(decoding: entry.name, as: UTF8.self)] = try entry.name.withCString {
                    try DirectoryReader.readFile($0, in: bundleFD, expectedSize: Int(status.size), limit: Int.max / 2)
                }
            }
            return files
        }
    }

    /// Replaces bundle `item` whole and atomically: the new bundle is built
    /// beside it (hidden, so never an item), its files flushed, and then
    /// exchanged with the old one by `renameat2(RENAME_EXCHANGE)` under the old
    /// bundle's exclusive lock. Readers see the old bundle or the new one.
    /// Creates the bundle if it does not exist.
    package func replaceBundle(_ item: ItemName, with files: [String: [UInt8]]) throws {
        let staging = ItemName(Array(".\(item.description).queryfs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))".utf8))
        try staging.withCString { name in
            guard mkdirat(backing.fd, name, 0o755) == 0 else { throw SystemError.current("mkdir", path: staging.description) }
        }
        do {
            let stagingFD = try openDirectory(staging)
            defer { close(stagingFD) }
            for (fileName, data) in files.sorted(by: { $0.key < $1.key }) {
                try writeFile(data, named: Array(fileName.utf8), in: stagingFD)
            }
            guard retryingOnEINTR({ fsync(stagingFD) }) == 0 else { throw SystemError.current("fsync", path: staging.description) }
        } catch {
            removeTree(staging)
            throw error
        }

        let existing = try? ItemLock(item: item, in: backing.fd)
        do {
            try existing?.lock(.exclusive, timeout: timeout)
        } catch {
            removeTree(staging)
            throw error
        }
        defer { existing?.unlock() }
        let flags = existing == nil ? QFS_RENAME_NOREPLACE : QFS_RENAME_EXCHANGE
        let renamed = staging.withCString { from in
            item.withCString { to in qfs_renameat2(backing.fd, from, backing.fd, to, flags) }
        }
        guard renamed == 0 else {
            let error = SystemError.current("rename", path: item.description)
            removeTree(staging)
            throw error
        }
        if existing != nil { removeTree(staging) }  // the old bundle now sits at the staging name
        // Published only once BACKING's folder is on disk (the rename is in it).
        try AtomicFile.syncFolder(backing.fd, path: item.description)
    }

    // MARK: Removing

    /// Removes item `item` under its exclusive lock: first renamed to a
    /// hidden name (never an item), so it leaves the folder in one step and
    /// no reader sees it half removed, then its files removed. A file that
    /// cannot be removed is reported with the hidden name it was left under.
    package func delete(_ item: ItemName) throws {
        let lock = try ItemLock(item: item, in: backing.fd)
        try lock.withLock(.exclusive, timeout: timeout) {
            let removed = ItemName(".queryfs-removed-\(getpid())-\(item.description)")
            let renamed = item.withCString { from in
                removed.withCString { to in qfs_renameat2(backing.fd, from, backing.fd, to, QFS_RENAME_NOREPLACE) }
            }
            guard renamed == 0 else { throw SystemError.current("rename", path: item.description) }
            try AtomicFile.syncFolder(backing.fd, path: item.description)
            if let failure = removeTreeReporting(removed.bytes, in: backing.fd) {
                throw SystemError(errno: failure.errno, operation: "remove", path: removed.description + failure.path,
                                  detail: "\(item) is gone from the folder, but this was left: \(failure.message)")
            }
        }
    }

    /// Removes `name` and everything in it; the first failure, if any.
    private func removeTreeReporting(_ name: [UInt8], in dirfd: Int32, path: String = "") -> SystemError? {
        var first: SystemError?
        let fd = name.withCString { DirectoryReader.openDirectory($0, in: dirfd) }
        if fd >= 0 {
            defer { close(fd) }
            do {
                for entry in try DirectoryReader.readEntries(consuming: dup(fd)) {
                    let entryPath = path + "/" + String(decoding: entry.name, as: UTF8.self)
                    if entry.type == UInt8(DT_DIR) {
                        first = first ?? removeTreeReporting(entry.name, in: fd, path: entryPath)
                    } else if entry.name.withCString({ unlinkat(fd, $0, 0) }) != 0 {
                        first = first ?? SystemError.current("unlink", path: entryPath)
                    }
                }
            } catch {
                first = first ?? error
            }
        } else if errno != ENOTDIR {
            return SystemError.current("open", path: path)
        }
        let flags = fd >= 0 ? AT_REMOVEDIR : 0
        if name.withCString({ unlinkat(dirfd, $0, flags) }) != 0 { first = first ?? SystemError.current("remove", path: path) }
        return first
    }

    // MARK: Helpers

    private func readUnlocked(_ item: ItemName, file: String?) throws -> [UInt8] {
        guard let file else {
            return try item.withCString { try DirectoryReader.readFile($0, in: backing.fd, expectedSize: 4096, limit: Int.max / 2) }
        }
        let bundleFD = try openDirectory(item)
        defer { close(bundleFD) }
        return try file.withCString { try DirectoryReader.readFile($0, in: bundleFD, expectedSize: 4096, limit: Int.max / 2) }
    }

    private func writeUnlocked(_ data: [UInt8], _ item: ItemName, file: String?) throws {
        guard let file else { return try writeFile(data, named: item.bytes, in: backing.fd) }
        let bundleFD = try openDirectory(item)
        defer { close(bundleFD) }
        try writeFile(data, named: Array(file.utf8), in: bundleFD)
    }

    private func openDirectory(_ name: ItemName) throws -> Int32 {
        let fd = name.withCString { DirectoryReader.openDirectory($0, in: backing.fd) }
        guard fd >= 0 else { throw SystemError.current("open", path: name.description) }
        return fd
    }

    /// Writes `data` beside `name`, flushed, and renames it over (`AtomicFile`: mode and owner kept).
    private func writeFile(_ data: [UInt8], named name: [UInt8], in dirfd: Int32) throws {
        try AtomicFile.replace(name, in: dirfd, with: data)
    }

    /// Removes a staging tree (best effort).
    private func removeTree(_ name: ItemName) {
        removeTree(name.bytes, in: backing.fd)
    }

    private func removeTree(_ name: [UInt8], in dirfd: Int32) {
        let fd = name.withCString { DirectoryReader.openDirectory($0, in: dirfd) }
        if fd >= 0 {
            for entry in (try? DirectoryReader.readEntries(consuming: dup(fd))) ?? [] {
                if entry.type == UInt8(DT_DIR) { removeTree(entry.name, in: fd) } else {
                    _ = entry.name.withCString { unlinkat(fd, $0, 0) }
                }
            }
            close(fd)
        }
        _ = name.withCString { unlinkat(dirfd, $0, AT_REMOVEDIR) }
    }
}
