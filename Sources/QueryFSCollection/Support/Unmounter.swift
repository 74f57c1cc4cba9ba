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

    package static func unmount(_ mountPoint: String) -> Outcome {
        let status = run(["fusermount3", "-u", "-q", mountPoint])
        if status == 0 { return .unmounted }
        // Busy or stale (daemon killed): a lazy unmount clears either. A busy one
        // answers a stat still, a stale one cannot (ENOTCONN): only that one is news.
        var before = stat()
        let alive = stat(mountPoint, &before) == 0
        if run(["fusermount3", "-u", "-z", "-q", mountPoint]) == 0 || umount2(mountPoint, Int32(MNT_DETACH)) == 0 {
            return alive ? .detachedWhileBusy : .unmounted
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
