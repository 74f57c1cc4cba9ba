#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims

/// The libfuse low-level operation table. Each callback is a plain C
/// function (never a closure from main.swift: those are MainActor-isolated
/// and trap on libfuse's worker threads); it finds the filesystem through
/// the request's userdata and dispatches on the kind of node.
enum FuseOperations {
    static func filesystem(_ request: fuse_req_t?) -> QueryFilesystem {
        Unmanaged<QueryFilesystem>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    static func passthroughNode(_ request: fuse_req_t?, _ id: fuse_ino_t) -> (QueryFilesystem, PassthroughNode)? {
        let fs = filesystem(request)
        guard let node = fs.passthrough.node(id) else { return nil }
        return (fs, node)
    }

    /// What views answer to changes that are not edits (chmod, a new file, a
    /// hard link…): EPERM, and one log line.
    static func refuseOnView(_ request: fuse_req_t?, _ operation: String) {
        filesystem(request).refuse(request, EPERM, "\(operation) in a view: not an edit (views change by ln -s, rm and mv; bundles/ is BACKING)")
    }

    static func make() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, connection in
            guard let connection else { return }
            let cachesSymlinks = qfs_want(connection, UInt32(FUSE_CAP_CACHE_SYMLINKS)) != 0
            let checksListingTimes = qfs_want(connection, UInt32(FUSE_CAP_AUTO_INVAL_DATA)) != 0
            if let userdata {
                let filesystem = Unmanaged<QueryFilesystem>.fromOpaque(userdata).takeUnretainedValue()
                filesystem.kernelCachesSymlinks.store(cachesSymlinks, ordering: .relaxed)
                filesystem.kernelChecksListingTimes.store(checksListingTimes, ordering: .relaxed)
            }
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
            connection.pointee.max_readahead = 1 << 20
        }
        ops.lookup = { request, parent, name in
            guard let name else { return FuseOperations.filesystem(request).fail(request, EINVAL) }
            if FuseOperations.filesystem(request).answeredReplayLookup(request, parent: parent, name: name) { return }
            if let (fs, node) = FuseOperations.passthroughNode(request, parent) {
                fs.replyPassthroughEntry(request, parent: node, name: name)
            } else {
                FuseOperations.filesystem(request).viewLookup(request, parent: parent, name: name)
            }
        }
        ops.forget = { request, id, count in
            FuseOperations.filesystem(request).passthrough.forget(id, count: count)
            fuse_reply_none(request)
        }
        ops.forget_multi = { request, count, forgets in
            let fs = FuseOperations.filesystem(request)
            for index in 0..<count {
                fs.passthrough.forget(forgets![index].ino, count: forgets![index].nlookup)
            }
            fuse_reply_none(request)
        }
        ops.getattr = { request, id, _ in
            if let (fs, node) = FuseOperations.passthroughNode(request, id) { return fs.passthroughGetattr(request, node) }
            let fs = FuseOperations.filesystem(request)
            guard var attributes = fs.viewAttributes(of: id) else { return fs.fail(request, fs.missingNodeError(id)) }
            fuse_reply_attr(request, &attributes, fs.policy.viewTimeout)
        }
        ops.setattr = { request, id, attributes, toSet, info in
            if FuseOperations.filesystem(request).answeredReplaySetattr(request, id: id) { return }
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else { return FuseOperations.refuseOnView(request, "setattr") }
            fs.coordinated(request, [node.item]) {
                fs.passthroughSetattr(request, node, attributes: attributes!, toSet: toSet, info: info)
            }
        }
        ops.readlink = { request, id in
            if let (fs, node) = FuseOperations.passthroughNode(request, id) { return fs.passthroughReadlink(request, node) }
            FuseOperations.filesystem(request).viewReadlink(request, id: id)
        }
        ops.mknod = { request, parent, name, mode, device in
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent) else { return FuseOperations.refuseOnView(request, "mknod") }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughMake(request, parent: node, name: name!) { mknodat($0, name!, mode, device) }
            }
        }
        ops.mkdir = { request, parent, name, mode in
            if FuseOperations.filesystem(request).answeredReplayMake(request, parent: parent, name: name!) { return }
            if parent == NodeID.queryRoot { return FuseOperations.filesystem(request).queryMkdir(request, name: String(cString: name!)) }
            if parent == NodeID.tagRoot { return FuseOperations.filesystem(request).tagMkdir(request, name: String(cString: name!)) }
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent) else { return FuseOperations.refuseOnView(request, "mkdir") }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughMake(request, parent: node, name: name!) { mkdirat($0, name!, mode) }
            }
        }
        ops.symlink = { request, link, parent, name in
            if FuseOperations.filesystem(request).answeredReplayMake(request, parent: parent, name: name!) { return }
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent) else {
                return FuseOperations.filesystem(request).viewSymlink(request, target: link!, parent: parent, name: name!)
            }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughMake(request, parent: node, name: name!) { symlinkat(link!, $0, name!) }
            }
        }
        ops.link = { request, id, newParent, newName in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id), let (_, parent) = FuseOperations.passthroughNode(request, newParent) else {
                return FuseOperations.refuseOnView(request, "link")
            }
            fs.coordinated(request, [fs.item(named: newName!, in: parent)]) {
                fs.passthroughLink(request, node, newParent: parent, newName: newName!)
            }
        }
        ops.unlink = { request, parent, name in
            if FuseOperations.filesystem(request).answeredReplayRemoval(request) { return }
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent) else {
                return FuseOperations.filesystem(request).viewUnlink(request, parent: parent, name: name!)
            }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughRemove(request, parent: node, name: name!, directory: false)
            }
        }
        ops.rmdir = { request, parent, name in
            if FuseOperations.filesystem(request).answeredReplayRemoval(request) { return }
            if parent == NodeID.queryRoot { return FuseOperations.filesystem(request).queryRmdir(request, name: String(cString: name!)) }
            if parent == NodeID.tagRoot { return FuseOperations.filesystem(request).tagRmdir(request, name: String(cString: name!)) }
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent) else { return FuseOperations.refuseOnView(request, "rmdir") }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughRemove(request, parent: node, name: name!, directory: true)
            }
        }
        ops.rename = { request, parent, name, newParent, newName, flags in
            if FuseOperations.filesystem(request).answeredReplayRemoval(request) { return }
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent), let (_, target) = FuseOperations.passthroughNode(request, newParent) else {
                return FuseOperations.filesystem(request).viewRename(request, parent: parent, name: name!, newParent: newParent, newName: newName!, flags: flags)
            }
            fs.coordinated(request, [fs.item(named: name!, in: node), fs.item(named: newName!, in: target)]) {
                fs.passthroughRename(request, parent: node, name: name!, newParent: target, newName: newName!, flags: flags)
            }
        }
        ops.open = { request, id, info in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else {
                if id == NodeID.status { return FuseOperations.filesystem(request).openStatus(request, info: info!) }
                // View entries are symlinks: the kernel follows them, it never opens them.
                return FuseOperations.filesystem(request).fail(request, EISDIR)
            }
            if info!.pointee.flags & O_TRUNC != 0 {
                fs.coordinated(request, [node.item]) { fs.passthroughOpen(request, node, info: info!) }
            } else {
                fs.passthroughOpen(request, node, info: info!)
            }
        }
        ops.create = { request, parent, name, mode, info in
            guard let (fs, node) = FuseOperations.passthroughNode(request, parent) else { return FuseOperations.refuseOnView(request, "create") }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughCreate(request, parent: node, name: name!, mode: mode, info: info!)
            }
        }
        ops.read = { request, _, size, offset, info in
            _ = qfs_reply_data_from_fd(request, Int32(truncatingIfNeeded: info!.pointee.fh), size, offset)
        }
        ops.write_buf = { request, id, buffers, offset, info in
            let fs = FuseOperations.filesystem(request)
            fs.coordinated(request, [fs.passthrough.node(id)?.item]) {
                // As the caller: a write by another user than the owner makes
                // the backing filesystem clear the set-user-ID and
                // set-group-ID bits, as it would for that user (the daemon,
                // root, would keep them). Files with those bits never take
                // kernel passthrough (`KernelPassthrough.register`), so
                // every write to them comes here.
                var written = 0
                let code = CallerCredentials.asCaller(request) {
                    written = qfs_write_buf_to_fd(buffers, Int32(truncatingIfNeeded: info!.pointee.fh), offset)
                    return written < 0 ? Int32(-written) : 0
                }
                if code != 0 { fuse_reply_err(request, code) } else { fuse_reply_write(request, written) }
            }
        }
        // An error the backing filesystem keeps for close (NFS, SMB, sshfs
        // report quota, ENOSPC or a server gone there) must reach the
        // writer's close(2): as passthrough_ll, a duplicate of the backing
        // descriptor is closed, which runs the backing file's flush. Files
        // opened read-only are opened with FOPEN_NOFLUSH and never get here
        // (no round trip per close of a read: `PassthroughOperations`).
        ops.flush = { request, id, info in
            guard id != NodeID.status else { return FuseOperations.filesystem(request).fail(request, 0) }
            let copy = dup(Int32(truncatingIfNeeded: info!.pointee.fh))
            guard copy >= 0 else { return FuseOperations.filesystem(request).fail(request, errno) }
            FuseOperations.filesystem(request).fail(request, close(copy) == 0 ? 0 : errno)
        }
        ops.release = { request, _, info in
            // Closing the backing file drops any flock the client held through it.
            let fs = FuseOperations.filesystem(request)
            let handle = info!.pointee.fh
            fs.writes.clientLockChanged(handle: handle, item: ItemName([]), locked: false)
            // Forget the handle before closing its descriptor: the number is
            // the handle, and an open on another thread may get it the moment
            // it is closed, then lose its backing id or item lock to this release.
            fs.kernelPassthrough.release(handle: handle)
            fs.writes.releaseOpenFile(handle: handle)
            // The kernel ignores RELEASE's answer: a failure that FLUSH did
            // not already report is logged, never dropped.
            if close(Int32(truncatingIfNeeded: handle)) != 0 {
                fs.logReleaseFailure(errno)
            }
            fuse_reply_err(request, 0)
        }
        ops.fsync = { request, _, dataOnly, info in
            let fd = Int32(truncatingIfNeeded: info!.pointee.fh)
            let result = dataOnly != 0 ? fdatasync(fd) : fsync(fd)
            fuse_reply_err(request, result == 0 ? 0 : errno)
        }
        ops.fallocate = { request, id, mode, offset, length, info in
            let fs = FuseOperations.filesystem(request)
            fs.coordinated(request, [fs.passthrough.node(id)?.item]) {
                let result = qfs_fallocate(Int32(truncatingIfNeeded: info!.pointee.fh), mode, Int64(offset), Int64(length))
                fuse_reply_err(request, result == 0 ? 0 : errno)
            }
        }
        ops.lseek = { request, _, offset, whence, info in
            let result = lseek(Int32(truncatingIfNeeded: info!.pointee.fh), offset, whence)
            if result < 0 { fuse_reply_err(request, errno) } else { fuse_reply_lseek(request, result) }
        }
        ops.flock = { request, id, info, operation in
            // Carried to the backing file: the same lock processes in BACKING take.
            let handle = info!.pointee.fh
            let fs = FuseOperations.filesystem(request)
            if operation & LOCK_UN == 0, let item = fs.passthrough.node(id)?.item {
                fs.writes.yieldOpenFileHolds(of: item)
            }
            let result = flock(Int32(truncatingIfNeeded: handle), operation)
            let code = result == 0 ? 0 : errno
            if code == 0, let node = fs.passthrough.node(id), let item = node.item {
                fs.writes.clientLockChanged(handle: handle, item: item, locked: operation & LOCK_UN == 0)
            }
            fuse_reply_err(request, code)
        }
        // No opendir: ENOSYS once, and the kernel stops sending OPENDIR and
        // RELEASEDIR for good, and keeps every folder's listing (FOPEN_CACHE_DIR)
        // until its mtime moves or the watcher drops it. A walk of bundles/
        // at 100,000 bundles sent 200,000 of each, two round trips per folder.
        // Each readdir then reads from the offset it is given.
        ops.opendir = { request, _, _ in fuse_reply_err(request, ENOSYS) }
        ops.readdir = { request, id, size, offset, _ in FuseOperations.readdir(request, id, size, offset, plus: false) }
        ops.readdirplus = { request, id, size, offset, _ in FuseOperations.readdir(request, id, size, offset, plus: true) }
        ops.releasedir = { request, _, _ in fuse_reply_err(request, 0) }
        ops.fsyncdir = { request, id, dataOnly, _ in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else { return FuseOperations.filesystem(request).fail(request, 0) }
            fs.passthroughFsyncdir(request, node, dataOnly: dataOnly != 0)
        }
        ops.statfs = { request, id in
            let fs = FuseOperations.filesystem(request)
            let node = fs.passthrough.node(id) ?? fs.passthrough.root
            fs.withNodeDescriptor(request, node) { fd in
                var status = statvfs()
                guard fstatvfs(fd, &status) == 0 else { return fs.fail(request, errno) }
                fuse_reply_statfs(request, &status)
            }
        }
        ops.setxattr = { request, id, name, value, size, flags in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else { return FuseOperations.filesystem(request).fail(request, ENOTSUP) }
            fs.coordinated(request, [node.item]) {
                fs.passthroughSetAttribute(request, node) { setxattr($0, name!, value, size, flags) }
            }
        }
        ops.getxattr = { request, id, name, size in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else {
                // Views carry no extended attributes. EOPNOTSUPP (not ENODATA) because
                // `ls -l` asks for security.selinux on every entry and stops asking
                // for the rest of the device once told it is unsupported: one round
                // trip per listing instead of one per entry. (Never ENOSYS: the
                // kernel would then refuse getxattr for bundles/ too.)
                return FuseOperations.filesystem(request).fail(request, EOPNOTSUPP)
            }
            fs.withNodeDescriptor(request, node) { XattrReply.get(request, path: QueryFilesystem.procPath($0), name: name!, size: size) }
        }
        ops.listxattr = { request, id, size in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else {
                if size == 0 { fuse_reply_xattr(request, 0) } else { fuse_reply_buf(request, nil, 0) }
                return
            }
            fs.withNodeDescriptor(request, node) { XattrReply.list(request, path: QueryFilesystem.procPath($0), size: size) }
        }
        ops.removexattr = { request, id, name in
            guard let (fs, node) = FuseOperations.passthroughNode(request, id) else { return FuseOperations.filesystem(request).fail(request, ENOTSUP) }
            fs.coordinated(request, [node.item]) {
                fs.passthroughSetAttribute(request, node) { removexattr($0, name!) }
            }
        }
        return ops
    }

    static func readdir(_ request: fuse_req_t?, _ id: fuse_ino_t, _ size: Int, _ offset: off_t, plus: Bool) {
        let fs = filesystem(request)
        if let node = fs.passthrough.node(id) {
            return fs.passthroughReaddir(request, node, size: size, offset: Int(offset), plus: plus)
        }
        fs.withListingLock(of: id) {
            // Each batch from the listing as it is now: a view that changes
            // between two batches is dropped from the kernel's cache after.
            guard let listing = fs.viewDirectoryListing(of: id) else { return fs.fail(request, ENOENT) }
            let folder = fs.viewFolder(id)
            folder?.listed()
            let end = listing.reply(request, size: size, offset: Int(offset), plus: plus, timeout: fs.policy.viewTimeout)
            // Entries 0 and 1 are `.` and `..`.
            if plus { folder?.noteListed(max(Int(offset) - 2, 0)..<max(end - 2, 0)) }
        }
        fs.catalog.idleTrim.mark()
    }
}

/// getxattr/listxattr replies: the size when asked for it, else the bytes.
enum XattrReply {
    static func get(_ request: fuse_req_t?, path: String, name: UnsafePointer<CChar>, size: Int) {
        if size == 0 {
            let needed = getxattr(path, name, nil, 0)
            if needed < 0 { fuse_reply_err(request, errno) } else { fuse_reply_xattr(request, needed) }
            return
        }
        var buffer = [UInt8](repeating: 0, count: size)
        let count = getxattr(path, name, &buffer, size)
        if count < 0 { fuse_reply_err(request, errno) } else { buffer.withUnsafeBytes { _ = fuse_reply_buf(request, $0.baseAddress?.assumingMemoryBound(to: CChar.self), count) } }
    }

    static func list(_ request: fuse_req_t?, path: String, size: Int) {
        if size == 0 {
            let needed = listxattr(path, nil, 0)
            if needed < 0 { fuse_reply_err(request, errno) } else { fuse_reply_xattr(request, needed) }
            return
        }
        var buffer = [CChar](repeating: 0, count: size)
        let count = listxattr(path, &buffer, size)
        if count < 0 { fuse_reply_err(request, errno) } else { fuse_reply_buf(request, buffer, count) }
    }
}
