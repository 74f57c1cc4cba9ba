#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// The calling thread's filesystem ids and groups, switched for the length
/// of one call and put back after: the kernel keeps credentials per thread
/// (`qfs_set_thread_credentials` makes the raw system calls), so no other
/// thread is affected. Only a daemon running as root can switch.
package enum ThreadCredentials {
    package static let canSwitch = geteuid() == 0
    private static let daemonIDs = (uid: geteuid(), gid: getegid())
    private static let daemonGroups: [gid_t] = {
        let count = getgroups(0, nil)
        guard count > 0 else { return [] }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let filled = getgroups(count, &groups)
        return filled >= 0 ? Array(groups.prefix(Int(filled))) : []
    }()

    /// Runs `body` as `uid`/`gid` with `groups`; EPERM (without running it)
    /// if they cannot be taken on: never act with more rights than asked.
    package static func run<R>(as uid: uid_t, _ gid: gid_t, groups: [gid_t] = [], _ body: () -> R) -> Result<R, SystemError> {
        guard groups.withUnsafeBufferPointer({ qfs_set_thread_credentials(uid, gid, $0.count, $0.baseAddress) }) == 0 else {
            let code = errno
            restore()
            return .failure(SystemError(errno: code == 0 ? EPERM : code, operation: "switch to uid \(uid)"))
        }
        defer { restore() }
        return .success(body())
    }

    private static func restore() {
        _ = daemonGroups.withUnsafeBufferPointer { qfs_set_thread_credentials(daemonIDs.uid, daemonIDs.gid, $0.count, $0.baseAddress) }
    }
}
