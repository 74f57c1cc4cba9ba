#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Logging
import Synchronization
import QueryFSEngine
import QueryFSCollection

/// The mount's own root, for the operations the daemon makes on its own
/// mount (the event replay, the link warming). Never a path alone: a folder
/// above the mount point can be renamed and the path pointed elsewhere
/// (`mv /t/a /t/a-moved; ln -s /t/sandbox /t/a/mnt`), and an `unlink` or
/// `rename` by path would then land on another filesystem — as root, for a
/// system mount. So the mount point is opened, then checked to be this
/// mount's root (the device the mount got, inode 1), and everything below it
/// is resolved with `openat2` beneath that descriptor, on this mount only,
/// through no symbolic link. When the path no longer leads here, nothing is
/// done and that is logged once.
///
/// The root is opened per batch of operations, not held: a descriptor held
/// open on the mount would make every `fusermount3 -u` fail with EBUSY.
final class MountRoot: Sendable {
    let path: String
    /// The mount's device, as the kernel numbers it (`st_dev`).
    let device: UInt64
    private let lost = Mutex<Bool>(false)
    private let logger: Logger

    private init(path: String, device: UInt64, logger: Logger) {
        self.path = path
        self.device = device
        self.logger = logger
    }

    /// The mount just made at `path`, found in /proc/self/mountinfo: the
    /// newest mount there, of type fuse.queryfs, mounted for this user
    /// (`user_id=`, which fusermount3 sets to its caller, so another user
    /// cannot put a mount of theirs there that passes for this one).
    static func find(mountPoint path: String, mountinfo: String? = nil,
                     logger: Logger) -> MountRoot? {
        let text = mountinfo ?? (try? readWholeFile("/proc/self/mountinfo")) ?? ""
        var found: MountInfoLine?
        for line in text.split(separator: "\n") {
            guard let parsed = MountInfoLine(line), parsed.mountPoint == path else { continue }
            found = parsed  // the last line is the mount on top
        }
        guard let found, found.type == "fuse.queryfs", found.root == "/",
              found.superOption("user_id") == String(geteuid())
        else { return nil }
        return MountRoot(path: path, device: found.device, logger: logger)
    }

    /// Runs `body` with a descriptor of the mount's root (O_PATH), or
    /// returns nil without running it when the mount point no longer leads
    /// to this mount's root.
    func withRoot<R>(_ body: (Int32) -> R) -> R? {
        let fd = open(path, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            // The mount is going away: nothing to say.
            if code != ENOTCONN && code != ENOENT { noteLost("open: \(String(cString: strerror(code)))") }
            return nil
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        guard UInt64(status.st_dev) == device, UInt64(status.st_ino) == NodeID.root else {
            noteLost("it now leads to another folder")
            return nil
        }
        return body(fd)
    }

    private func noteLost(_ reason: String) {
        let first = lost.withLock { lost -> Bool in
            defer { lost = true }
            return !lost
        }
        if first {
            logger.warning("""
                \(path) no longer reaches this mount (\(reason)): no more inotify events or link warming through it, \
                and nothing outside the mount is touched (logged once)
                """)
        }
    }
}

/// Folders below a mount root opened once per batch of operations, each
/// resolved beneath the root (see `MountRoot`). Closed by `close()`.
final class ConfinedFolders {
    private let root: Int32
    private var opened: [[UInt8]: Int32] = [:]

    init(root: Int32) { self.root = root }

    /// The folder at `components` below the root (the root itself for none),
    /// or nil with errno set (ELOOP for a symbolic link on the way, EXDEV
    /// for another mount).
    func folder(_ components: [[UInt8]]) -> Int32? {
        guard !components.isEmpty else { return root }
        var relative: [UInt8] = []
        for component in components {
            if !relative.isEmpty { relative.append(UInt8(ascii: "/")) }
            relative += component
        }
        if let fd = opened[relative] { return fd }
        let fd = relative.withCString { qfs_open_beneath(root, $0, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return nil }
        opened[relative] = fd
        return fd
    }

    func close() {
        for fd in opened.values { _ = Glibc.close(fd) }
        opened.removeAll()
    }
}

/// One line of /proc/self/mountinfo (proc(5)).
struct MountInfoLine {
    let device: UInt64
    let root: String
    let mountPoint: String
    let type: String
    let superOptions: [Substring]

    init?(_ line: Substring) {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count > 5, let separator = fields.firstIndex(of: "-"), separator + 3 < fields.count else { return nil }
        let numbers = fields[2].split(separator: ":")
        guard numbers.count == 2, let major = UInt64(numbers[0]), let minor = UInt64(numbers[1]) else { return nil }
        // glibc's makedev: what stat(2) reports for the same device.
        device = (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & ~0xff) << 12) | ((major & ~0xfff) << 32)
        root = MountTable.unescape(fields[3])
        mountPoint = MountTable.unescape(fields[4])
        type = String(fields[separator + 1])
        superOptions = fields[separator + 3].split(separator: ",")
    }

    func superOption(_ name: String) -> String? {
        for option in superOptions where option.hasPrefix(name + "=") {
            return String(option.dropFirst(name.count + 1))
        }
        return nil
    }
}
