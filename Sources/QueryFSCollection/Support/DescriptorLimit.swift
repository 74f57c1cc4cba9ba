#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// The process's limit on open descriptors (RLIMIT_NOFILE).
package enum DescriptorLimit {
    /// The soft limit in force (nil: none, or unknown).
    package static var current: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one, as systemd advises for
    /// programs that need many descriptors (a desktop's soft limit is 1,024;
    /// its hard limit 524,288). Select(2) is not used, so nothing breaks
    /// past 1,024. Returns the limit now in force.
    @discardableResult
    package static func raiseSoftLimit() -> rlim_t {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { return raised.rlim_cur }
        }
        return limit.rlim_cur
    }

    /// Grows the process's descriptor table now to hold `count` descriptors
    /// (at most the soft limit), so that it need not grow while the mount
    /// serves. The kernel grows a shared table by doubling it and then
    /// waits for an RCU grace period (`expand_files` → `synchronize_rcu`)
    /// in whichever thread opened the descriptor past its end: 10–15 ms on
    /// the 2-core machine we measure on. The node descriptors kept open grow
    /// with the items changed, so the table doubled in the watcher's open of
    /// a new payload (256 → 512 slots, about the 200th change after a mount
    /// at 100,000 or 1,000,000 items): create p99 19–23 ms where every other
    /// sample took 6–10. A table is never shrunk; one slot costs the kernel
    /// 8 bytes and a bit (FDSize in /proc/PID/status counts them).
    package static func reserveTable(for count: Int) {
        let highest = min(count, current ?? count) - 1
        guard highest > 0 else { return }
        let probe = open("/", QFS_O_PATH | O_CLOEXEC)
        guard probe >= 0 else { return }  // no descriptor to copy: the table grows when it must, as before
        // The lowest free descriptor at or past `highest`: the table grows to hold it.
        let far = fcntl(probe, F_DUPFD_CLOEXEC, Int32(clamping: highest))
        if far >= 0 { close(far) }  // else (EMFILE, ENOMEM): the table grows when it must, as before
        close(probe)
    }
}
