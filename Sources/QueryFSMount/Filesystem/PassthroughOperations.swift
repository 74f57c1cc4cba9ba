#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// `bundles/`: the backing directory passed through, as libfuse's
/// passthrough_ll does it — every node an O_PATH descriptor (lent by
/// `PassthroughTable`, which keeps a bounded number open), every open file
/// a real descriptor on the backing file, data spliced straight through.
extension QueryFilesystem {
    /// `/proc/self/fd/N`: how to reach a file an QFS_O_PATH descriptor names.
    static func procPath(_ fd: Int32) -> String { "/proc/self/fd/\(fd)" }

    func replyError(_ request: fuse_req_t?, _ code: Int32 = errno) {
        fuse_reply_err(request, code == 0 ? EIO : code)
    }

    /// Replies with the entry for `name` in `parent` (after a lookup or a creation).
    func replyPassthroughEntry(_ request: fuse_req_t?, parent: PassthroughNode, name: UnsafePointer<CChar>) {
        do {
            var entry = try passthroughEntry(parent: parent, name: name)
            fuse_reply_entry(request, &entry)
        } catch {
            replyError(request, error.errno)
        }
    }

    func passthroughEntry(parent: PassthroughNode, name: UnsafePointer<CChar>) throws(SystemError) -> fuse_entry_param {
        let (node, status) = try passthrough.lookup(name, in: parent)
        var attributes = status
        attributes.st_ino = ino_t(node.id)
        var entry = entryParameters(id: node.id, attributes: attributes, timeout: policy.timeout(forPassthroughItem: node.item))
        entry.attr_timeout = attributeTimeout(node, attributes)
        return entry
    }

    /// How long the kernel may keep `node`'s attributes: not at all for a
    /// file with the set-user-ID or set-group-ID bit, which a write by
    /// another user clears in BACKING without the kernel seeing the mode
    /// change (it refreshes size and times after a write, not the mode).
    func attributeTimeout(_ node: PassthroughNode, _ attributes: stat) -> Double {
        attributes.st_mode & (S_ISUID | S_ISGID) != 0 ? 0 : policy.timeout(forPassthroughItem: node.item)
    }

    func passthroughAttributes(_ node: PassthroughNode, openFD: Int32? = nil) throws(SystemError) -> stat {
        var status = stat()
        let result: Int32
        if let openFD {
            result = fstat(openFD, &status)
        } else {
            result = try passthrough.withDescriptor(node) { fstatat($0, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) }
        }
        guard result == 0 else { throw SystemError.current("stat") }
        status.st_ino = ino_t(node.id)
        return status
    }

    func passthroughGetattr(_ request: fuse_req_t?, _ node: PassthroughNode) {
        do {
            var status = try passthroughAttributes(node)
            fuse_reply_attr(request, &status, attributeTimeout(node, status))
        } catch {
            replyError(request, error.errno)
        }
    }

    /// Runs `body` with `node`'s descriptor, or replies with the errno it could not be had for.
    func withNodeDescriptor(_ request: fuse_req_t?, _ node: PassthroughNode, _ body: (Int32) -> Void) {
        do { try passthrough.withDescriptor(node, body) } catch { replyError(request, error.errno) }
    }

    /// The same for two nodes.
    func withNodeDescriptors(_ request: fuse_req_t?, _ first: PassthroughNode, _ second: PassthroughNode,
                             _ body: (Int32, Int32) -> Void) {
        do { try passthrough.withDescriptors(first, second, body) } catch { replyError(request, error.errno) }
    }

    func passthroughSetattr(_ request: fuse_req_t?, _ node: PassthroughNode, attributes: UnsafeMutablePointer<stat>,
                            toSet: Int32, info: UnsafeMutablePointer<fuse_file_info>?)
    {
        withNodeDescriptor(request, node) { fd in
            let code = CallerCredentials.asCaller(request) {
                applyAttributes(node, fd: fd, attributes: attributes.pointee, toSet: toSet,
                                openFD: info.map { Int32(truncatingIfNeeded: $0.pointee.fh) })
            }
            guard code == 0 else { return replyError(request, code) }
            passthroughGetattr(request, node)
        }
    }

    /// chmod, chown, truncate and utimens, in that order; 0 or the first errno.
    private func applyAttributes(_ node: PassthroughNode, fd: Int32, attributes: stat, toSet: Int32, openFD: Int32?) -> Int32 {
        let path = Self.procPath(fd)
        var status = stat()
        fstatat(fd, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)
        let isSymlink = status.st_mode & S_IFMT == S_IFLNK
        if toSet & FUSE_SET_ATTR_MODE != 0 {
            let result = openFD.map { fchmod($0, attributes.st_mode) } ?? chmod(path, attributes.st_mode)
            if result != 0 { return errno }
        }
        if toSet & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID) != 0 {
            let uid = toSet & FUSE_SET_ATTR_UID != 0 ? attributes.st_uid : uid_t.max
            let gid = toSet & FUSE_SET_ATTR_GID != 0 ? attributes.st_gid : gid_t.max
            if fchownat(fd, "", uid, gid, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 { return errno }
        }
        if toSet & FUSE_SET_ATTR_SIZE != 0 {
            let result = openFD.map { ftruncate($0, attributes.st_size) } ?? truncate(path, attributes.st_size)
            if result != 0 { return errno }
        }
        if toSet & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME) != 0 {
            var times = [timespec(tv_sec: 0, tv_nsec: Int(QFS_UTIME_OMIT)), timespec(tv_sec: 0, tv_nsec: Int(QFS_UTIME_OMIT))]
            if toSet & FUSE_SET_ATTR_ATIME_NOW != 0 { times[0].tv_nsec = Int(QFS_UTIME_NOW) }
            else if toSet & FUSE_SET_ATTR_ATIME != 0 { times[0] = attributes.st_atim }
            if toSet & FUSE_SET_ATTR_MTIME_NOW != 0 { times[1].tv_nsec = Int(QFS_UTIME_NOW) }
            else if toSet & FUSE_SET_ATTR_MTIME != 0 { times[1] = attributes.st_mtim }
            let result: Int32
            if let openFD {
                result = futimens(openFD, &times)
            } else if isSymlink, let parent = passthrough.node(node.parent) {
                do {
                    result = try passthrough.withDescriptor(parent) { parentFD in
                        node.name.withCString { utimensat(parentFD, $0, &times, AT_SYMLINK_NOFOLLOW) }
                    }
                } catch {
                    return error.errno
                }
            } else {
                result = utimensat(AT_FDCWD, path, &times, 0)
            }
            if result != 0 { return errno }
        }
        return 0
    }

    func passthroughReadlink(_ request: fuse_req_t?, _ node: PassthroughNode) {
        withNodeDescriptor(request, node) { fd in
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlinkat(fd, "", &buffer, buffer.count - 1)
            guard count >= 0 else { return replyError(request) }
            buffer[count] = 0
            fuse_reply_readlink(request, buffer)
        }
    }

    // MARK: Making and removing names

    /// Runs one system call as the request's caller: 0, or its errno.
    private func callerCall(_ request: fuse_req_t?, _ call: () -> Int32) -> Int32 {
        CallerCredentials.asCaller(request) { call() == 0 ? 0 : (errno == 0 ? EIO : errno) }
    }

    func passthroughMake(_ request: fuse_req_t?, parent: PassthroughNode, name: UnsafePointer<CChar>,
                         _ make: (Int32) -> Int32)
    {
        withNodeDescriptor(request, parent) { parentFD in
            let code = callerCall(request) { make(parentFD) }
            guard code == 0 else { return replyError(request, code) }
            replyPassthroughEntry(request, parent: parent, name: name)
        }
    }

    func passthroughLink(_ request: fuse_req_t?, _ node: PassthroughNode, newParent: PassthroughNode, newName: UnsafePointer<CChar>) {
        withNodeDescriptors(request, node, newParent) { fd, newParentFD in
            let code = callerCall(request) { linkat(AT_FDCWD, Self.procPath(fd), newParentFD, newName, AT_SYMLINK_FOLLOW) }
            guard code == 0 else { return replyError(request, code) }
            replyPassthroughEntry(request, parent: newParent, name: newName)
        }
    }

    func passthroughRemove(_ request: fuse_req_t?, parent: PassthroughNode, name: UnsafePointer<CChar>, directory: Bool) {
        withNodeDescriptor(request, parent) { parentFD in
            fuse_reply_err(request, callerCall(request) { unlinkat(parentFD, name, directory ? AT_REMOVEDIR : 0) })
        }
    }

    func passthroughRename(_ request: fuse_req_t?, parent: PassthroughNode, name: UnsafePointer<CChar>,
                           newParent: PassthroughNode, newName: UnsafePointer<CChar>, flags: UInt32)
    {
        withNodeDescriptors(request, parent, newParent) { parentFD, newParentFD in
            // Which files move: the table must know them by their new names, or
            // the watcher checks (and the reopen looks for) a name that is gone
            // while the kernel serves the new name from the node — the deleted
            // file's, once BACKING replaces the new name (found from outside).
            let moving = Self.identity(name, in: parentFD)
            let exchanged = flags & QFS_RENAME_EXCHANGE != 0 ? Self.identity(newName, in: newParentFD) : nil
            let code = callerCall(request) { qfs_renameat2(parentFD, name, newParentFD, newName, flags) }
            if code == 0 {
                if let moving { passthrough.moved(moving, to: newParent, name: Self.bytes(newName), parentFD: newParentFD) }
                if let exchanged { passthrough.moved(exchanged, to: parent, name: Self.bytes(name), parentFD: parentFD) }
            }
            fuse_reply_err(request, code)
        }
    }

    /// The device and inode of `name` in the folder `folderFD`, nil when it cannot be stated.
    private static func identity(_ name: UnsafePointer<CChar>, in folderFD: Int32) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard fstatat(folderFD, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }


    /// setxattr/removexattr, as the caller (who may set trusted.* or
    /// security.* is the file system's call, for the caller).
    func passthroughSetAttribute(_ request: fuse_req_t?, _ node: PassthroughNode, _ call: (String) -> Int32) {
        withNodeDescriptor(request, node) { fd in
            fuse_reply_err(request, callerCall(request) { call(Self.procPath(fd)) })
        }
    }

    // MARK: Files

    func passthroughOpen(_ request: fuse_req_t?, _ node: PassthroughNode, info: UnsafeMutablePointer<fuse_file_info>) {
        var fd: Int32 = -1
        var code: Int32 = 0
        do {
            try passthrough.withDescriptor(node) { pathFD in
                code = CallerCredentials.asCaller(request) {
                    fd = open(Self.procPath(pathFD), info.pointee.flags & ~O_NOFOLLOW | O_CLOEXEC)
                    return fd >= 0 ? 0 : errno
                }
            }
        } catch {
            code = error.errno
        }
        guard fd >= 0 else { return replyError(request, code) }
        // Opened to write (an editor's save): not a look to read, such as a file manager's thumbnails, whose
        // late looks at names gone must keep failing.
        if info.pointee.flags & O_ACCMODE != O_RDONLY, let item = node.item, let context = fuse_req_ctx(request) {
            openedItems.note(item, openedBy: context.pointee.pid)
        }
        info.pointee.fh = UInt64(fd)
        setNoFlushIfReadOnly(info)
        if let backingID = kernelPassthrough.register(handle: info.pointee.fh, fd: fd, node: node.id) {
            return replyPassthroughOpen(request, node: node, info: info, backingID: backingID) { fuse_reply_open(request, info) }
        }
        qfs_file_info_set(info, 0, keepsKernelCache(node) ? 1 : 0, 0)
        fuse_reply_open(request, info)
    }

    /// A file opened for reading only has nothing to report at close: no
    /// FLUSH round trip for it (a walk of bundles/ opens every payload).
    func setNoFlushIfReadOnly(_ info: UnsafeMutablePointer<fuse_file_info>) {
        qfs_file_info_set_noflush(info, info.pointee.flags & O_ACCMODE == O_RDONLY ? 1 : 0)
    }

    /// A close at RELEASE that failed: logged once per errno (the kernel
    /// takes no answer to RELEASE; FLUSH gave the writer its error).
    func logReleaseFailure(_ code: Int32) {
        guard releaseFailuresLogged.withLock({ $0.insert(code).inserted }) else { return }
        catalog.logger.error("closing a file of BACKING failed: \(String(cString: strerror(code))) (logged once per reason)")
    }

    /// Replies to an open or create in kernel passthrough mode. A file opened
    /// for writing holds its item's lock until release: its writes go from
    /// the kernel to BACKING without passing here, one by one.
    func replyPassthroughOpen(_ request: fuse_req_t?, node: PassthroughNode, info: UnsafeMutablePointer<fuse_file_info>,
                              backingID: Int32, reply: () -> Int32)
    {
        let handle = info.pointee.fh
        if info.pointee.flags & O_ACCMODE != O_RDONLY, let item = node.item {
            let code = writes.holdForOpenFile(handle: handle, item: item)
            guard code == 0 else {
                kernelPassthrough.release(handle: handle)
                close(Int32(truncatingIfNeeded: handle))
                return replyError(request, code)
            }
        }
        qfs_passthrough_mark_next_open(backingID)
        // A reply that did not reach the kernel (the open was interrupted):
        // libfuse calls release for it, which lets go of both.
        _ = reply()
        qfs_passthrough_mark_next_open(0)
    }

    /// Whether the kernel may keep a file's pages across opens: yes inside
    /// watched items, where the watcher invalidates exactly what changes in
    /// BACKING (changes made through the mount the kernel sees itself); not
    /// inside hidden entries such as `.git`, which nothing watches. (Folder
    /// listings it keeps everywhere, without opendir: a folder's listing is
    /// read again once its mtime moves, which for `.git` shows within the
    /// 1 s its attributes are kept.)
    func keepsKernelCache(_ node: PassthroughNode) -> Bool {
        guard let item = node.item else { return false }
        return policy.timeout(forPassthroughItem: item) >= policy.itemTimeout
    }

    func passthroughCreate(_ request: fuse_req_t?, parent: PassthroughNode, name: UnsafePointer<CChar>, mode: mode_t,
                           info: UnsafeMutablePointer<fuse_file_info>)
    {
        var fd: Int32 = -1
        var code: Int32 = 0
        do {
            try passthrough.withDescriptor(parent) { parentFD in
                code = CallerCredentials.asCaller(request) {
                    fd = openat(parentFD, name, (info.pointee.flags | O_CREAT | O_CLOEXEC) & ~O_NOFOLLOW, mode)
                    return fd >= 0 ? 0 : errno
                }
            }
        } catch {
            code = error.errno
        }
        guard fd >= 0 else { return replyError(request, code) }
        info.pointee.fh = UInt64(fd)
        setNoFlushIfReadOnly(info)
        do {
            var entry = try passthroughEntry(parent: parent, name: name)
            let created = passthrough.node(entry.ino)
            if let created, let backingID = kernelPassthrough.register(handle: info.pointee.fh, fd: fd, node: created.id) {
                return replyPassthroughOpen(request, node: created, info: info, backingID: backingID) {
                    fuse_reply_create(request, &entry, info)
                }
            }
            qfs_file_info_set(info, 0, created.map(keepsKernelCache) == true ? 1 : 0, 0)
            fuse_reply_create(request, &entry, info)
        } catch {
            close(fd)
            replyError(request, error.errno)
        }
    }

    // MARK: Directories

    func passthroughFsyncdir(_ request: fuse_req_t?, _ node: PassthroughNode, dataOnly: Bool) {
        withNodeDescriptor(request, node) { pathFD in
            let fd = openat(pathFD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return replyError(request) }
            defer { close(fd) }
            fuse_reply_err(request, (dataOnly ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno)
        }
    }

    /// A batch of `node`'s entries from `offset` (the cookie of the entry
    /// before, 0 for the start). The folder is opened for this batch only:
    /// there is no opendir (see FuseOperations), and a cookie names a
    /// place in the folder across opens (ext4, xfs, btrfs, tmpfs: seekdir).
    func passthroughReaddir(_ request: fuse_req_t?, _ node: PassthroughNode, size capacity: Int, offset: Int, plus: Bool) {
        let fd: Int32
        do {
            fd = try passthrough.withDescriptor(node) { openat($0, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        } catch {
            return replyError(request, error.errno)
        }
        guard fd >= 0 else { return replyError(request) }
        guard let stream = fdopendir(fd) else {
            let code = errno
            close(fd)
            return replyError(request, code)
        }
        defer { closedir(stream) }
        if offset != 0 { seekdir(stream, offset) }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(capacity, 1))
        defer { buffer.deallocate() }
        var used = 0
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0, used == 0 { return replyError(request) }
                break
            }
            let nextOffset = off_t(entry.pointee.d_off)
            let room = capacity - used
            // 0: the entry vanished between readdir and lookup; skip it.
            let entrySize: Int = withUnsafePointer(to: &entry.pointee.d_name) { namePointer in
                namePointer.withMemoryRebound(to: CChar.self, capacity: 256) { name in
                    let isDot = strcmp(name, ".") == 0 || strcmp(name, "..") == 0
                    guard plus else {
                        var status = stat()
                        status.st_ino = entry.pointee.d_ino
                        status.st_mode = mode_t(entry.pointee.d_type) << 12
                        return fuse_add_direntry(request, buffer + used, room, name, &status, nextOffset)
                    }
                    var parameters = fuse_entry_param()
                    if isDot {
                        parameters.attr.st_ino = entry.pointee.d_ino
                        parameters.attr.st_mode = mode_t(entry.pointee.d_type) << 12
                    } else {
                        guard let found = try? passthroughEntry(parent: node, name: name) else { return 0 }
                        parameters = found
                    }
                    let needed = fuse_add_direntry_plus(request, buffer + used, room, name, &parameters, nextOffset)
                    // Did not fit: the kernel will not see this lookup, so undo it.
                    if needed > room && !isDot { passthrough.forget(parameters.ino, count: 1) }
                    return needed
                }
            }
            if entrySize == 0 { continue }
            // Did not fit: the next batch starts here again (its offset is the cookie of the entry before).
            if entrySize > room { break }
            used += entrySize
        }
        fuse_reply_buf(request, buffer, used)
    }
}
