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

    /// Removes from the folder `dirfd` every leftover whose process is gone
    /// (a live one may still be renaming it into place). Nothing fails: a
    /// leftover that stays is what there was before.
    static func sweep(_ dirfd: Int32) {
        var folder = stat()
        guard fstat(dirfd, &folder) == 0, folder.st_size <= largestSweptFolder else { return }
        let copy = dup(dirfd)
        guard copy >= 0, let entries = try? DirectoryReader.readEntries(consuming: copy) else { return }
        for entry in entries {
            guard let pid = owner(ofLeftover: entry.name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = entry.name.withCString { unlinkat(dirfd, $0, 0) }
        }
    }

    /// The process whose edit named `name`, if it is a leftover's name:
    /// hidden, ending in `.queryfs-PID-N` with PID and N in digits.
    static func owner(ofLeftover name: [UInt8]) -> pid_t? {
        guard name.first == UInt8(ascii: "."), let marker = lastRange(of: Array(".queryfs-".utf8), in: name) else { return nil }
        let rest = name[marker.upperBound...].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        let isNumber = { (part: ArraySlice<UInt8>) in !part.isEmpty && part.count <= 10 && part.allSatisfy { (48...57).contains($0) } }
        guard rest.count == 2, isNumber(rest[0]), isNumber(rest[1]), let pid = pid_t(String(decoding: rest[0], as: UTF8.self)), pid > 0 else {
            return nil
        }
        return pid
    }

    private static func lastRange(of marker: [UInt8], in name: [UInt8]) -> Range<Int>? {
        guard name.count >= marker.count else { return nil }
        for start in stride(from: name.count - marker.count, through: 0, by: -1) where name[start..<(start + marker.count)].elementsEqual(marker) {
            return start..<(start + marker.count)
        }
        return nil
    }
}
