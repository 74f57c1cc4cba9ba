#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Logging
import QueryFSEngine
import QueryFSCollection

/// Regular files under `bundles/` opened in FUSE passthrough mode: the kernel
/// reads and writes the backing file itself, so sequential I/O runs at the
/// backing filesystem's speed instead of one daemon round trip per 1 MiB.
///
/// The kernel insists that every open file of one inode use the same backing
/// file while any is open, so the backing id lives per node and is counted
/// by its open handles; the last release unregisters it. Passthrough needs
/// Linux 6.9+ and CAP_SYS_ADMIN: without them registering fails and the node
/// is served through the daemon, as before (`isAvailable` tells which).
final class KernelPassthrough: @unchecked Sendable {
    private let lock = PlainLock()
    private var backingOfNode: [UInt64: (id: Int32, opens: Int)] = [:]
    private var nodeOfHandle: [UInt64: UInt64] = [:]
    /// /dev/fuse of the session; set when the session exists.
    var fuseFD: Int32 = -1
    let enabled: Bool
    private let logger: Logger
    private var loggedRefusal = false

    init(enabled: Bool, logger: Logger = .discarding) {
        self.enabled = enabled
        self.logger = logger
    }

    var isAvailable: Bool { enabled && qfs_passthrough_enabled() != 0 }

    /// Registers open file `handle` (descriptor `fd`) of `node`; returns the
    /// backing id to put in the open reply, or nil to serve it through the daemon.
    func register(handle: UInt64, fd: Int32, node: UInt64) -> Int32? {
        guard isAvailable, fuseFD >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return lock.withLock {
            if let backing = backingOfNode[node] {
                backingOfNode[node] = (backing.id, backing.opens + 1)
                nodeOfHandle[handle] = node
                return backing.id
            }
            // The kernel writes a passthrough file with the daemon's
            // credentials, so a write by another user would keep the
            // set-user-ID and set-group-ID bits. Such files are served by the
            // daemon, which writes as the caller. (While one is open in
            // passthrough the kernel wants every open of it so: a bit set
            // then is kept until the last close.)
            guard status.st_mode & (S_ISUID | S_ISGID) == 0 else { return nil }
            let id = qfs_backing_open(fuseFD, fd)
            guard id > 0 else {
                if !loggedRefusal {
                    loggedRefusal = true
                    let reason = errno == EPERM ? "it needs CAP_SYS_ADMIN: mount as root for it" : String(cString: strerror(errno))
                    logger.warning("kernel passthrough refused (\(reason)): files under bundles/ are served by the daemon")
                }
                return nil
            }
            backingOfNode[node] = (id, 1)
            nodeOfHandle[handle] = node
            return id
        }
    }

    /// The kernel released `handle` (or its open reply never went out).
    func release(handle: UInt64) {
        lock.withLock {
            guard let node = nodeOfHandle.removeValue(forKey: handle), let backing = backingOfNode[node] else { return }
            if backing.opens > 1 {
                backingOfNode[node] = (backing.id, backing.opens - 1)
            } else {
                backingOfNode[node] = nil
                _ = qfs_backing_close(fuseFD, backing.id)
            }
        }
    }
}
