#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// `query/`: any name that parses is a live view of that query, made on
/// first lookup (as TMSU's `queries/`); one that does not is ENOENT, logged
/// with why. `mkdir` there saves the query into the configuration (the
/// folder then lasts across mounts); `rmdir` forgets it.
extension QueryFilesystem {
    func queryFolderLookup(_ request: fuse_req_t?, name: String) {
        let path = [ViewDefinition.queryFolder, name]
        let saved = savedQueries.withLock { $0.contains(name) }
        // mkdir looks the name up first: a query not saved yet must be
        // absent for it, or the kernel answers EEXIST without asking us.
        if !saved, isMakingDirectory(request) { return fail(request, ENOENT) }
        // The program renaming its draft first checks that the new name is free.
        if !saved, isDraftMaker(request), folders.folder(path: path) == nil { return fail(request, ENOENT) }
        // What file managers probe every folder for (.directory, .hidden,
        // .Trash): a miss, not a query to parse and log a line about.
        if name.hasPrefix(".") { return fail(request, ENOENT) }
        if let folder = folders.folder(path: path) {
            folder.touch()
            return replyFolderEntry(request, folder)
        }
        do {
            replyFolderEntry(request, try makeQueryFolder(name))
            dropUnusedQueryFoldersIfNeeded()
        } catch {
            catalog.logger.notice("query/\(name): \(error)")
            fail(request, ENOENT)
        }
    }

    func queryMkdir(_ request: fuse_req_t?, name: String) {
        if let error = QueryFilesystem.queryError(name) {
            // A file manager's new folder: an empty draft it renames next.
            if QueryDrafts.isPlaceholder(name, error: error) { return makeDraft(request, name: name, because: error) }
            catalog.logger.notice("mkdir query/\(name): \(error)")
            return fail(request, EINVAL)
        }
        guard editSavedQueries(request, name, saving: true) else { return }
        let folder: ViewFolder
        do {
            folder = try makeQueryFolder(name)
        } catch {
            // Payload keys the scan does not keep yet: the reload that the
            // saved file causes reads them, then fills this folder.
            folder = installListing(of: [ViewDefinition.queryFolder, name], records: [], at: .now).folder
        }
        replyFolderEntry(request, folder)
    }

    func queryRmdir(_ request: fuse_req_t?, name: String) {
        let saved = savedQueries.withLock { $0.contains(name) }
        guard saved || folders.folder(path: [ViewDefinition.queryFolder, name]) != nil else { return fail(request, ENOENT) }
        if saved, !editSavedQueries(request, name, saving: false) { return }
        removeQueryFolder(name)
        draftQueries.withLock { $0[name] = nil }
        fail(request, 0)
    }

    /// Saves or forgets `name` in the configuration file and in the mount's
    /// set; false once it has replied with the error (logged with why).
    func editSavedQueries(_ request: fuse_req_t?, _ name: String, saving: Bool) -> Bool {
        guard let file = configurationFile else {
            fail(request, EROFS)
            return false
        }
        do {
            if saving { try file.save(name) } else { try file.forget(name) }
        } catch {
            catalog.logger.error("\(saving ? "mkdir" : "rmdir") query/\(name): configuration not changed: \(error)")
            fail(request, error.errno)
            return false
        }
        savedQueries.withLock { if saving { _ = $0.insert(name) } else { _ = $0.remove(name) } }
        catalog.reloadConfigurationSoon()
        return true
    }

    /// The folder of query `name`, its view made and kept current from now on.
    func makeQueryFolder(_ name: String) throws(LiveCatalog.QueryViewFailure) -> ViewFolder {
        let path = [ViewDefinition.queryFolder, name]
        var made: ViewFolder?
        try catalog.queryView(name) { records in made = installListing(of: path, records: records, at: Timestamp.now).folder }
        queryRootClock.tick()
        // The kernel keeps every folder's listing (no opendir: see FuseOperations).
        nameInvalidations.addFolder(NodeID.queryRoot)
        return made!
    }

    func removeQueryFolder(_ name: String) {
        queryRootClock.tick()
        catalog.forgetQueryView(name)
        let path = [ViewDefinition.queryFolder, name]
        // Its serial stays taken (ids are never reused); its records need not.
        folders.folder(path: path)?.replace(ViewListing(records: []), at: .now)
        folders.removeFolder(path: path)
    }

    /// Whether `name` can be an entry of a folder: not empty, `.` or `..`,
    /// no `/` or NUL, at most 255 bytes.
    static func canBeFolderName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && name.utf8.count <= 255 && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    /// Takes the saved queries of the configuration (at mount, and on the
    /// watcher's thread after a reload): folders for new ones, none for
    /// those taken out. Returns what the kernel must forget.
    func takeSavedQueries(_ names: [String]) -> (entries: [[UInt8]], inodes: [UInt64]) {
        let wanted = Set(names)
        let old = savedQueries.withLock { current in defer { current = wanted }; return current }
        var entries: [[UInt8]] = []
        var inodes: [UInt64] = []
        for name in old.subtracting(wanted) {
            removeQueryFolder(name)
            entries.append(Array(name.utf8))
        }
        for name in names where !catalog.hasQueryView(name) {
            // A name the kernel cannot list (a `/` in it: `tag:a/b`) would
            // make every listing of query/ fail with EIO (found from
            // outside); it is left out, and said why.
            guard Self.canBeFolderName(name) else {
                catalog.logger.warning("saved query '\(name)' cannot be a folder of query/ (a name holds no '/' and at most 255 bytes): left out; `queryfs ls BACKING '\(name)'` lists it")
                continue
            }
            do {
                inodes.append(try makeQueryFolder(name).id)
            } catch {
                catalog.logger.warning("saved query/\(name): \(error)")
            }
        }
        if !entries.isEmpty || !inodes.isEmpty { inodes.append(NodeID.queryRoot) }
        return (entries, inodes)
    }

    /// Ad-hoc folders (not saved) beyond `queryFolderLimit` are dropped,
    /// those unused the longest first, never one that is open: a program
    /// that probes many names under `query/` (a file manager's search, a
    /// backup tool) would otherwise keep a live view for every one of them.
    /// A dropped folder is made again by its next lookup. The kernel must
    /// forget its name, which only the watcher thread may tell it.
    func dropUnusedQueryFoldersIfNeeded() {
        guard folders.queryFolders.count > queryFolderLimit + savedQueries.withLock({ $0.count }) + draftQueries.withLock({ $0.count }),
              !queryFolderDropPending.exchange(true, ordering: .relaxed) else { return }
        catalog.onWatcherThread { [self] in
            queryFolderDropPending.store(false, ordering: .relaxed)
            let dropped = dropUnusedQueryFolders()
            guard let session, !dropped.isEmpty else { return }
            for name in dropped { nameInvalidations.add(parent: NodeID.queryRoot, name: Array(name.utf8)) }
            queryRootClock.tick()
            KernelNotifications(session: session, logger: catalog.logger).invalidateInode(NodeID.queryRoot)
        }
    }

    /// Drops the unsaved folders beyond the limit (on the watcher thread); returns their names.
    private func dropUnusedQueryFolders() -> [String] {
        let kept = savedQueries.withLock { $0 }.union(draftQueries.withLock { $0.keys })
        let candidates = folders.queryFolders.filter { !kept.contains($0) }
            .compactMap { name in folders.folder(path: [ViewDefinition.queryFolder, name]).map { (name, $0) } }
        let excess = candidates.count - queryFolderLimit
        guard excess > 0 else { return [] }
        let now = monotonicSeconds()
        let victims = candidates.filter { now - $0.1.lastListed > ViewFolder.busySeconds }.sorted { $0.1.lastUsed < $1.1.lastUsed }.prefix(excess)
        for (name, _) in victims { removeQueryFolder(name) }
        if victims.count < excess { recheckQueryFoldersLater() }
        return victims.map(\.0)
    }

    /// Folders listed in the last `busySeconds` are never dropped; past the
    /// limit because of them, the drop is asked again once they are not
    /// (found from outside: 400 `ls` of new query folders in a row left
    /// about 380 live, since no lookup came after them to ask again).
    private func recheckQueryFoldersLater() {
        guard !queryFolderRecheckPending.exchange(true, ordering: .relaxed) else { return }
        let started = startThread(named: "queryfs-query-drop") { [self] in
            usleep(useconds_t(ViewFolder.busySeconds * 1_000_000) + 100_000)
            queryFolderRecheckPending.store(false, ordering: .relaxed)
            dropUnusedQueryFoldersIfNeeded()
        }
        // No thread: the next lookup asks again, as before.
        if !started { queryFolderRecheckPending.store(false, ordering: .relaxed) }
    }

    static func queryError(_ text: String) -> QueryError? {
        do {
            _ = try Query(parsing: text, now: .now)
            return nil
        } catch {
            return error
        }
    }

    /// Whether the request comes from a thread in mkdir (see CallerSyscall).
    private func isMakingDirectory(_ request: fuse_req_t?) -> Bool {
        guard let context = fuse_req_ctx(request) else { return false }
        switch CallerSyscall.answer(for: context.pointee.pid) {
        case .makingDirectory: return true
        case .other: return false
        case .unreadable:
            if !warnedSyscallUnreadable.exchange(true, ordering: .relaxed) {
                catalog.logger.warning("cannot read /proc/\(context.pointee.pid)/syscall: mkdir under query/ may answer EEXIST (add the query to `queries` in the configuration instead)")
            }
            return false
        }
    }
}
