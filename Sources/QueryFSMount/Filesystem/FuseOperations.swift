#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// The libfuse low-level operation table. Each callback is a plain C
/// function (never a closure from main.swift: those are MainActor-isolated
/// and trap on libfuse's worker threads). Each does the same three steps,
/// in this order:
///   1. the filesystem, from the request's userdata (`route`);
///   2. for the operations the event replay makes on the mount (lookup,
///      mkdir, symlink, unlink, rmdir, rename, setattr), its own answer
///      when the request is the replay's (`ReplayAnswers`);
///   3. the node's tree: `.bundles` (BACKING passed through, under the
///      item's lock for what changes it: `coordinated`) or `.views`
///      (the folders of symlinks, `ViewOperations`, `ViewEditOperations`).
enum FuseOperations {
    /// Which of the mount's two trees a node is in.
    enum Tree {
        /// `bundles/` and everything under it: BACKING, passed through.
        case bundles(PassthroughNode)
        /// The root, the view folders and their entries, `tag/`, `query/`, `.queryfs/`.
        case views
    }

    static func filesystem(_ request: fuse_req_t?) -> QueryFilesystem {
        Unmanaged<QueryFilesystem>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    /// The filesystem and the tree of node `id`.
    static func route(_ request: fuse_req_t?, _ id: fuse_ino_t) -> (QueryFilesystem, Tree) {
        let fs = filesystem(request)
        return (fs, fs.passthrough.node(id).map(Tree.bundles) ?? .views)
    }

    /// The filesystem and the trees of two nodes (link, rename).
    static func route(_ request: fuse_req_t?, _ id: fuse_ino_t, _ other: fuse_ino_t) -> (QueryFilesystem, Tree, Tree) {
        let fs = filesystem(request)
        return (fs, fs.passthrough.node(id).map(Tree.bundles) ?? .views, fs.passthrough.node(other).map(Tree.bundles) ?? .views)
    }

    static func make() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, connection in
            guard let connection, let userdata else { return }
            FuseOperations.negotiate(connection, for: Unmanaged<QueryFilesystem>.fromOpaque(userdata).takeUnretainedValue())
        }
        ops.lookup = { request, parent, name in
            let (fs, tree) = FuseOperations.route(request, parent)
            guard let name else { return fs.fail(request, EINVAL) }
            if fs.answeredReplayLookup(request, parent: parent, name: name) { return }
            switch tree {
            case .bundles(let node): fs.replyPassthroughEntry(request, parent: node, name: name)
            case .views: fs.viewLookup(request, parent: parent, name: name)
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
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)): fs.passthroughGetattr(request, node)
            case (let fs, .views): fs.viewGetattr(request, id: id)
            }
        }
        ops.setattr = { request, id, attributes, toSet, info in
            let (fs, tree) = FuseOperations.route(request, id)
            if fs.answeredReplaySetattr(request, id: id) { return }
            guard case .bundles(let node) = tree else { return fs.refuseOnView(request, "setattr") }
            fs.coordinated(request, [node.item]) {
                fs.passthroughSetattr(request, node, attributes: attributes!, toSet: toSet, info: info)
            }
        }
        ops.readlink = { request, id in
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)): fs.passthroughReadlink(request, node)
            case (let fs, .views): fs.viewReadlink(request, id: id)
            }
        }
        ops.mknod = { request, parent, name, mode, device in
            let (fs, tree) = FuseOperations.route(request, parent)
            if fs.answeredReplayMake(request, parent: parent, name: name!) { return }
            guard case .bundles(let node) = tree else { return fs.refuseOnView(request, "mknod") }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughMake(request, parent: node, name: name!) { mknodat($0, name!, mode, device) }
            }
        }
        ops.mkdir = { request, parent, name, mode in
            let (fs, tree) = FuseOperations.route(request, parent)
            if fs.answeredReplayMake(request, parent: parent, name: name!) { return }
            switch tree {
            case .bundles(let node):
                fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                    fs.passthroughMake(request, parent: node, name: name!) { mkdirat($0, name!, mode) }
                }
            case .views: fs.viewMkdir(request, parent: parent, name: String(cString: name!))
            }
        }
        ops.symlink = { request, link, parent, name in
            let (fs, tree) = FuseOperations.route(request, parent)
            if fs.answeredReplayMake(request, parent: parent, name: name!) { return }
            switch tree {
            case .bundles(let node):
                fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                    fs.passthroughMake(request, parent: node, name: name!) { symlinkat(link!, $0, name!) }
                }
            case .views: fs.viewSymlink(request, target: link!, parent: parent, name: name!)
            }
        }
        ops.link = { request, id, newParent, newName in
            guard case (let fs, .bundles(let node), .bundles(let parent)) = FuseOperations.route(request, id, newParent) else {
                return FuseOperations.filesystem(request).refuseOnView(request, "link")
            }
            fs.coordinated(request, [fs.item(named: newName!, in: parent)]) {
                fs.passthroughLink(request, node, newParent: parent, newName: newName!)
            }
        }
        ops.unlink = { request, parent, name in FuseOperations.remove(request, parent, name!, directory: false) }
        ops.rmdir = { request, parent, name in FuseOperations.remove(request, parent, name!, directory: true) }
        ops.rename = { request, parent, name, newParent, newName, flags in
            let (fs, from, to) = FuseOperations.route(request, parent, newParent)
            if fs.answeredReplayRemoval(request) { return }
            switch (from, to) {
            // The trash's renames move a name one way; an exchange has no meaning there.
            case (.views, .bundles(let files)) where fs.isTrashFiles(files) && flags & QFS_RENAME_EXCHANGE == 0:
                return fs.trashEntry(request, parent: parent, name: name!, files: files, newName: newName!)
            case (.bundles(let files), .views) where fs.isTrashFiles(files) && flags & QFS_RENAME_EXCHANGE == 0:
                return fs.restoreFromTrash(request, files: files, name: name!, newParent: newParent, newName: newName!)
            default: break
            }
            guard case .bundles(let node) = from, case .bundles(let target) = to else {
                return fs.viewRename(request, parent: parent, name: name!, newParent: newParent, newName: newName!, flags: flags)
            }
            fs.coordinated(request, [fs.item(named: name!, in: node), fs.item(named: newName!, in: target)]) {
                fs.passthroughRename(request, parent: node, name: name!, newParent: target, newName: newName!, flags: flags)
            }
        }
        ops.open = { request, id, info in
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)) where info!.pointee.flags & O_TRUNC != 0:
                fs.coordinated(request, [node.item]) { fs.passthroughOpen(request, node, info: info!) }
            case (let fs, .bundles(let node)): fs.passthroughOpen(request, node, info: info!)
            case (let fs, .views) where id == NodeID.status: fs.openStatus(request, info: info!)
            case (let fs, .views) where id == NodeID.settled: fs.openSettled(request, info: info!)
            // Symlink entries the kernel follows, never opens; desktop entries open for reading.
            case (let fs, .views): fs.viewOpen(request, id: id, info: info!)
            }
        }
        ops.create = { request, parent, name, mode, info in
            let (fs, tree) = FuseOperations.route(request, parent)
            guard case .bundles(let node) = tree else { return fs.refuseOnView(request, "create") }
            fs.coordinated(request, [fs.item(named: name!, in: node)]) {
                fs.passthroughCreate(request, parent: node, name: name!, mode: mode, info: info!)
            }
        }
        // Only files under bundles/ are opened with a descriptor as their handle (`fh`).
        ops.read = { request, _, size, offset, info in
            _ = qfs_reply_data_from_fd(request, Int32(truncatingIfNeeded: info!.pointee.fh), size, offset)
        }
        ops.write_buf = { request, id, buffers, offset, info in
            let fs = FuseOperations.filesystem(request)
            fs.coordinated(request, [fs.passthrough.node(id)?.item]) {
                fs.passthroughWrite(request, buffers: buffers, offset: offset, handle: info!.pointee.fh)
            }
        }
        ops.flush = { request, id, info in
            FuseOperations.filesystem(request).flush(request, id: id, handle: info!.pointee.fh)
        }
        ops.release = { request, _, info in
            FuseOperations.filesystem(request).release(request, handle: info!.pointee.fh)
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
            FuseOperations.filesystem(request).passthroughFlock(request, id: id, handle: info!.pointee.fh, operation: operation)
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
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)): fs.passthroughFsyncdir(request, node, dataOnly: dataOnly != 0)
            case (let fs, .views): fs.fail(request, 0)
            }
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
        // Views carry no extended attributes. EOPNOTSUPP (not ENODATA) because
        // `ls -l` asks for security.selinux on every entry and stops asking
        // for the rest of the device once told it is unsupported: one round
        // trip per listing instead of one per entry. (Never ENOSYS: the
        // kernel would then refuse getxattr for bundles/ too.)
        ops.setxattr = { request, id, name, value, size, flags in
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)):
                fs.coordinated(request, [node.item]) { fs.passthroughSetAttribute(request, node) { setxattr($0, name!, value, size, flags) } }
            case (let fs, .views): fs.fail(request, ENOTSUP)
            }
        }
        ops.getxattr = { request, id, name, size in
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)):
                fs.withNodeDescriptor(request, node) { XattrReply.get(request, path: QueryFilesystem.procPath($0), name: name!, size: size) }
            case (let fs, .views): fs.fail(request, EOPNOTSUPP)
            }
        }
        ops.listxattr = { request, id, size in
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)):
                fs.withNodeDescriptor(request, node) { XattrReply.list(request, path: QueryFilesystem.procPath($0), size: size) }
            case (_, .views):
                if size == 0 { fuse_reply_xattr(request, 0) } else { fuse_reply_buf(request, nil, 0) }
            }
        }
        ops.removexattr = { request, id, name in
            switch FuseOperations.route(request, id) {
            case (let fs, .bundles(let node)):
                fs.coordinated(request, [node.item]) { fs.passthroughSetAttribute(request, node) { removexattr($0, name!) } }
            case (let fs, .views): fs.fail(request, ENOTSUP)
            }
        }
        return ops
    }

    /// unlink and rmdir: the replay's own answer, else the node's tree.
    static func remove(_ request: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, directory: Bool) {
        let (fs, tree) = route(request, parent)
        if fs.answeredReplayRemoval(request) { return }
        switch tree {
        case .bundles(let node):
            fs.coordinated(request, [fs.item(named: name, in: node)]) {
                fs.passthroughRemove(request, parent: node, name: name, directory: directory)
            }
        case .views where directory: fs.viewRmdir(request, parent: parent, name: String(cString: name))
        case .views: fs.viewUnlink(request, parent: parent, name: name)
        }
    }

    static func readdir(_ request: fuse_req_t?, _ id: fuse_ino_t, _ size: Int, _ offset: off_t, plus: Bool) {
        switch route(request, id) {
        case (let fs, .bundles(let node)): fs.passthroughReaddir(request, node, size: size, offset: Int(offset), plus: plus)
        case (let fs, .views): fs.viewReaddir(request, id: id, size: size, offset: Int(offset), plus: plus)
        }
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
