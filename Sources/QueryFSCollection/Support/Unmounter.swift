#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Unmounting, with `fusermount3 -u` (works for the user who mounted) and,
/// for a stale mount it cannot handle, a lazy unmount.
package enum Unmounter {
    package enum Outcome: Equatable {
        case unmounted
        /// In use (a shell's folder, an open file): taken out of the file
        /// tree now, the daemon ending once the last user lets go.
        case detachedWhileBusy
        case failed(String)
    }

    /// `connectionLives`: whether the mount's FUSE connection is still there
    /// after a lazy unmount (something still uses it), nil when that cannot
    /// be told. Asked instead of a stat of the mount point, which a hung
    /// daemon would never answer: `unmount` is the way out of one.
    package static func unmount(_ mountPoint: String, connectionLives: () -> Bool? = { nil }, table: String? = nil) -> Outcome {
        // Only a queryfs mount: the lazy unmount below would otherwise take
        // away any filesystem named by mistake, busy or not (found from
        // outside: `queryfs unmount` of a tmpfs in use detached it, exit 0).
        // By its text first: resolving a hung mount's path would wait on it.
        let mounts = MountTable.mounts(table: table), lexical = lexicallyAbsolute(mountPoint)
        let path = mounts.contains { $0.mountPoint == lexical } ? lexical : resolvedPath(mountPoint) ?? lexical
        guard let mount = mounts.last(where: { $0.mountPoint == path }) else {
            return .failed("\(mountPoint) is not mounted")
        }
        guard mount.type == "fuse.queryfs" else {
            return .failed("\(mountPoint) is a \(mount.type) mount, not a queryfs one: it is left as it is (umount(8) unmounts it)")
        }
        let status = run(["fusermount3", "-u", "-q", mountPoint])
        if status == 0 { return .unmounted }
        // Busy or stale (daemon killed): a lazy unmount clears either; a busy
        // one's connection outlives it, and only that one is news.
        if run(["fusermount3", "-u", "-z", "-q", mountPoint]) == 0 || umount2(mountPoint, Int32(MNT_DETACH)) == 0 {
            return connectionLives() == true ? .detachedWhileBusy : .unmounted
        }
        return .failed("cannot unmount \(mountPoint): it is busy or not yours")
    }

    /// `path` from the working directory, for a mount point that cannot be resolved (a stale mount).
    /// Runs a program found on PATH and returns its exit status (-1 if it could not start).
    static func run(_ arguments: [String]) -> Int32 {
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawnp(&pid, arguments[0], nil, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        _ = retryingOnEINTR { waitpid(pid, &status, 0) }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}
