#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims

extension FuseOperations {
    /// INIT: what the mount asks of the kernel, and what it learns the kernel does.
    static func negotiate(_ connection: UnsafeMutablePointer<fuse_conn_info>, for filesystem: QueryFilesystem) {
        let cachesSymlinks = qfs_want(connection, UInt32(FUSE_CAP_CACHE_SYMLINKS)) != 0
        let checksListingTimes = qfs_want(connection, UInt32(FUSE_CAP_AUTO_INVAL_DATA)) != 0
        filesystem.kernelCachesSymlinks.store(cachesSymlinks, ordering: .relaxed)
        filesystem.kernelChecksListingTimes.store(checksListingTimes, ordering: .relaxed)
        _ = qfs_want(connection, UInt32(FUSE_CAP_READDIRPLUS))
        // Every listing batch with attributes, not only the first: `ls -l`
        // reads all entries before it stats them, and the kernel would
        // otherwise ask for each entry after the first batch by a lookup.
        qfs_unwant(connection, UInt32(FUSE_CAP_READDIRPLUS_AUTO))
        _ = qfs_want(connection, UInt32(FUSE_CAP_FLOCK_LOCKS))
        // The set-user-ID and set-group-ID bits are cleared here, by
        // writing, truncating and chowning as the caller (the backing
        // filesystem clears them as it would for that user). Without
        // this the kernel asks for a chmod in the writer's name, which a
        // writer who is not the owner may not make: the write failed EIO.
        // (libfuse 3.14 leaves the flag out of its INIT reply; the custom
        // I/O of fuse_passthrough.c puts it in when the kernel offers it.)
        _ = qfs_want(connection, UInt32(FUSE_CAP_HANDLE_KILLPRIV))
        // An open with O_TRUNC comes as a SETATTR of the size, then the
        // open: the SETATTR's reply carries the mode the truncation left
        // (bits cleared for another user), where an atomic O_TRUNC open
        // left the kernel showing the old mode until its attributes
        // expired. One round trip more per truncating open.
        qfs_unwant(connection, UInt32(FUSE_CAP_ATOMIC_O_TRUNC))
        _ = qfs_want(connection, UInt32(FUSE_CAP_SPLICE_READ))
        _ = qfs_want(connection, UInt32(FUSE_CAP_SPLICE_WRITE))
        _ = qfs_want(connection, UInt32(FUSE_CAP_SPLICE_MOVE))
        _ = qfs_want(connection, UInt32(FUSE_CAP_PARALLEL_DIROPS))
        // Writes must reach the backing file at once (SPEC §5: nothing lost).
        qfs_unwant(connection, UInt32(FUSE_CAP_WRITEBACK_CACHE))
        connection.pointee.max_write = 1 << 20
        filesystem.kernelConnected.store(true, ordering: .releasing)
        connection.pointee.max_readahead = 1 << 20
    }
}
