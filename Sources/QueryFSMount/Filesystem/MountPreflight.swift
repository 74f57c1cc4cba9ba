#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine
import QueryFSCollection

/// The checks made before mounting, each failing with the one line the
/// user needs (SPEC §3: on any error, exit non-zero and mount nothing).
package enum MountPreflight {
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// Checks MOUNTPOINT: exists, is a directory, is empty (unless `allowNonEmpty`),
    /// is not already a mount, and is not a stale mount left by a killed daemon.
    /// `backing`: when given and empty while MOUNTPOINT is not, the two
    /// were likely given the other way round, and the message says so.
    package static func checkMountPoint(_ path: String, allowNonEmpty: Bool, backing: String? = nil) throws(Failure) {
        var status = stat()
        if stat(path, &status) != 0 {
            switch errno {
            case ENOTCONN:
                throw Failure("\(path) is a stale mount (Transport endpoint is not connected): a queryfs daemon was killed; "
                    + "clear it with `fusermount3 -u \(path)` (or `queryfs unmount \(path)`) and mount again")
            case ENOENT:
                throw Failure("mount point \(path) does not exist")
            default:
                throw Failure("mount point \(path): \(String(cString: strerror(errno)))")
            }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure("mount point \(path) is not a directory") }
        if isMountPoint(path, status: status) {
            // The way out named for what is there: `queryfs unmount` takes away queryfs mounts only.
            let absolute = resolvedPath(path) ?? lexicallyAbsolute(path)
            let type = MountTable.mounts().last { $0.mountPoint == absolute }?.type
            throw Failure(type == "fuse.queryfs" || type == nil
                ? "\(path) is already a mount point (`queryfs unmount \(path)` unmounts it)"
                : "\(path) is already a mount point, of a \(type ?? "") filesystem (umount(8) unmounts it)")
        }
        if !allowNonEmpty, !isEmptyDirectory(path) {
            // Found from outside: the hint to use -o nonempty, taken, hid the collection under an empty mount.
            if let backing, isEmptyDirectory(backing) {
                throw Failure("mount point \(path) is not empty, and the collection \(backing) is: the other way round? "
                    + "(`queryfs mount BACKING MOUNTPOINT`: the collection first)")
            }
            throw Failure("mount point \(path) is not empty (use -o nonempty to mount over it anyway)")
        }
    }

    /// Claims the mount point for this start: an exclusive lock on the
    /// folder, held (the descriptor returned) until the daemon ends, then
    /// the mount check made again. Two `queryfs mount` at once both passed
    /// `checkMountPoint` before either mounted, and stacked two mounts
    /// (found from outside: three at once left two daemons on one folder).
    package static func claimMountPoint(_ path: String) throws(Failure) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure("mount point \(path): \(String(cString: strerror(errno)))") }
        // A filesystem without locks (ENOLCK, ENOSYS: NFS, a FUSE folder) is
        // mounted on unclaimed, as before: refusing would help no one.
        if flock(fd, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK {
            close(fd)
            // Said as both things it can be (found from outside: after a busy unmount, "being mounted" misled).
            throw Failure("mount point \(path) is held by another queryfs daemon: one mounting it now, or one unmounted while "
                + "programs still used it, which ends once they let go")
        }
        var status = stat()
        if stat(path, &status) != 0 || isMountPoint(path, status: status) {
            close(fd)
            throw Failure("\(path) is already a mount point (`queryfs unmount \(path)` unmounts it)")
        }
        return fd
    }

    /// Checks that BACKING (resolved) is a directory.
    package static func checkBacking(_ path: String) throws(Failure) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw Failure("backing directory \(path): \(String(cString: strerror(errno)))") }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure("backing directory \(path) is not a directory") }
    }

    /// Checks that BACKING and MOUNTPOINT (both resolved) lie apart. A
    /// mount point inside BACKING would be read as one of its items, and
    /// the daemon would then wait on requests to its own mount: a deadlock
    /// no signal ends. BACKING inside the mount point is hidden by the
    /// mount. Compared by device and inode along each path, so that a
    /// bind mount of one under another name is found too.
    package static func checkPlacement(backing: String, mountPoint: String) throws(Failure) {
        guard let backingNode = node(backing), let mountPointNode = node(mountPoint) else { return }
        if backingNode == mountPointNode {
            throw Failure("mount point \(mountPoint) is the backing directory itself: mount its views at an empty folder elsewhere")
        }
        if folders(enclosing: mountPoint).contains(backingNode) {
            throw Failure("mount point \(mountPoint) is inside the backing directory \(backing): its views would be read as items; "
                + "mount them at an empty folder outside BACKING")
        }
        if folders(enclosing: backing).contains(mountPointNode) {
            throw Failure("the backing directory \(backing) is inside the mount point \(mountPoint), which would hide it; "
                + "mount at an empty folder outside BACKING")
        }
    }

    private struct Node: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    private static func node(_ path: String) -> Node? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Node(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The folders above absolute `path`, up to `/`.
    private static func folders(enclosing path: String) -> [Node] {
        var folders: [Node] = []
        var rest = Substring(path)
        while let slash = rest.lastIndex(of: "/") {
            rest = rest[..<slash]
            if let node = node(rest.isEmpty ? "/" : String(rest)) { folders.append(node) }
        }
        return folders
    }

    /// Fewest open descriptors a mount works in: its own (the device,
    /// BACKING, the watcher's, the journal's, an edit's), a passthrough
    /// cache of a quarter of the limit, and what programs hold open through it.
    package static let minimumDescriptors = 128

    /// Checks that /dev/fuse exists and can be opened.
    package static func checkFuseDevice() throws(Failure) {
        let fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)
        if fd >= 0 {
            close(fd)
            return
        }
        switch errno {
        case ENOENT: throw Failure("/dev/fuse does not exist: load the fuse module (`modprobe fuse`) or give the container the device")
        case EACCES, EPERM: throw Failure("not permitted to open /dev/fuse: run as root, or as a user allowed to use FUSE")
        default: throw Failure("cannot open /dev/fuse: \(String(cString: strerror(errno)))")
        }
    }

    static func isMountPoint(_ path: String, status: stat) -> Bool {
        var parent = stat()
        guard stat(path + "/..", &parent) == 0 else { return false }
        if parent.st_dev != status.st_dev { return true }
        // Same device (a bind mount of the same filesystem): ask the mount table.
        let absolute = resolvedPath(path) ?? path
        return MountTable.mounts().contains { $0.mountPoint == absolute }
    }

    /// Through `DirectoryReader`, the one reader of directory records (it
    /// reads each name within its record's bounds). A folder that cannot be
    /// opened or listed counts as not empty: the mount is refused, not risked.
    static func isEmptyDirectory(_ path: String) -> Bool {
        let fd = DirectoryReader.openForReading(path)
        guard fd >= 0, let entries = try? DirectoryReader.readEntries(consuming: fd, limit: 1) else { return false }
        return entries.isEmpty
    }
}
