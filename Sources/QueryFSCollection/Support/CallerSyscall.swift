#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// What system call the thread behind a FUSE request is in, read from
/// `/proc/<tid>/syscall` (the thread sleeps in the kernel until we reply,
/// so the file is stable while we read it).
///
/// Why: `mkdir query/<query>` first looks the name up, and every name that
/// parses is a folder there, so the kernel would answer EEXIST without ever
/// asking us to make it. A lookup on behalf of mkdir must say ENOENT for a
/// query not saved yet; only the caller's system call tells the two apart.
package enum CallerSyscall {
    package enum Answer { case makingDirectory, other, unreadable }

    /// Whether thread `tid` is in mkdir/mkdirat; `unreadable` if that cannot
    /// be read (another user's process under a restrictive ptrace policy,
    /// such as Yama's `ptrace_scope` 1, Ubuntu's default).
    package static func answer(for tid: pid_t) -> Answer {
        guard tid > 0 else { return .other }  // a request the kernel makes itself
        guard let field = firstField(of: tid) else { return .unreadable }
        // "running", or -1 outside a system call: not mkdir either way.
        guard let number = Int(field) else { return .other }
        return mkdirNumbers.contains(number) ? .makingDirectory : .other
    }

    /// Whether thread `tid` is only looking at a name (stat, access, an
    /// extended attribute's read) or making one (symlink, link, mknod,
    /// mkdir, creat) — not opening, reading a link, removing or renaming
    /// it; false when that cannot be read.
    package static func isLookingOrMaking(_ tid: pid_t) -> Bool {
        guard tid > 0, let field = firstField(of: tid), let number = Int(field) else { return false }
        return lookingNumbers.contains(number) || makingNumbers.contains(number)
    }

    /// Whether thread `tid` is opening a file (open, openat, openat2, creat,
    /// truncate): what reaches its contents, which a guess must never send
    /// to another item's.
    package static func isOpening(_ tid: pid_t) -> Bool {
        guard tid > 0, let field = firstField(of: tid), let number = Int(field) else { return false }
        return openingNumbers.contains(number)
    }

    /// Whether thread `tid` is making a name (symlink, link, mknod, mkdir, creat).
    package static func isMaking(_ tid: pid_t) -> Bool {
        guard tid > 0, let field = firstField(of: tid), let number = Int(field) else { return false }
        return makingNumbers.contains(number)
    }

    /// Whether this process may read other users' `/proc/<tid>/syscall`
    /// the way `answer` needs: as root, or where Yama does not restrict ptrace.
    package static var readsOtherProcesses: Bool {
        if geteuid() == 0 { return true }
        let fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) == 1 && byte == UInt8(ascii: "0")
    }

    #if arch(x86_64)
    static let mkdirNumbers: Set<Int> = [83, 258]   // mkdir, mkdirat
    // stat, lstat, access, getxattr, lgetxattr, listxattr, llistxattr, newfstatat, faccessat, statx, faccessat2
    static let lookingNumbers: Set<Int> = [4, 6, 21, 191, 192, 194, 195, 262, 269, 332, 439]
    // mkdir, creat, link, symlink, mknod, mkdirat, mknodat, linkat, symlinkat
    static let makingNumbers: Set<Int> = [83, 85, 86, 88, 133, 258, 259, 265, 266]
    // open, truncate, creat, openat, openat2
    static let openingNumbers: Set<Int> = [2, 76, 85, 257, 437]
    #elseif arch(arm64)
    static let mkdirNumbers: Set<Int> = [34]        // mkdirat (arm64 has no mkdir)
    // getxattr, lgetxattr, listxattr, llistxattr, faccessat, newfstatat, statx, faccessat2
    static let lookingNumbers: Set<Int> = [8, 9, 11, 12, 48, 79, 291, 439]
    // mkdirat, mknodat, symlinkat, linkat
    static let makingNumbers: Set<Int> = [33, 34, 36, 37]
    // truncate, openat, openat2
    static let openingNumbers: Set<Int> = [45, 56, 437]
    #else
    static let mkdirNumbers: Set<Int> = []
    static let lookingNumbers: Set<Int> = []
    static let makingNumbers: Set<Int> = []
    static let openingNumbers: Set<Int> = []
    #endif

    /// The first field of `/proc/<tid>/syscall`: the system call number
    /// ("running" or -1 when not in one); nil if the file cannot be read.
    ///
    /// "running" is read again for up to a millisecond: the caller is on
    /// its way to sleep for our reply, and a read that came first named no
    /// call (found in CI: a stat's lookup read as an action's, now and then).
    private static func firstField(of tid: pid_t) -> String? {
        for attempt in 0..<50 {
            guard let text = start(of: "/proc/\(tid)/syscall", count: 64) else { return nil }
            let field = String(decoding: text.prefix { $0 != 0x20 && $0 != 0x0A }, as: UTF8.self)
            guard field == "running", attempt < 49 else { return field }
            usleep(20)
        }
        return nil
    }

    /// The process thread `tid` belongs to (`Tgid:` of `/proc/<tid>/status`,
    /// readable for every process); nil when it cannot be read (it ended).
    package static func processID(ofThread tid: pid_t) -> pid_t? {
        // Tgid is the fourth line: 512 bytes hold it whatever the process's name (at most 64 bytes, escaped).
        guard tid > 0, let text = start(of: "/proc/\(tid)/status", count: 512) else { return nil }
        for line in text.split(separator: 0x0A) where line.starts(with: Array("Tgid:".utf8)) {
            return pid_t(String(decoding: line.dropFirst(5).filter { $0 != 0x20 && $0 != 0x09 }, as: UTF8.self))
        }
        return nil
    }

    /// The first `count` bytes of a `/proc` file (one read: these files are
    /// made whole at open), nil when it cannot be opened or is empty.
    private static func start(of path: String, count: Int) -> ArraySlice<UInt8>? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return read > 0 ? buffer[..<read] : nil
    }
}
