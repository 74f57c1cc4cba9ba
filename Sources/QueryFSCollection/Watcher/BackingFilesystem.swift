#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// What kind of filesystem BACKING is on, as far as following changes and
/// sharing locks go. On a network filesystem (NFS, SMB, 9p, Ceph, Lustre,
/// and every FUSE filesystem: sshfs, rclone, bindfs, GlusterFS…) inotify
/// and fanotify hear only what this machine does through this kernel, so
/// the mount polls as well; and `flock`, the item lock of SPEC §5, reaches
/// other machines only where the filesystem carries it.
package struct BackingFilesystem: Sendable, Equatable {
    /// The type as /proc/mounts names it ("ext4", "nfs4", "fuse.sshfs").
    package let type: String
    /// Changes made elsewhere are not notified here.
    package let isNetwork: Bool
    /// How far an item's `flock` reaches.
    package let locks: LockReach

    package enum LockReach: String, Sendable {
        /// One machine's disk: there is no other machine to reach.
        case local
        /// Carried between machines (NFS as POSIX locks, CephFS, cluster filesystems).
        case shared
        /// Held on this machine only: another machine's writer does not see it.
        case thisMachineOnly = "this machine only"
        /// Carried only when the filesystem was mounted so (Lustre's `flock` option).
        case dependsOnMountOptions = "depends on the mount options"
        /// NFS: Linux sends `flock` to the server as a POSIX lock on the
        /// whole file (flock(2)), which for an exclusive lock needs a file
        /// open for writing — a bundle's lock is on its folder, which cannot be.
        case plainFilesOnly = "plain files only"
    }

    /// Types whose locks other machines see.
    private static let sharedLocks: Set<String> = ["ceph", "gfs2", "ocfs2"]
    /// Network types that are not FUSE.
    private static let network: Set<String> = ["nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "lustre", "gfs2", "ocfs2",
                                                "afs", "coda", "beegfs", "gpfs", "glusterfs", "orangefs", "davfs", "ncpfs"]

    package init(type: String) {
        self.type = type
        // fuseblk is a local disk behind FUSE (NTFS, exFAT): the kernel sees its writes as any other.
        let fuse = (type == "fuse" || type.hasPrefix("fuse.")) && type != "fuseblk"
        isNetwork = fuse || Self.network.contains(type)
        if !isNetwork {
            locks = .local
        } else if Self.sharedLocks.contains(type) {
            locks = .shared
        } else if type == "nfs" || type == "nfs4" {
            locks = .plainFilesOnly
        } else if type == "lustre" {
            locks = .dependsOnMountOptions
        } else {
            locks = .thisMachineOnly
        }
    }

    /// The filesystem of the directory at `path` (absolute, symlinks
    /// resolved): the longest mount point of /proc/mounts that holds it.
    package static func of(path: String, table: String? = nil) -> BackingFilesystem {
        var best: MountTable.Mount?
        for mount in MountTable.mounts(table: table) {
            let root = mount.mountPoint == "/" ? "" : mount.mountPoint
            guard path == mount.mountPoint || path.hasPrefix(root + "/") else { continue }
            // The last of equal mount points is the one on top.
            if best == nil || mount.mountPoint.count >= best!.mountPoint.count { best = mount }
        }
        return BackingFilesystem(type: best?.type ?? "unknown")
    }

    /// One line for `queryfs status` and the log: how far locks reach.
    package var lockNote: String? {
        switch locks {
        case .local, .shared: nil
        case .thisMachineOnly:
            "item locks (flock) on \(type) hold on this machine only: a writer on another machine does not wait for them"
        case .dependsOnMountOptions:
            "item locks (flock) on \(type) reach other machines only when it is mounted with -o flock"
        case .plainFilesOnly:
            "item locks (flock) on \(type) reach other machines for plain files only: NFS locks a folder — a bundle — "
                + "exclusively only with -o local_lock=flock, and then on this machine alone (writes through bundles/ to bundles may fail with EBADF otherwise)"
        }
    }
}
