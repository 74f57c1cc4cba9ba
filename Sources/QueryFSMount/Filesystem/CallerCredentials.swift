#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// Runs the system calls of a request under `bundles/` as the process that
/// made it: its uid and gid as the thread's filesystem ids, and its
/// supplementary groups. The backing file system then answers as it would
/// answer that process: what it creates is owned by the caller (gid as the
/// file system picks it, setgid folders included), and the rules the
/// kernel's `default_permissions` check leaves to the file system —
/// timestamps set to now by a non-owner with write access, sticky folders,
/// who may chown to which group — are applied to the caller, not to the
/// daemon. Without this, a mount by root with `-o allow_other` made every
/// file another user created root's.
///
/// Only a daemon running as root can switch; a daemon of an ordinary user
/// acts as itself (only its own user can use its mount unless allow_other).
/// Item locks are taken as the daemon, outside this, so they never depend
/// on the caller's permissions.
enum CallerCredentials {
    static var canSwitch: Bool { ThreadCredentials.canSwitch }

    /// Runs `body` with the caller's credentials; returns EPERM without
    /// running it if they cannot be taken on (never act with more rights
    /// than the caller has).
    static func asCaller(_ request: fuse_req_t?, _ body: () -> Int32) -> Int32 {
        guard canSwitch, let context = fuse_req_ctx(request) else { return body() }
        let uid = context.pointee.uid, gid = context.pointee.gid
        // Root asking: nothing to switch (the benchmarks' and systemd's case).
        if uid == 0, uid == geteuid(), gid == getegid() { return body() }
        switch ThreadCredentials.run(as: uid, gid, groups: supplementaryGroups(request), body) {
        case .success(let code): return code
        case .failure(let error): return error.errno
        }
    }

    /// The caller's supplementary groups, as libfuse reads them from /proc.
    private static func supplementaryGroups(_ request: fuse_req_t?) -> [gid_t] {
        var groups = [gid_t](repeating: 0, count: 64)
        var count = fuse_req_getgroups(request, Int32(groups.count), &groups)
        if count > Int32(groups.count) {
            groups = [gid_t](repeating: 0, count: Int(count))
            count = fuse_req_getgroups(request, Int32(groups.count), &groups)
        }
        return count > 0 ? Array(groups.prefix(Int(min(count, Int32(groups.count))))) : []
    }
}
