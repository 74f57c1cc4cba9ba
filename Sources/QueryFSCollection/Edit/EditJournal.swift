#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine
import CSystemShims

/// Every edit made through a view or the edit commands, one JSON line each
/// in `BACKING/.queryfs-journal` (hidden, so never an item): when, which
/// item, each field's old and new value, and the files it rewrote as they
/// were before — so `queryfs undo` can put them back byte for byte.
///
///     {"id":"…","time":1763920000.25,"item":"X.hpwebsite","changes":[{"field":"tags","old":["a"],"new":["a","b"]}],
///      "files":[{"name":"payload.plist","before":"PD94…","after":"9f3c…"}]}
///
/// Lines are appended under an exclusive `flock` of the journal, written
/// whole (`writeAll`) and flushed, so concurrent editors (the mount, a
/// command) never interleave. Each line ends with a checksum of itself
/// (`"sum"`): a line torn by a crash or a full disk is found, skipped when
/// read and cut before the next append, so the next record never glues
/// onto it. Lines written before the checksum existed are read as they are.
///
/// An edit holds the journal open and locked from before it changes
/// anything until its record is written (`ItemEditor`): an unusable journal
/// refuses the edit untouched, and a record that cannot be written takes
/// the edit back.
package struct EditJournal: Sendable {
    package static let fileName = ".queryfs-journal"

    package struct Change: Sendable, Equatable {
        /// `tags`, `archived`, `title` or `payload.KEY.PATH`.
        package let field: String
        package let old: PayloadValue?
        package let new: PayloadValue?
    }

    /// A file (or `@user.xdg.tags`, the attribute) as the edit found it, and
    /// a hash of what it wrote there.
    package struct FileState: Sendable, Equatable {
        package let name: String
        package let before: [UInt8]?
        package let afterHash: UInt64
    }

    package struct Entry: Sendable, Equatable {
        package let id: String
        /// Seconds since 1970.
        package let time: Double
        package let item: ItemName
        package let changes: [Change]
        package let files: [FileState]
        /// The entry this one undid, if it is an undo.
        package let undoes: String?
        /// The action this edit was part of, shared by every edit of one
        /// action (a tag folder's rename rewrites each item that carries the
        /// tag; a command names several items): `undo` takes them back together.
        package var action: String? = nil
    }

    let backing: BackingDirectory

    package init(backing: BackingDirectory) { self.backing = backing }

    static let attributeFile = "@" + ExtendedAttributeTags.attributeName
    /// The item's own file (a note whose front matter an edit rewrote).
    static let itemFile = "."

    /// The journal, open for appending and exclusively locked until `close`.
    final class Appender {
        private let fd: Int32

        /// `timeout`: seconds to wait for another holder's lock (nil: as long as it takes).
        fileprivate init(backing: BackingDirectory, timeout: Double?) throws(SystemError) {
            var created = false
            var fd = EditJournal.fileName.withCString { openat(backing.fd, $0, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW) }
            if fd < 0, errno == ENOENT {
                // The owner's alone: it holds every edited file's bytes as
                // they were (found from outside: 0644 gave other users the
                // contents of 0600 payloads).
                fd = EditJournal.fileName.withCString { openat(backing.fd, $0, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600) }
                created = fd >= 0
            }
            guard fd >= 0 else { throw SystemError.current("open", path: EditJournal.fileName) }
            self.fd = fd
            do throws(SystemError) {
                // A FIFO or device there failed each edit with "Invalid argument" (found from outside).
                var status = stat()
                guard fstat(fd, &status) == 0 else { throw SystemError.current("stat", path: EditJournal.fileName) }
                guard status.st_mode & S_IFMT == S_IFREG else {
                    throw SystemError(errno: EINVAL, operation: "open", path: EditJournal.fileName, detail: "not a regular file")
                }
                try Self.lock(fd, timeout: timeout)
                try EditJournal.keepPrivate(fd, created: created, backing: backing)
                try EditJournal.cutTornTail(fd)
                // A new journal is found after a crash only once its folder is on disk.
                if created { try AtomicFile.syncFolder(backing.fd, path: EditJournal.fileName) }
            } catch {
                Glibc.close(fd)
                throw error
            }
        }

        /// Takes the journal's lock, waiting at most `timeout` seconds: a
        /// lock held elsewhere (another program's `flock` on the journal)
        /// made every edit wait for as long as it was held, and an `ln -s`
        /// through a mount that not even SIGTERM ended (found from outside).
        /// Polls as `ItemLock.lock` does: short pauses while the usual
        /// holder, another edit, takes a few milliseconds.
        private static func lock(_ fd: Int32, timeout: Double?) throws(SystemError) {
            guard let timeout else {
                guard retryingOnEINTR({ flock(fd, LOCK_EX) }) == 0 else { throw SystemError.current("flock", path: EditJournal.fileName) }
                return
            }
            let start = monotonicSeconds()
            var pause: useconds_t = 20
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR else { throw SystemError.current("flock", path: EditJournal.fileName) }
                let now = monotonicSeconds()
                guard now - start < timeout else {
                    throw SystemError(errno: EBUSY, operation: "lock", path: EditJournal.fileName,
                                      detail: "still locked by another process after \(timeout) s")
                }
                usleep(pause)
                pause = min(pause * 2, now - start < 0.05 ? 1_000 : 20_000)
            }
        }

        /// Where the last record began (nil: none appended).
        private var lastRecordStart: off_t?

        /// Writes `entry` as one line and flushes it to disk, closing a
        /// duplicate so that an error a network filesystem keeps for close
        /// is seen too. On failure the journal is cut back to where it was.
        func append(_ entry: Entry) throws(SystemError) {
            var status = stat()
            guard fstat(fd, &status) == 0 else { throw SystemError.current("stat", path: EditJournal.fileName) }
            do throws(SystemError) {
                try writeAll(Array((EditJournal.line(entry) + "\n").utf8), to: fd, path: EditJournal.fileName)
                guard retryingOnEINTR({ fdatasync(fd) }) == 0 else { throw SystemError.current("fsync", path: EditJournal.fileName) }
                let copy = dup(fd)
                guard copy >= 0, Glibc.close(copy) == 0 else { throw SystemError.current("close", path: EditJournal.fileName) }
            } catch {
                lastRecordStart = status.st_size
                cutLastRecord()
                throw error
            }
            lastRecordStart = status.st_size
        }

        /// Takes the last record out again (its edit was taken back). A cut
        /// that fails leaves a record whose files are as before: `undo`
        /// finds nothing to do for it.
        func cutLastRecord() {
            guard let start = lastRecordStart else { return }
            lastRecordStart = nil
            _ = retryingOnEINTR { ftruncate(fd, start) }
            _ = retryingOnEINTR { fdatasync(fd) }
        }

        /// Lets go of the lock and the file.
        func close() { Glibc.close(fd) }
    }

    /// A journal made by root (a root mount's edit) goes to BACKING's owner,
    /// who edits and undoes there next (found from outside: a root-owned
    /// journal refused every later edit of the folder's owner). One readable
    /// or writable by others than its owner, as journals were made before,
    /// is made the owner's alone.
    private static func keepPrivate(_ fd: Int32, created: Bool, backing: BackingDirectory) throws(SystemError) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw SystemError.current("stat", path: fileName) }
        // Another user's journal would get this edit's copies of the files
        // (found from outside: root appended to one a user had made first).
        var folder = stat()
        let backingOwner = fstat(backing.fd, &folder) == 0 ? folder.st_uid : 0
        let own = status.st_uid == geteuid() || (geteuid() == 0 && (status.st_uid == 0 || status.st_uid == backingOwner))
        guard created || own else {
            throw SystemError(errno: EPERM, operation: "append to", path: fileName,
                              detail: "it belongs to user \(status.st_uid), who would read the copies of the files each edit keeps there; edit as that user, or move it away")
        }
        if created, geteuid() == 0 {
            var folder = stat()
            if fstat(backing.fd, &folder) == 0, folder.st_uid != 0, fchown(fd, folder.st_uid, folder.st_gid) != 0 {
                throw SystemError.current("chown", path: fileName)
            }
        }
        if status.st_mode & 0o077 != 0, status.st_uid == geteuid(), fchmod(fd, 0o600) != 0 {
            throw SystemError.current("chmod", path: fileName)
        }
    }

    /// Opens and locks the journal (before an edit changes anything).
    func open(timeout: Double? = nil) throws(SystemError) -> Appender { try Appender(backing: backing, timeout: timeout) }

    /// Appends one entry (opens, locks, writes, flushes, closes).
    func append(_ entry: Entry) throws(SystemError) {
        let appender = try open()
        defer { appender.close() }
        try appender.append(entry)
    }

    /// A last line without its newline is what a crash or a failed write
    /// left: it is cut, so the next line starts on a line of its own.
    private static func cutTornTail(_ fd: Int32) throws(SystemError) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw SystemError.current("stat", path: fileName) }
        var end = Int(status.st_size)
        guard end > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var keep = 0
        var first = true
        searching: while end > 0 {
            let start = max(0, end - chunk.count)
            let count = chunk.withUnsafeMutableBytes { buffer in retryingOnEINTR { pread(fd, buffer.baseAddress!, end - start, off_t(start)) } }
            guard count == end - start else { throw SystemError.current("read", path: fileName) }
            if first, chunk[count - 1] == 0x0A { return }
            first = false
            if let newline = chunk[..<count].lastIndex(of: 0x0A) {
                keep = start + newline + 1
                break searching
            }
            end = start
        }
        guard retryingOnEINTR({ ftruncate(fd, off_t(keep)) }) == 0 else { throw SystemError.current("truncate", path: fileName) }
    }

    /// Held by one `undo` at a time, from choosing what to take back to
    /// journaling it: two at once chose the same edit, and all but one
    /// found nothing to do (found from outside: of five parallel undos, two
    /// took back edits). A lock on a byte far past the journal's end, of
    /// this open only (an open-file-description lock), so it never meets
    /// the flock each append takes. Nil when there is no journal.
    package final class UndoTurn {
        private let fd: Int32
        fileprivate init(fd: Int32) { self.fd = fd }
        deinit { Glibc.close(fd) }
    }

    package func waitForUndoTurn() throws(SystemError) -> UndoTurn? {
        let fd = Self.fileName.withCString { openat(backing.fd, $0, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw SystemError.current("open", path: Self.fileName)
        }
        guard qfs_lock_byte(fd, 1 << 62) == 0 else {
            let error = SystemError.current("lock", path: Self.fileName)
            Glibc.close(fd)
            throw error
        }
        return UndoTurn(fd: fd)
    }

    /// Fails unless the journal (if any) belongs to the caller or to root:
    /// `undo` writes the bytes a line holds, and anyone who owns the file
    /// can write any line, checksum and all (found from outside: in a shared
    /// folder another user's forged line made root's undo write their bytes
    /// into root's payload).
    package func requireTrustedOwner() throws(SystemError) {
        var status = stat()
        guard fstatat(backing.fd, Self.fileName, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        // Root undoes a journal of BACKING's owner too: a root mount's edits go there.
        var folder = stat()
        let backingOwner = fstat(backing.fd, &folder) == 0 ? folder.st_uid : 0
        let trusted = status.st_uid == geteuid() || status.st_uid == 0 || (geteuid() == 0 && status.st_uid == backingOwner)
        guard trusted else {
            throw SystemError(errno: EPERM, operation: "undo from", path: Self.fileName,
                              detail: "it belongs to user \(status.st_uid), not to you or root, and what it holds is written back as it says: undo as that user, or move the journal away")
        }
        // Anyone who may write it may write any line into it.
        guard status.st_mode & 0o022 == 0 else {
            throw SystemError(errno: EPERM, operation: "undo from", path: Self.fileName,
                              detail: "others than its owner may write it, and what it holds is written back as it says: `chmod go-w` it first")
        }
    }

    /// Every entry, oldest first; lines that do not read as entries are skipped.
    package func entries() throws(SystemError) -> [Entry] {
        var damaged = 0
        return try entries(damaged: &damaged)
    }

    /// The same, counting the lines skipped as damaged (a checksum that does
    /// not match, bytes that are no entry), for a command to say so.
    package func entries(damaged: inout Int) throws(SystemError) -> [Entry] {
        let bytes: [UInt8]
        do {
            bytes = try Self.fileName.withCString { name in
                Result { () throws(SystemError) in try DirectoryReader.readFile(name, in: backing.fd, expectedSize: 1 << 16, limit: 1 << 30) }
            }.get()
        } catch {
            if error.errno == ENOENT { return [] }
            throw error
        }
        var entries: [Entry] = []
        for line in bytes.split(separator: 0x0A) {
            if let entry = Self.checked(Array(line)).flatMap(Self.entry) { entries.append(entry) } else { damaged += 1 }
        }
        return entries
    }

    // MARK: Lines

    static func line(_ entry: Entry) -> String {
        func value(_ value: PayloadValue?) -> String {
            value.flatMap { PayloadText.json($0) }.map { String(decoding: $0, as: UTF8.self) } ?? "null"
        }
        var fields = ["\"id\":\(JSON.string(entry.id))", "\"time\":\(entry.time)", "\"item\":\(JSON.string(entry.item.description))"]
        if String(validating: entry.item.bytes, as: UTF8.self) == nil {
            fields.append("\"itemBase64\":\(JSON.string(Base64.encode(entry.item.bytes)))")
        }
        let changes = entry.changes.map { "{\"field\":\(JSON.string($0.field)),\"old\":\(value($0.old)),\"new\":\(value($0.new))}" }
        fields.append("\"changes\":[\(changes.joined(separator: ","))]")
        let files = entry.files.map { file in
            "{\"name\":\(JSON.string(file.name)),\"before\":\(file.before.map { JSON.string(Base64.encode($0)) } ?? "null"),"
                + "\"after\":\(JSON.string(String(file.afterHash, radix: 16)))}"
        }
        fields.append("\"files\":[\(files.joined(separator: ","))]")
        if let undoes = entry.undoes { fields.append("\"undoes\":\(JSON.string(undoes))") }
        if let action = entry.action { fields.append("\"action\":\(JSON.string(action))") }
        let body = "{" + fields.joined(separator: ",")
        return body + ",\(checksumKey)\"\(String(hash(Array(body.utf8)), radix: 16))\"}"
    }

    /// What stands before a line's checksum: the FNV-1a hash of the bytes
    /// before it, as hex. Last in the line, so it is found without parsing.
    static let checksumKey = "\"sum\":"

    /// The line if its checksum holds (or it has none: written before
    /// checksums), nil if it was torn or damaged.
    static func checked(_ line: [UInt8]) -> [UInt8]? {
        let key = Array((",\(checksumKey)\"").utf8)
        guard line.count > key.count + 2, line.last == UInt8(ascii: "}"), line[line.count - 2] == UInt8(ascii: "\"") else {
            return line.last == UInt8(ascii: "}") ? line : nil
        }
        // The checksum's hex digits, back to the key.
        var start = line.count - 2
        while start > 0, line[start - 1] != UInt8(ascii: "\"") { start -= 1 }
        let keyStart = start - key.count
        guard keyStart > 0, Array(line[keyStart..<start]) == key else { return line }  // no checksum: an older line
        guard let sum = UInt64(String(decoding: line[start..<(line.count - 2)], as: UTF8.self), radix: 16),
              sum == hash(Array(line[..<keyStart]))
        else { return nil }
        return line
    }

    static func entry(_ line: [UInt8]) -> Entry? {
        guard case .dictionary(let fields)? = try? JSONParser.parse(line),
              case .string(let id)? = fields["id"], case .string(let itemText)? = fields["item"],
              case .array(let changes)? = fields["changes"], case .array(let files)? = fields["files"]
        else { return nil }
        let time: Double
        switch fields["time"] {
        case .real(let seconds)?: time = seconds
        case .integer(let seconds)?: time = Double(seconds)
        default: return nil
        }
        var item = ItemName(itemText)
        if case .string(let encoded)? = fields["itemBase64"], let bytes = Base64.decode(encoded) { item = ItemName(bytes) }
        func optional(_ value: PayloadValue?) -> PayloadValue? { value == .null ? nil : value }
        let parsedChanges: [Change] = changes.compactMap {
            guard case .dictionary(let change) = $0, case .string(let field)? = change["field"] else { return nil }
            return Change(field: field, old: optional(change["old"]), new: optional(change["new"]))
        }
        let parsedFiles: [FileState] = files.compactMap {
            guard case .dictionary(let file) = $0, case .string(let name)? = file["name"], case .string(let after)? = file["after"],
                  let hash = UInt64(after, radix: 16) else { return nil }
            var before: [UInt8]?
            if case .string(let encoded)? = file["before"] { before = Base64.decode(encoded) }
            return FileState(name: name, before: before, afterHash: hash)
        }
        var undoes: String?
        if case .string(let undone)? = fields["undoes"] { undoes = undone }
        var action: String?
        if case .string(let shared)? = fields["action"] { action = shared }
        return Entry(id: id, time: time, item: item, changes: parsedChanges, files: parsedFiles, undoes: undoes, action: action)
    }

    /// FNV-1a: enough to tell whether a file is still what an edit wrote.
    static func hash(_ bytes: [UInt8]?) -> UInt64 {
        guard let bytes else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// A new action's name, for `ItemEditor.apply(_:to:action:)`.
    package static func newAction() -> String { newID() }

    static func newID() -> String {
        let now = Timestamp.now
        return "\(now.seconds)-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
    }
}

extension EditJournal {
    /// The entries `queryfs undo` takes back, newest first: those of the
    /// last `count` actions, or those since `time`, leaving out undos and
    /// what was undone already. An action is every entry sharing its
    /// `action` (a tag folder's rename, a command over several items), else
    /// one entry: an undo never leaves an action half taken back.
    package static func undoable(_ entries: [Entry], last count: Int? = nil, since time: Double? = nil) -> [Entry] {
        let undone = Set(entries.compactMap(\.undoes))
        var chosen = entries.filter { $0.undoes == nil && !undone.contains($0.id) }
        chosen.reverse()
        if let time {
            // An action that began before `time` is still taken back whole.
            let actions = Set(chosen.filter { $0.time >= time }.map(actionKey))
            chosen = chosen.filter { actions.contains(actionKey($0)) }
        }
        if let count {
            var actions: Set<String> = []
            for entry in chosen where actions.count < count { actions.insert(actionKey(entry)) }
            chosen = chosen.filter { actions.contains(actionKey($0)) }
        }
        return chosen
    }

    /// What groups an entry with others for undo: its action, or itself alone.
    private static func actionKey(_ entry: Entry) -> String { entry.action.map { "action " + $0 } ?? "entry " + entry.id }
}
