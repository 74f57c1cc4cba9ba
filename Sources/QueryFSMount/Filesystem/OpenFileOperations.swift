#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine

/// The operations on an open file of bundles/, whose handle (`fh`) is the
/// backing file's descriptor (view entries are symlinks: never opened;
/// `.queryfs/status` is read from memory).
extension QueryFilesystem {
    /// As the caller: a write by another user than the owner makes the
    /// backing filesystem clear the set-user-ID and set-group-ID bits, as it
    /// would for that user (the daemon, root, would keep them). Files with
    /// those bits never take kernel passthrough (`KernelPassthrough.register`),
    /// so every write to them comes here.
    func passthroughWrite(_ request: fuse_req_t?, buffers: UnsafeMutablePointer<fuse_bufvec>?, offset: off_t, handle: UInt64) {
        var written = 0
        let code = CallerCredentials.asCaller(request) {
            written = qfs_write_buf_to_fd(buffers, Int32(truncatingIfNeeded: handle), offset)
            return written < 0 ? Int32(-written) : 0
        }
        if code != 0 { fuse_reply_err(request, code) } else { fuse_reply_write(request, written) }
    }

    /// An error the backing filesystem keeps for close (NFS, SMB, sshfs
    /// report quota, ENOSPC or a server gone there) must reach the writer's
    /// close(2): as passthrough_ll, a duplicate of the backing descriptor is
    /// closed, which runs the backing file's flush. Files opened read-only
    /// are opened with FOPEN_NOFLUSH and never get here (no round trip per
    /// close of a read: `PassthroughOperations`).
    func flush(_ request: fuse_req_t?, id: UInt64, handle: UInt64) {
        guard id != NodeID.status, id != NodeID.settled else { return fail(request, 0) }
        let copy = dup(Int32(truncatingIfNeeded: handle))
        guard copy >= 0 else { return fail(request, errno) }
        fail(request, close(copy) == 0 ? 0 : errno)
    }

    /// Closing the backing file drops any flock the client held through it.
    func release(_ request: fuse_req_t?, handle: UInt64) {
        writes.clientLockChanged(handle: handle, item: ItemName([]), locked: false)
        // Forget the handle before closing its descriptor: the number is
        // the handle, and an open on another thread may get it the moment
        // it is closed, then lose its backing id or item lock to this release.
        kernelPassthrough.release(handle: handle)
        writes.releaseOpenFile(handle: handle)
        // The kernel ignores RELEASE's answer: a failure that FLUSH did
        // not already report is logged, never dropped.
        if close(Int32(truncatingIfNeeded: handle)) != 0 {
            logReleaseFailure(errno)
        }
        fuse_reply_err(request, 0)
    }

    /// Carried to the backing file: the same lock processes in BACKING take.
    func passthroughFlock(_ request: fuse_req_t?, id: UInt64, handle: UInt64, operation: Int32) {
        if operation & LOCK_UN == 0, let item = passthrough.node(id)?.item {
            writes.yieldOpenFileHolds(of: item)
        }
        let result = flock(Int32(truncatingIfNeeded: handle), operation)
        let code = result == 0 ? 0 : errno
        if code == 0, let node = passthrough.node(id), let item = node.item {
            writes.clientLockChanged(handle: handle, item: item, locked: operation & LOCK_UN == 0)
        }
        fuse_reply_err(request, code)
    }
}
