#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// Replaces a file whole: the new bytes go to a file beside it (unnamed
/// until it is whole, where the filesystem allows: `qfs_open_unnamed_file`),
/// flushed, with the old file's mode and owner, and are renamed over it, so
/// a reader (or a crash) sees the old file or the new one, never half of
/// one, and the folder is flushed after the rename, so what the caller was
/// told is what a crash leaves. A file edited by root for another user stays
/// that user's.
enum AtomicFile {
    /// Writes `bytes` as `name` in the folder `dirfd`. `template`: the
    /// status to copy mode and owner from when the file does not exist yet
    /// (a new payload takes its bundle's owner); `newFileMode`: the mode of a file made anew.
    /// The old file's extended attributes go to the new file too: tags and
    /// what other tools keep in `user.*`, and its access control list, so
    /// a collaborator an ACL let write a payload still may after an edit
    /// (found from outside: every edit dropped both, and undo did not bring
    /// them back). `ownerOnly`: the new file is 0600 and keeps no
    /// attributes whatever the old one had (the index).
    /// `unchangedSince`: the file as the caller read it; if another file
    /// (or a changed one) stands there just before the rename, nothing is
    /// written and the error is EAGAIN: an editor's save made meanwhile
    /// (editors take no lock) is never overwritten with bytes made from the
    /// version before it (found from outside).
    static func replace(_ name: [UInt8], in dirfd: Int32, with bytes: [UInt8], newFileLike template: stat? = nil,
                        newFileMode: mode_t = 0o644, ownerOnly: Bool = false, unchangedSince expected: FileIdentity? = nil) throws(SystemError) {
        try replaceUnflushed(name, in: dirfd, with: bytes, newFileLike: template, newFileMode: newFileMode, ownerOnly: ownerOnly,
                             unchangedSince: expected)
        // The rename is durable once the folder is: a crash before this
        // could bring back the old file after the caller was told of the new.
        try syncFolder(dirfd, path: String(decoding: name, as: UTF8.self))
    }

    /// `replace` up to the rename, the folder not flushed: returns once the
    /// new file stands under the name, throws only if it does not. The
    /// caller must `syncFolder` (an edit tells a file written from one not
    /// written by this: what a failure must take back).
    static func replaceUnflushed(_ name: [UInt8], in dirfd: Int32, with bytes: [UInt8], newFileLike template: stat? = nil,
                                 newFileMode: mode_t = 0o644, ownerOnly: Bool = false, unchangedSince expected: FileIdentity? = nil) throws(SystemError) {
        let display = String(decoding: name, as: UTF8.self)
        var old = stat()
        let exists = name.withCString { fstatat(dirfd, $0, &old, AT_SYMLINK_NOFOLLOW) } == 0
        // The mode and owner are copied from what stands there now: it
        // must be the file the caller read (found from outside: a payload
        // swapped for a link between the read and this gave a 0600 file a
        // link's mode). The same check is made again just before the rename.
        if let expected, !exists || FileIdentity(old) != expected {
            throw SystemError(errno: EAGAIN, operation: "replace", path: display,
                              detail: "it was saved by another program while this edit was made; nothing was written")
        }
        // The caller must be one who may write the file itself, not only
        // its folder: a rename over it would take it over (found from
        // outside: a member of a group folder took over another's 0644 payload).
        if exists, old.st_mode & S_IFMT == S_IFREG, !ownerOnly,
           name.withCString({ faccessat(dirfd, $0, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) }) != 0, errno == EACCES {
            throw SystemError(errno: EACCES, operation: "write", path: display)
        }
        // Nor may it be another user's when the caller cannot give the new
        // file back to them (only root can): it would become the caller's,
        // and its owner might lose it (found from outside: a group member's
        // tag made another's 0660 note theirs, and its owner was locked out).
        if exists, old.st_mode & S_IFMT == S_IFREG, !ownerOnly, geteuid() != 0, old.st_uid != geteuid() {
            throw SystemError(errno: EPERM, operation: "replace", path: display,
                              detail: "it belongs to user \(old.st_uid), and replaced by you it would become yours; edit it as that user")
        }
        // A link in the way (an index file someone linked elsewhere) is
        // replaced by a file of its own: neither its 0777 nor its owner are the file's.
        let copiesOld = exists && old.st_mode & S_IFMT != S_IFLNK && !ownerOnly
        let mode: mode_t = ownerOnly ? 0o600 : copiesOld ? old.st_mode & 0o7777 : newFileMode
        let owner: (uid_t, gid_t)? = copiesOld ? (old.st_uid, old.st_gid) : template.map { ($0.st_uid, $0.st_gid) }
        // Named after the file, or shorter where that would pass 255 bytes
        // (a note named at 230 bytes or more could not be edited, found from outside).
        let suffix = ".queryfs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let temporary = Array((name.count + 1 + suffix.utf8.count <= 255 ? "." + display + suffix : suffix).utf8)
        // The bytes go to a file without a name first, named only once they
        // are on disk: a process killed while writing (a signal, a size
        // limit, a crash) leaves nothing in the user's folder. Where the
        // filesystem has no unnamed files, a hidden named one stands in.
        // While the new file has a name of its own (from its naming, or its
        // creation where it cannot be unnamed, to the rename over the old
        // one), a signal that ends the process would leave it behind (found
        // from outside: SIGTERM, 1 in 50 kills of `queryfs tag`): held until
        // the rename is done or taken back. Edits are small: milliseconds.
        EditLeftovers.sweep(dirfd, name: name)
        let held = SignalsHeld()
        defer { held.release() }
        let unnamed = retryingOnEINTR { qfs_open_unnamed_file(dirfd) }
        let fd = unnamed >= 0 ? unnamed
            : temporary.withCString { name in retryingOnEINTR { openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) } }
        guard fd >= 0 else { throw SystemError.current("create", path: display) }
        var failure: SystemError?
        do {
            try writeAll(bytes, to: fd, path: display)
        } catch {
            failure = error
        }
        if failure == nil, let (uid, gid) = owner, uid != geteuid() || gid != getegid(), fchown(fd, uid, gid) != 0, errno != EPERM {
            failure = SystemError.current("chown", path: display)
        }
        if failure == nil, fchmod(fd, mode) != 0 { failure = SystemError.current("chmod", path: display) }
        if failure == nil, copiesOld {
            do { try copyAttributes(of: name, in: dirfd, to: fd) } catch { failure = SystemError(errno: error.errno, operation: error.operation, path: display) }
        }
        if failure == nil, retryingOnEINTR({ fsync(fd) }) != 0 { failure = SystemError.current("fsync", path: display) }
        if failure == nil, unnamed >= 0, temporary.withCString({ qfs_name_unnamed_file(fd, dirfd, $0) }) != 0 {
            let linkFailure = SystemError.current("link", path: display)
            close(fd)  // never named: nothing is left to remove
            throw linkFailure
        }
        // A network filesystem may report a write's failure only here.
        if close(fd) != 0, failure == nil { failure = SystemError.current("close", path: display) }
        if failure == nil, let expected {
            var now = stat()
            let present = name.withCString { fstatat(dirfd, $0, &now, AT_SYMLINK_NOFOLLOW) } == 0
            if !present || FileIdentity(now) != expected {
                failure = SystemError(errno: EAGAIN, operation: "replace", path: display,
                                      detail: "it was saved by another program while this edit was made; nothing was written")
            }
        }
        if failure == nil, temporary.withCString({ from in name.withCString { to in renameat(dirfd, from, dirfd, to) } }) != 0 {
            failure = SystemError.current("rename", path: display)
        }
        if let failure {
            _ = temporary.withCString { unlinkat(dirfd, $0, 0) }
            throw failure
        }
    }

    /// Copies the extended attributes of `name` to the open file `target`:
    /// every `user.*` one (a failure fails the edit), and those of other
    /// namespaces (the ACL, `security.*`, `trusted.*`) where this process
    /// may set them; one it may not (EPERM, or a namespace the filesystem
    /// refuses) is left to the filesystem's default, as cp -a leaves it.
    private static func copyAttributes(of name: [UInt8], in dirfd: Int32, to target: Int32) throws(SystemError) {
        let source = name.withCString { openat(dirfd, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard source >= 0 else { throw SystemError.current("open") }
        defer { close(source) }
        var names = [CChar](repeating: 0, count: 65_536)
        let length = Int(qfs_flistxattr(source, &names, UInt(names.count)))
        guard length >= 0 else {
            if errno == ENOTSUP { return }
            throw SystemError.current("listxattr")
        }
        let user = Array("user.".utf8).map { CChar(bitPattern: $0) }
        var value = [UInt8](repeating: 0, count: 65_536)
        for attribute in names[..<length].split(separator: 0) {
            let cName = Array(attribute) + [0]
            let isUser = attribute.starts(with: user)
            let size = qfs_getxattrat(source, nil, cName, &value, UInt(value.count))
            guard size >= 0 else {
                if !isUser, errno == EPERM || errno == EACCES || errno == ENOTSUP { continue }
                throw SystemError.current("getxattr")
            }
            guard qfs_setxattrat(target, nil, cName, value, UInt(size)) == 0 else {
                if !isUser, errno == EPERM || errno == EACCES || errno == ENOTSUP || errno == EINVAL { continue }
                throw SystemError.current("setxattr")
            }
        }
    }

    /// fsync of the folder `dirfd` names (opened anew: `dirfd` may be O_PATH).
    static func syncFolder(_ dirfd: Int32, path: String) throws(SystemError) {
        let folder = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw SystemError.current("open the folder of", path: path) }
        defer { close(folder) }
        guard retryingOnEINTR({ fsync(folder) }) == 0 else { throw SystemError.current("fsync the folder of", path: path) }
    }
}

/// What says a file is still the one read: the same inode, size, and
/// modification and change times.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: Timestamp
    let changed: Timestamp

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: UInt32(status.st_mtim.tv_nsec))
        changed = Timestamp(seconds: Int64(status.st_ctim.tv_sec), nanoseconds: UInt32(status.st_ctim.tv_nsec))
    }
}

/// The signals that end a process (SIGTERM, SIGINT, SIGHUP, SIGQUIT), held
/// for the calling thread until `release`: one that comes meanwhile is
/// delivered then (or to another thread that does not hold it).
private struct SignalsHeld {
    private var previous = sigset_t()

    init() {
        var ending = sigset_t()
        sigemptyset(&ending)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT] { sigaddset(&ending, signal) }
        pthread_sigmask(SIG_BLOCK, &ending, &previous)
    }

    func release() {
        var previous = self.previous
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
