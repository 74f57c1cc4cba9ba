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
    package static func unmount(_ mountPoint: String, connectionLives: () -> Bool? = { nil }) -> Outcome {
        let status = run(["fusermount3", "-u", "-q", mountPoint])
        if status == 0 { return .unmounted }
        // Busy or stale (daemon killed): a lazy unmount clears either; a busy
        // one's connection outlives it, and only that one is news.
        if run(["fusermount3", "-u", "-z", "-q", mountPoint]) == 0 || umount2(mountPoint, Int32(MNT_DETACH)) == 0 {
            return connectionLives() == true ? .detachedWhileBusy : .unmounted
        }
        let isMounted = MountTable.mounts().contains { $0.mountPoint == (resolvedPath(mountPoint) ?? mountPoint) }
        return .failed(isMounted ? "cannot unmount \(mountPoint): it is busy or not yours" : "\(mountPoint) is not mounted")
    }

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
