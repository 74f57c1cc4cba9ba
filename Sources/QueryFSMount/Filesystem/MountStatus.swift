#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// `MOUNTPOINT/.queryfs/status`: what the running daemon knows about
/// itself, as JSON — read by `queryfs status MOUNTPOINT` and by scripts,
/// answered from memory (no scan) in well under a second at any size.
/// Made anew at each open; served with direct I/O, so a read sees all of
/// it whatever size the last stat said.
extension QueryFilesystem {
    static let controlName = ".queryfs"
    static let statusName = "status"
    static let settledName = "settled"
    /// Opens of `.queryfs/settled` waiting at once, at most (of the session's 16 threads).
    static let settleOpensAtOnce = 4

    /// When the watcher last applied a change (nil: none since the mount).
    var lastChange: Timestamp? { lastChangeStorage.withLock { $0 } }

    func statusText() -> [UInt8] {
        // The records are copied out (a shared dictionary, no copy of the
        // items) and counted outside the index lock: at 100,000 items the
        // count takes 20 ms the watcher must not wait for.
        let (records, views) = catalog.withIndex { ($0.records, $0.views.count) }
        var problemItems: [(ItemName, String)] = []
        var problemCount = 0, archived = 0, bundles = 0, conflicts = 0
        for record in records.values {
            if record.archived { archived += 1 }
            if record.conflict != nil { conflicts += 1 }
            if record.kind == .bundle { bundles += 1 }
            guard !record.problems.isEmpty else { continue }
            problemCount += 1
            problemItems.append((record.name, record.problems.joined(separator: "; ")))
        }
        let items = records.count
        // The first 100 by name: the file stays small however much is broken.
        problemItems.sort { $0.0.bytes.lexicographicallyPrecedes($1.0.bytes) }
        let problems = problemItems.prefix(100).map { "{\"item\":\(JSON.string($0.0.description)),\"problem\":\(JSON.string($0.1))}" }
        let fields: [(String, String)] = [
            ("version", JSON.string(QueryFSVersion.string)),
            ("pid", String(getpid())),
            ("backing", JSON.string(catalog.backing.path)),
            (MountStatusFile.backingIdentityField, JSON.string(MountStatusFile.identity(ofDescriptor: catalog.backing.fd) ?? "")),
            ("mountPoint", JSON.string(mountPoint)),
            ("items", String(items)),
            ("bundles", String(bundles)),
            ("archived", String(archived)),
            ("conflicts", String(conflicts)),
            ("views", String(views)),
            ("tagFolders", String(folders.tagFolders.count)),
            ("queryFolders", String(folders.queryFolders.count)),
            ("changesFollowedBy", JSON.string(catalog.changeFollowing)),
            ("changeNotification", JSON.string(catalog.changeNotificationMode)),
            ("inotifyWatches", String(catalog.inotifyWatchCount)),
            ("index", Self.json(catalog.index)),
            ("backingFilesystem", JSON.string(catalog.backingFilesystem.type)),
            ("pollingSeconds", catalog.pollingInterval.map { String($0) } ?? "null"),
            ("itemLocks", JSON.string(catalog.backingFilesystem.locks.rawValue)),
            ("warnings", "[" + [catalog.backingFilesystem.lockNote].compactMap { $0 }.map(JSON.string).joined(separator: ",") + "]"),
            ("events", eventReplayer == nil ? "false" : "true"),
            ("mountedAt", JSON.string(ISO8601.format(Double(mountTime.seconds)))),
            ("lastChange", lastChange.map { JSON.string(ISO8601.format(Double($0.seconds))) } ?? "null"),
            ("itemsWithProblems", String(problemCount)),
            ("problems", "[" + problems.joined(separator: ",") + "]"),
            ("options", "[" + mountOptions.map(JSON.string).joined(separator: ",") + "]"),
            (MountStatusFile.configurationFileField, configurationFile.map { JSON.string($0.path) } ?? "null"),
            ("kernelRequests", KernelRequests.json()),
            ("nameSweeps", Self.json(nameSweeps.sweepCounts)),
            ("connectionGuard", Self.json(connectionGuard.withLock { $0 })),
        ]
        return Array(("{\n" + fields.map { MountStatusFile.line($0.0, $0.1) }.joined(separator: ",\n") + "\n}\n").utf8)
    }

    /// The `index` object: where the file is, and how the start used it.
    private static func json(_ index: IndexStatus) -> String {
        var fields = [("path", index.path.map(JSON.string) ?? "null"), ("note", JSON.string(index.note)),
                      ("itemsFromIndex", String(index.itemsFromIndex)), ("itemsRead", String(index.itemsRead)),
                      ("viewsFromIndex", String(index.viewsFromIndex)),
                      ("reconciled", index.reconciled ? "true" : "false")]
        if let seconds = index.reconciliationSeconds { fields.append(("reconciliationSeconds", String((seconds * 1000).rounded() / 1000))) }
        if let changed = index.changedWhileUnmounted { fields.append(("changedWhileUnmounted", String(changed))) }
        return "{" + fields.map { "\(JSON.string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    /// The `nameSweeps` object: the shifted-entry comparisons since the mount (`NameSweeps`).
    private static func json(_ counts: NameSweeps.Counts) -> String {
        "{\"queued\": \(counts.queued), \"merged\": \(counts.merged), \"entriesCompared\": \(counts.compared), "
            + "\"namesDropped\": \(counts.dropped), \"pending\": \(counts.pending)}"
    }

    /// The `connectionGuard` object: the process that aborts the connection
    /// should the daemon be killed (`ConnectionGuard`), or why there is none.
    private static func json(_ state: ConnectionGuard.State) -> String {
        switch state {
        case .running(let pid):
            return "{\"pid\": \(pid), \"running\": \(ConnectionGuard.isRunning(state))}"
        case .unavailable(let reason):
            return "{\"running\": false, \"note\": \(JSON.string(reason))}"
        }
    }

    /// `.queryfs/` itself: read-only, there since the mount.
    func controlAttributes() -> stat {
        var attributes = directoryAttributes(id: NodeID.control, changed: mountTime)
        attributes.st_mode = S_IFDIR | 0o555
        return attributes
    }

    func statusAttributes() -> stat {
        // Size 0, as /proc's files: the text is made when the file is opened
        // and read to its end (direct I/O). A size from this moment was wrong
        // by the time a reader that trusts it opened the file, should the
        // status change in between (a trusted start's reconciliation ending):
        // the reader then got truncated JSON. Also spares every stat a render.
        viewNodeAttributes(id: NodeID.status, mode: S_IFREG | 0o444, time: .now)
    }

    /// Opens the status: its text in a memory file whose descriptor is the handle.
    func openStatus(_ request: fuse_req_t?, info: UnsafeMutablePointer<fuse_file_info>) {
        guard info.pointee.flags & O_ACCMODE == O_RDONLY else { return fail(request, EACCES) }
        replyOpenReadOnly(request, info: info, memoryFileNamed: "queryfs-status", holding: statusText())
    }

    /// Opens `.queryfs/settled`: answered once the watcher has applied what
    /// it heard of BACKING's changes made before the open (at most 2 s
    /// later; the text says which). The edit commands open it, so that a
    /// running mount shows their edit when they return.
    func openSettled(_ request: fuse_req_t?, info: UnsafeMutablePointer<fuse_file_info>) {
        guard info.pointee.flags & O_ACCMODE == O_RDONLY else { return fail(request, EACCES) }
        // Each open holds one of the session's threads while it waits: a few
        // at once, so that opens in a loop (anyone's, with allow_other) never
        // leave the mount without threads for its requests while the watcher works.
        guard settleOpens.add(1, ordering: .relaxed).newValue <= Self.settleOpensAtOnce else {
            settleOpens.subtract(1, ordering: .relaxed)
            return fail(request, EBUSY)
        }
        defer { settleOpens.subtract(1, ordering: .relaxed) }
        let settled = catalog.waitUntilSettled(timeout: 2)
        replyOpenReadOnly(request, info: info, memoryFileNamed: "queryfs-settled", holding: Array((settled ? "settled\n" : "not settled within 2 s\n").utf8))
    }

    /// Answers an open with a memory file holding `bytes`, whose descriptor
    /// is the handle (`read` and `release` treat it as any other): direct
    /// I/O, so the kernel keeps no pages a later text would leave stale.
    func replyOpenReadOnly(_ request: fuse_req_t?, info: UnsafeMutablePointer<fuse_file_info>, memoryFileNamed name: String,
                           holding bytes: [UInt8]) {
        let fd = qfs_memory_file(name)
        guard fd >= 0 else { return fail(request, errno) }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { close(fd); return fail(request, EIO) }
        info.pointee.fh = UInt64(fd)
        qfs_file_info_set(info, 1, 0, 0)
        qfs_file_info_set_noflush(info, 1)  // read-only: nothing to report at close
        fuse_reply_open(request, info)
    }
}

/// Finding and reading a running mount's status, for `queryfs status`.
package enum MountStatusFile {
    /// The status text of the queryfs mount at `path`, or of the mount whose
    /// backing directory `path` is (with that mount's mount point); nil if neither.
    ///
    /// A mount point is read whoever mounted it: the caller named that mount,
    /// as when reading MOUNTPOINT/.queryfs/status, and the answer is the
    /// mount's. A backing directory is another matter: the caller named data
    /// and would be answered by whichever daemon claims it, so only a mount
    /// by the caller or by root is taken (`read(ofBacking:)`).
    package static func read(for path: String) -> (mountPoint: String, text: String)? {
        guard let resolved = resolvedPath(path) else { return nil }
        if let mount = MountTable.mounts().first(where: { $0.type == "fuse.queryfs" && $0.mountPoint == resolved }) {
            return status(of: mount)
        }
        return read(ofBacking: resolved)
    }

    /// The status of the mount of the backing directory `resolved` (a
    /// resolved path) that the caller trusts: one made by the caller or by
    /// root (`MountTable.trustedQueryfsMounts`). Another user's mount of it is
    /// ignored, and the caller computes from the index and BACKING as if
    /// nothing were mounted. nil when there is none.
    static func read(ofBacking resolved: String) -> (mountPoint: String, text: String)? {
        guard let (mountPoint, text) = MountTable.trustedQueryfsMounts(ofBacking: resolved).first.flatMap(status(of:)) else { return nil }
        // The folder at that path now may be another than the mount's: its
        // BACKING moved away and a new one made in its place (found from
        // outside: `ls` and `status` described the moved folder).
        var status = stat()
        if stat(resolved, &status) == 0, text.contains("\"\(backingIdentityField)\""),
           !has(backingIdentityField, value: JSON.string("\(status.st_dev):\(status.st_ino)"), in: text) {
            return nil
        }
        return (mountPoint, text)
    }

    /// The field holding BACKING's device and inode, as the mount opened it.
    static let backingIdentityField = "backingIdentity"

    /// `DEVICE:INODE` of an open folder.
    static func identity(ofDescriptor fd: Int32) -> String? {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        return "\(status.st_dev):\(status.st_ino)"
    }

    /// The process id of the daemon serving the mount at `mountPoint`, from
    /// its status file, read within a second (a stopped daemon: nil).
    package static func daemonProcess(of mountPoint: String) -> pid_t? {
        let path = mountPoint + "/" + QueryFilesystem.controlName + "/" + QueryFilesystem.statusName
        guard let answer = answerWithin(1, { try? readWholeFile(path) }), let text = answer else { return nil }
        // The field as `statusText` writes it: `"pid": 1234` (no Foundation here for a search).
        let key = Array("\"pid\":".utf8), bytes = Array(text.utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: key) }) else { return nil }
        let digits = bytes[(start + key.count)...].drop { $0 == UInt8(ascii: " ") }.prefix { (48...57).contains($0) }
        return pid_t(String(decoding: digits, as: UTF8.self))
    }

    /// nil, after one line on stderr, when the mount does not answer in
    /// time (its daemon stopped or hung): the command goes on as without it.
    private static func status(of mount: MountTable.Mount) -> (mountPoint: String, text: String)? {
        let path = mount.mountPoint + "/" + QueryFilesystem.controlName + "/" + QueryFilesystem.statusName
        guard let answer = answerWithin(mountAnswerSeconds, { try? readWholeFile(path) }) else {
            let line = Array("queryfs: the mount at \(mount.mountPoint) does not answer (its daemon is stopped or hung); going on without it\n".utf8)
            line.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
            return nil
        }
        return answer.map { (mount.mountPoint, $0) }
    }

    /// Why the queryfs mount `path` lies in (by its text: no link
    /// followed, nothing asked of the mount first) cannot answer a command,
    /// nil when it can or `path` is in none: its daemon does not answer in
    /// time (stopped or hung), is gone (killed: a stale mount), or the
    /// mount is another user's alone. A command given a path into a mount
    /// asks this first and stops with that one line, where a read of the
    /// mount would wait for good, or read as empty.
    package static func whyUnusable(containing path: String) -> String? {
        let absolute = lexicallyAbsolute(path)
        guard let mount = MountTable.mounts().last(where: {
            $0.type == "fuse.queryfs" && (absolute == $0.mountPoint || absolute.hasPrefix($0.mountPoint == "/" ? "/" : $0.mountPoint + "/"))
        }) else { return nil }
        let mountPoint = mount.mountPoint
        // An open and a read of its status file: the kernel answers a stat
        // of the mount point from its cache, and a daemon stopped or killed
        // right after a change passed that probe and then hung the listing
        // (found from outside); an open always reaches the daemon.
        let statusFile = mountPoint + "/" + QueryFilesystem.controlName + "/" + QueryFilesystem.statusName
        let probe = answerWithin(mountAnswerSeconds, { () -> Int32 in
            let fd = open(statusFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return errno }
            defer { close(fd) }
            var byte: UInt8 = 0
            return Glibc.read(fd, &byte, 1) >= 0 ? 0 : errno
        })
        switch probe {
        case nil: return "the mount at \(mountPoint) does not answer (its daemon is stopped or hung): `queryfs unmount \(mountPoint)` takes it away"
        case 0?: return nil
        case ENOTCONN?: return "the mount at \(mountPoint) has lost its daemon (it ended or was killed): `queryfs unmount \(mountPoint)` clears it"
        case let code?:
            let reason = String(cString: strerror(code))
            return code == EACCES || code == EPERM
                ? "the mount at \(mountPoint): \(reason) (a mount is its owner's alone unless mounted with -o allow_other)"
                : "the mount at \(mountPoint): \(reason)"
        }
    }


    /// The field naming the mount's configuration file (null: none).
    static let configurationFileField = "configurationFile"

    /// One field of the status text, a line of its own, as the mount writes it.
    static func line(_ name: String, _ value: String) -> String { "  \(JSON.string(name)): \(value)" }

    /// Whether the status `text` has the field `name` with exactly the JSON
    /// `value`. JSON escapes any newline inside a string, so no name or title
    /// in the file can fake the line.
    static func has(_ name: String, value: String, in text: String) -> Bool {
        let field = "\n" + line(name, value)
        return text.contains(field + ",\n") || text.contains(field + "\n}")
    }
}
