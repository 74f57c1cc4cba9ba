#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Unmounting, with `fusermount3 -u` (works for the user who mounted) and,
/// for a stale mount it cannot handle, a lazy unmount.
package enum Unmounter {
    /// Returns nil on success, else the line to show.
    package static func unmount(_ mountPoint: String) -> String? {
        let status = run(["fusermount3", "-u", "-q", mountPoint])
        if status == 0 { return nil }
        // A stale mount (daemon killed): a lazy unmount clears it.
        if run(["fusermount3", "-u", "-z", "-q", mountPoint]) == 0 { return nil }
        if umount2(mountPoint, Int32(MNT_DETACH)) == 0 { return nil }
        let isMounted = MountTable.mounts().contains { $0.mountPoint == (resolvedPath(mountPoint) ?? mountPoint) }
        return isMounted ? "cannot unmount \(mountPoint): it is busy or not yours" : "\(mountPoint) is not mounted"
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
