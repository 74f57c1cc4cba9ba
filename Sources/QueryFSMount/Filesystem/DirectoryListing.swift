#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// What an open view-side directory lists: built once at opendir, so a
/// listing read in several readdir calls is one consistent state.
final class DirectoryListing {
    struct Entry {
        var name: [UInt8]
        var attributes: stat
        /// Zero for `.` and `..` (the kernel then takes no lookup for them).
        var id: UInt64
    }

    let count: Int
    let entry: (Int) -> Entry

    init(count: Int, entry: @escaping (Int) -> Entry) {
        self.count = count
        self.entry = entry
    }

    /// Fills a readdir(plus) reply from `offset` (0 = the start; entry i has
    /// offset i + 1). Returns the index after the last entry sent.
    @discardableResult
    func reply(_ request: fuse_req_t?, size: Int, offset: Int, plus: Bool, timeout: Double) -> Int {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(size, 1))
        defer { buffer.deallocate() }
        var used = 0
        var index = offset
        while index < count {
            var item = entry(index)
            let needed: Int = item.name.withCString { name in
                if plus {
                    var parameters = fuse_entry_param()
                    parameters.ino = item.id
                    parameters.generation = 1
                    parameters.attr = item.attributes
                    parameters.attr_timeout = item.id == 0 ? 0 : timeout
                    parameters.entry_timeout = item.id == 0 ? 0 : timeout
                    return fuse_add_direntry_plus(request, buffer + used, size - used, name, &parameters, off_t(index + 1))
                }
                return fuse_add_direntry(request, buffer + used, size - used, name, &item.attributes, off_t(index + 1))
            }
            if needed > size - used { break }
            used += needed
            index += 1
        }
        fuse_reply_buf(request, buffer, used)
        return index
    }
}
