#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Finds queryfs mounts in /proc/mounts: a mount's source (fsname) is its
/// backing directory, so `queryfs watch MOUNTPOINT/VIEW` can find the data.
package enum MountTable {
    package struct Mount: Sendable, Equatable {
        package var source: String
        package var mountPoint: String
        package var type: String
        /// As /proc/mounts lists them: `rw,nosuid,nodev,relatime,user_id=1000,group_id=1000`.
        package var options: [String] = []

        /// Who mounted this FUSE filesystem: the uid of its `user_id=`
        /// option, which the kernel writes (fusermount3 refuses it from the
        /// user). nil without exactly one such option holding a number.
        package var fuseOwner: uid_t? {
            let owners = options.filter { $0.hasPrefix("user_id=") }
            guard owners.count == 1 else { return nil }
            let digits = owners[0].dropFirst("user_id=".count)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return uid_t(digits)
        }

        /// Whether `caller` may take this FUSE mount's word for what it is:
        /// mounted by `caller` or by root. Anyone may mount a FUSE filesystem
        /// of type fuse.queryfs whose source names any folder (fusermount3
        /// takes `fsname=` and `subtype=` from the user), and its daemon
        /// answers what it likes.
        package func isTrusted(by caller: uid_t) -> Bool {
            guard let owner = fuseOwner else { return false }
            return owner == caller || owner == 0
        }
    }

    package static func mounts(table: String? = nil) -> [Mount] {
        let text = table ?? (try? readWholeFile("/proc/mounts")) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count >= 3 else { return nil }
            let options = fields.count > 3 ? fields[3].split(separator: ",").map(String.init) : []
            return Mount(source: unescape(fields[0]), mountPoint: unescape(fields[1]), type: String(fields[2]), options: options)
        }
    }

    /// The queryfs mounts of the backing directory `source` (resolved) that
    /// `caller` trusts (`Mount.isTrusted(by:)`), in the table's order: what
    /// `queryfs ls BACKING` and `status BACKING` may read instead of BACKING.
    /// Another user's mount is left out, as if BACKING were not mounted.
    package static func trustedQueryfsMounts(ofBacking source: String, caller: uid_t = geteuid(), table: String? = nil) -> [Mount] {
        mounts(table: table).filter { $0.type == "fuse.queryfs" && $0.source == source && $0.isTrusted(by: caller) }
    }

    /// The queryfs mount containing `path` (an absolute path), and the rest of the path below it.
    package static func queryfsMount(containing path: String, table: String? = nil) -> (mount: Mount, rest: String)? {
        let candidates = mounts(table: table).filter { $0.type == "fuse.queryfs" || $0.type == "fuse" && $0.source.hasPrefix("/") }
        var best: (Mount, String)?
        for mount in candidates {
            let root = mount.mountPoint == "/" ? "" : mount.mountPoint
            guard path == root || path.hasPrefix(root + "/") else { continue }
            if best == nil || mount.mountPoint.count > best!.0.mountPoint.count {
                best = (mount, String(path.dropFirst(root.count + (path == root ? 0 : 1))))
            }
        }
        return best
    }

    /// /proc/mounts escapes space, tab, newline and backslash as \\ooo octal.
    package static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let value = UInt8(String(decoding: utf8[(index + 1)..<min(index + 4, utf8.count)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Reads a whole (small) file as text, until its end: for what `/proc` and
/// the mount's status file make up as they are read (sizes 0, short reads).
/// Regular files of BACKING and the configuration go through `DirectoryReader.readFile`.
package func readWholeFile(_ path: String) throws(SystemError) -> String {
    let fd = DirectoryReader.openForReading(path)
    guard fd >= 0 else { throw SystemError.current("open", path: path) }
    return String(decoding: try DirectoryReader.readAll(fd: fd), as: UTF8.self)
}
