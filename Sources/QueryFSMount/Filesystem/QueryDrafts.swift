#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// A file manager's "new folder" in `query/`. Nemo and Caja make the folder
/// under a placeholder name first ("Untitled Folder", in the user's
/// language) and rename it to what the user types; refused, that `mkdir`
/// made both do nothing at all — no folder, no message. Such a name becomes
/// an empty *draft*: listed, never saved, gone at unmount or `rmdir`, and
/// saved as a query when it is renamed to one. A name that is not shaped
/// like a placeholder is refused as before (`mkdir 'query/(tag:a'`: EINVAL).
enum QueryDrafts {
    /// Who made a draft, and when (monotonic seconds).
    struct Maker {
        let process: pid_t
        let user: uid_t
        let made: Double
    }

    /// How long after a draft was made its user's other processes also see
    /// unsaved queries as absent: Dolphin checks the new name from another
    /// process than the KIO worker that made the folder (neither is the
    /// other's parent), and its rename comes within seconds of the mkdir.
    static let userWindowSeconds = 120.0

    /// At most this many drafts at once: a program that makes placeholder
    /// folders in a loop gets ENOSPC, not a mount that grows without end.
    static let limit = 64

    /// Words of letters and digits, at least two, one space apart, maybe
    /// numbered ("Untitled Folder 2", "Neuer Ordner (2)", "Новая папка"),
    /// whose first word is no query field (a mistyped query keeps EINVAL):
    /// what a program's placeholder looks like in any language with spaces.
    static func isPlaceholder(_ name: String, error: QueryError) -> Bool {
        guard error.position == 0 else { return false }
        var words = name.split(separator: " ", omittingEmptySubsequences: false)
        if let last = words.last, last.count > 2, last.first == "(", last.last == ")",
           last.dropFirst().dropLast().allSatisfy({ $0.isASCII && $0.isNumber }) { words.removeLast() }
        return words.count >= 2 && words.allSatisfy { word in
            !word.isEmpty && word.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil }
        }
    }
}

extension QueryFilesystem {
    func makeDraft(_ request: fuse_req_t?, name: String, because error: QueryError) {
        let path = [ViewDefinition.queryFolder, name]
        guard folders.folder(path: path) == nil else { return fail(request, EEXIST) }
        guard draftQueries.withLock({ $0.count }) < QueryDrafts.limit else {
            return refuse(request, ENOSPC, "mkdir query/\(name): not a query, and \(QueryDrafts.limit) drafts are there already (rename or remove one)")
        }
        catalog.logger.notice("mkdir query/\(name): not a query (\(error)): an empty draft, saved when renamed to a query")
        let context = fuse_req_ctx(request)
        let maker = QueryDrafts.Maker(process: context.flatMap { CallerSyscall.processID(ofThread: $0.pointee.pid) } ?? 0,
                                      user: context?.pointee.uid ?? 0, made: monotonicSeconds())
        draftQueries.withLock { $0[name] = maker }
        let folder = installListing(of: path, records: [], at: .now).folder
        queryRootClock.tick()
        nameInvalidations.addFolder(NodeID.queryRoot)
        replyFolderEntry(request, folder)
    }

    /// `mv query/A query/B`: B is saved (A forgotten if it was saved) and the
    /// folder, the same node, lists B. A draft may also take another
    /// placeholder name; nothing takes a name that is no query.
    func queryRename(_ request: fuse_req_t?, from: String, to: String, flags: UInt32) {
        let what = "mv 'query/\(from)' 'query/\(to)'"
        let source = [ViewDefinition.queryFolder, from], target = [ViewDefinition.queryFolder, to]
        guard folders.folder(path: source) != nil else { return fail(request, ENOENT) }
        guard flags & QFS_RENAME_EXCHANGE == 0 else { return refuse(request, EPERM, "\(what): query folders cannot exchange names") }
        if from == to { return fail(request, 0) }
        // A folder merely looked up (not saved, no draft) gives way; a saved one or a draft does not.
        let taken = savedQueries.withLock { $0.contains(to) } || draftQueries.withLock { $0[to] != nil }
        if taken || flags & QFS_RENAME_NOREPLACE != 0 && folders.folder(path: target) != nil { return fail(request, EEXIST) }
        let isDraft = draftQueries.withLock { $0[from] != nil }
        if let error = QueryFilesystem.queryError(to) {
            guard isDraft, QueryDrafts.isPlaceholder(to, error: error) else { return refuse(request, EINVAL, "\(what): \(error)") }
            draftQueries.withLock { drafts in drafts[to] = drafts.removeValue(forKey: from) }
            movedQueryFolder(from: source, to: target)
            return fail(request, 0)
        }
        // Saved under the new name first: when that fails, nothing changed.
        guard editSavedQueries(request, to, saving: true) else { return }
        if savedQueries.withLock({ $0.contains(from) }), !editSavedQueries(request, from, saving: false) { return }
        draftQueries.withLock { $0[from] = nil }
        catalog.forgetQueryView(from)
        movedQueryFolder(from: source, to: target)
        do {
            _ = try makeQueryFolder(to)
        } catch {
            // Payload keys the scan does not keep yet: the reload the save causes fills it.
            installListing(of: target, records: [], at: .now)
        }
        fail(request, 0)
    }

    /// Whether the request comes from whoever is renaming a draft: the
    /// process that made one still there, or, for `userWindowSeconds` after
    /// it was made, any process of its user. Renaming it, GLib (Nemo, Caja)
    /// and KIO (Dolphin) first look the new name up and give up when it
    /// exists — and under `query/` every query exists, made by its lookup.
    /// So to them, a query not saved nor looked up yet is absent until the
    /// draft is renamed or removed.
    func isDraftMaker(_ request: fuse_req_t?) -> Bool {
        let makers = draftQueries.withLock { Array($0.values) }
        guard !makers.isEmpty, let context = fuse_req_ctx(request) else { return false }
        let now = monotonicSeconds()
        if makers.contains(where: { $0.user == context.pointee.uid && now - $0.made < QueryDrafts.userWindowSeconds }) { return true }
        guard let process = CallerSyscall.processID(ofThread: context.pointee.pid) else { return false }
        return makers.contains { $0.process == process }
    }

    private func movedQueryFolder(from source: [String], to target: [String]) {
        queryRootClock.tick()
        folders.moveFolder(from: source, to: target)
        nameInvalidations.addFolder(NodeID.queryRoot)
    }
}
