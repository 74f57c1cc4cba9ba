#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Where a backing directory's index lives: by default in the user's cache
/// directory (`$XDG_CACHE_HOME/queryfs`, else `~/.cache/queryfs`; for root
/// without a home, `/var/cache/queryfs`; under systemd's `CacheDirectory=`,
/// `$CACHE_DIRECTORY`), never inside BACKING unless the
/// user names such a path. One file per directory, named after its last
/// component and a hash of its absolute path; beside it `NAME.lock`, which
/// a mount holds for as long as it keeps the index current.
package struct IndexLocation: Sendable, Equatable {
    package let path: String
    /// Whether all its missing folders are made (the cache folder's), or
    /// only the last (a path the user named: `--index ~/idx/x.index` makes
    /// `idx`, but a mistyped `/nonexist/dir/x.index` made `/nonexist` as
    /// root, found from outside).
    package let makesParentFolders: Bool

    package init(path: String, makesParentFolders: Bool = true) {
        self.path = path
        self.makesParentFolders = makesParentFolders
    }

    var lockPath: String { path + ".lock" }

    /// Why this path cannot hold `backing`'s index, nil when it can: inside
    /// BACKING the file would be an item (or inside one), and each change
    /// written to it a change to index again. A hidden top-level name is
    /// not an item (`BACKING/.queryfs-index`).
    package func refusal(backing: String) -> String? {
        let prefix = backing.hasSuffix("/") ? backing : backing + "/"
        guard path.hasPrefix(prefix) else { return nil }
        if path.dropFirst(prefix.count).hasPrefix(".") { return nil }
        return "\(path) would be an item of \(backing) (a hidden name there, such as \(prefix).queryfs-index, is not)"
    }

    /// The default location for the backing directory at absolute path
    /// `backing`; nil when there is no cache directory to use.
    package static func standard(for backing: String) -> IndexLocation? {
        guard let folder = cacheFolder() else { return nil }
        let lastComponent = backing.split(separator: "/").last.map(String.init) ?? "root"
        let readable = String(lastComponent.unicodeScalars.map { scalar -> Character in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
        }.prefix(48))
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in backing.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return IndexLocation(path: folder + "/" + readable + "-" + String(repeating: "0", count: 16 - hex.count) + hex + ".index")
    }

    private static func cacheFolder() -> String? {
        // Root keeps its index only where no one else could have put files
        // or links for it to trust (`sudo -E` keeps a user's HOME).
        func usable(_ folder: String) -> Bool {
            var status = stat()
            return geteuid() != 0 || lstat(folder, &status) != 0 || status.st_uid == 0
        }
        // systemd's CacheDirectory= (the system unit): already the folder for queryfs.
        if let given = environment("CACHE_DIRECTORY")?.split(separator: ":").first.map(String.init), given.hasPrefix("/"),
           usable(given) {
            return given
        }
        if let cache = environment("XDG_CACHE_HOME"), cache.hasPrefix("/"), usable(cache) { return cache + "/queryfs" }
        // A home folder that does not exist is not made (found from outside:
        // HOME=/nonexistent made /nonexistent, as root).
        func exists(_ folder: String) -> Bool {
            var status = stat()
            return stat(folder, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        }
        if let home = environment("HOME"), home.hasPrefix("/"), home != "/", usable(home), exists(home) { return home + "/.cache/queryfs" }
        if geteuid() == 0 { return "/var/cache/queryfs" }
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
        let home = String(cString: directory)
        return home.hasPrefix("/") && exists(home) ? home + "/.cache/queryfs" : nil
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// Makes the folder the index goes in (0700: titles are private), and
    /// its parents. The folder itself must be this user's, a real folder
    /// that no one else may write in: the lock and the file are trusted.
    func makeFolder() throws(SystemError) {
        var folder = ""
        let folders = path.split(separator: "/").dropLast()
        for (index, component) in folders.enumerated() {
            folder += "/" + component
            let isLast = index == folders.count - 1
            guard makesParentFolders || isLast else {
                guard access(folder, F_OK) == 0 else { throw SystemError(errno: ENOENT, operation: "use", path: folder, detail: "no such folder") }
                continue
            }
            if mkdir(folder, 0o700) != 0, errno != EEXIST { throw SystemError.current("mkdir", path: folder) }
        }
        var status = stat()
        guard lstat(folder, &status) == 0 else { throw SystemError.current("stat", path: folder) }
        guard status.st_mode & S_IFMT == S_IFDIR, status.st_uid == geteuid(), status.st_mode & 0o022 == 0 else {
            throw SystemError(errno: EPERM, operation: "use", path: folder,
                              detail: "not a folder of this user's that only it may write in")
        }
    }
}

/// The lock beside an index: a mount holds it exclusively while it keeps
/// the index current, and a command takes it for the moment it writes one.
/// Readers only look: a command that finds it held knows a mount is live.
final class IndexLock: @unchecked Sendable {
    private let fd: Int32

    enum Outcome {
        case acquired(IndexLock)
        /// Another process holds it (a live mount, or a command writing).
        case held
        case failed(SystemError)
    }

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// Takes the lock at `location` exclusively, without waiting, and
    /// writes `owner` into the lock file (a mount: "mount PID"; a command
    /// writing the index: empty), so readers can tell a live mount.
    static func take(_ location: IndexLocation, owner: String = "") -> Outcome {
        do { try location.makeFolder() } catch { return .failed(error) }
        let fd = open(location.lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return .failed(SystemError.current("open", path: location.lockPath)) }
        let lock = IndexLock(fd: fd)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            return errno == EWOULDBLOCK ? .held : .failed(SystemError.current("flock", path: location.lockPath))
        }
        do {
            try lock.setOwner(owner)
        } catch {
            return .failed(SystemError(errno: error.errno, operation: "write", path: location.lockPath))
        }
        return .acquired(lock)
    }

    /// Replaces what the lock file says about its holder.
    func setOwner(_ owner: String) throws(SystemError) {
        let text = Array(owner.utf8)
        guard ftruncate(fd, 0) == 0, text.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == text.count else {
            throw SystemError.current("write", path: "index lock")
        }
    }

    /// Takes it, waiting up to `seconds` for a command that is writing the index to finish.
    static func take(_ location: IndexLocation, owner: String, waiting seconds: Double) -> Outcome {
        let deadline = monotonicSeconds() + seconds
        while true {
            let outcome = take(location, owner: owner)
            guard case .held = outcome, monotonicSeconds() < deadline else { return outcome }
            usleep(50_000)
        }
    }

    /// What the holder of the lock wrote into it ("mount PID"), nil when
    /// no one holds it now (looked at, not kept).
    static func holder(_ location: IndexLocation) -> String? {
        // Non-blocking: a FIFO planted there must not hang a command.
        let fd = open(location.lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0, errno == EWOULDBLOCK else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return String(decoding: buffer.prefix(max(0, got)), as: UTF8.self)
    }
}
