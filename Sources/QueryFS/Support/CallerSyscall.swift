#if canImport(Glibc)
import Glibc
#endif

/// What system call the thread behind a FUSE request is in, read from
/// `/proc/<tid>/syscall` (the thread sleeps in the kernel until we reply,
/// so the file is stable while we read it).
///
/// Why: `mkdir query/<query>` first looks the name up, and every name that
/// parses is a folder there, so the kernel would answer EEXIST without ever
/// asking us to make it. A lookup on behalf of mkdir must say ENOENT for a
/// query not saved yet; only the caller's system call tells the two apart.
enum CallerSyscall {
    /// Whether thread `tid` is in mkdir/mkdirat; nil if that cannot be read
    /// (another user's process under a restrictive ptrace policy, or a
    /// kernel without the file).
    static func isMakingDirectory(thread tid: pid_t) -> Bool? {
        guard let number = number(of: tid) else { return nil }
        return mkdirNumbers.contains(number)
    }

    #if arch(x86_64)
    static let mkdirNumbers: Set<Int> = [83, 258]   // mkdir, mkdirat
    #elseif arch(arm64)
    static let mkdirNumbers: Set<Int> = [34]        // mkdirat (arm64 has no mkdir)
    #else
    static let mkdirNumbers: Set<Int> = []
    #endif

    /// The first field of `/proc/<tid>/syscall`: the system call number
    /// ("running" or -1 when not in one).
    private static func number(of tid: pid_t) -> Int? {
        let fd = open("/proc/\(tid)/syscall", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let field = buffer[..<count].prefix { $0 != 0x20 && $0 != 0x0A }
        return Int(String(decoding: field, as: UTF8.self))
    }
}
