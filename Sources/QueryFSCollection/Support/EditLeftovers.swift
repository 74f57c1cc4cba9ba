#if canImport(Glibc)
import Glibc
#endif

/// New files of edits that a killed process left under their own names
/// (`.NAME.queryfs-PID-N`, or `.queryfs-PID-N` for a long NAME: see
/// `AtomicFile`), removed when the next edit of a file in that folder is
/// made. A signal that ends a process is held while such a name exists, but
/// SIGKILL cannot be: found from outside, about 1 `kill -9` in 6 during a
/// burst of edits left one beside the item, for good, where git and sync
/// tools pick it up.
enum EditLeftovers {
    /// Folders larger than this (in bytes, as `st_size` of a directory: on
    /// ext4 about 1,500 names) are not swept at each edit: listing 100,000
    /// notes took 20–30 ms, more than the edit itself. Bundles and the
    /// folders of a vault are far smaller.
    static let largestSweptFolder = 64 << 10

    /// Removes from the folder `dirfd` the leftovers of earlier edits of
    /// `name` whose process is gone (a live one may still be renaming its
    /// file into place). Only what such an edit made can match: a regular
    /// file of this user's, with one link, named `.NAME.queryfs-PID-N` with
    /// PID and N as `AtomicFile` writes them (found from outside: a sweep of
    /// every `.*.queryfs-*` name removed a user's own file, another user's,
    /// a FIFO and a hard link). Nothing fails: a leftover that stays is what
    /// there was before.
    static func sweep(_ dirfd: Int32, name: [UInt8]) {
        var folder = stat()
        guard fstat(dirfd, &folder) == 0, folder.st_size <= largestSweptFolder else { return }
        let prefix = [UInt8(ascii: ".")] + name + Array(".queryfs-".utf8)
        let copy = dup(dirfd)
        guard copy >= 0, let entries = try? DirectoryReader.readEntries(consuming: copy) else { return }
        for entry in entries where entry.name.starts(with: prefix) {
            guard let pid = pid(afterPrefixOf: entry.name, prefixLength: prefix.count), pid != getpid(),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            var status = stat()
            guard entry.name.withCString({ fstatat(dirfd, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0,
                  status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1, status.st_uid == geteuid() else { continue }
            _ = entry.name.withCString { unlinkat(dirfd, $0, 0) }
        }
    }

    /// The PID in `PID-N` after the prefix, both written as decimal numbers
    /// are (no sign, no leading zero); nil for any other name.
    static func pid(afterPrefixOf name: [UInt8], prefixLength: Int) -> pid_t? {
        let parts = name.dropFirst(prefixLength).split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        let isNumber = { (part: ArraySlice<UInt8>) in
            !part.isEmpty && part.count <= 10 && part.allSatisfy { (48...57).contains($0) } && (part.count == 1 || part.first != 48)
        }
        guard parts.count == 2, isNumber(parts[0]), isNumber(parts[1]), let pid = pid_t(String(decoding: parts[0], as: UTF8.self)), pid > 0 else {
            return nil
        }
        return pid
    }
}
