#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open descriptors (RLIMIT_NOFILE).
enum DescriptorLimit {
    /// The soft limit in force (nil: none, or unknown).
    static var current: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one, as systemd advises for
    /// programs that need many descriptors (a desktop's soft limit is 1,024;
    /// its hard limit 524,288). Select(2) is not used, so nothing breaks
    /// past 1,024. Returns the limit now in force.
    @discardableResult
    static func raiseSoftLimit() -> rlim_t {
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
}
