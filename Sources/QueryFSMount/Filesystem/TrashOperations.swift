#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// The trash at the mount's root (issue 32): "Move to Trash" in Nautilus,
/// Nemo, Caja, Thunar or pcmanfm (GIO's `g_file_trash`, freedesktop's trash
/// specification) works on view entries, and restoring puts them back.
///
/// GIO trashes a file on another filesystem into `TOPDIR/.Trash-UID/`: it
/// makes that folder (0700) and its `files/` and `info/`, writes
/// `info/NAME.trashinfo`, then renames the file into `files/`. Here
/// `.Trash-UID` at the root is BACKING's own hidden `BACKING/.Trash-UID`,
/// passed through like `bundles/` (never an item: hidden names are not), so
/// everything but that rename is an ordinary file operation. The rename of
/// a view entry into `files/` is the view's `rm` — the item leaves the view
/// (untagged, archived: the same edit, journaled, `queryfs undo` takes it
/// back) — and leaves in `files/` a symbolic link to the item, so the trash
/// lists it and "Restore" has something to move back: that rename, from
/// `files/` into a view folder, joins the view (`ln -s`) and removes the
/// link. Emptying the trash removes links; the items stay in BACKING.
extension QueryFilesystem {
    /// `.Trash-UID`: the only names at the root that lead into BACKING.
    static func isTrashFolderName(_ name: String) -> Bool {
        guard name.hasPrefix(".Trash-") else { return false }
        let uid = name.dropFirst(".Trash-".count)
        return !uid.isEmpty && uid.count <= 10 && uid.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Lookup of `.Trash-UID` at the root: BACKING's folder of that name, or
    /// a miss the kernel keeps (`rootMissTimeout`: GIO asks for every file
    /// it shows) until someone makes it.
    func trashLookup(_ request: fuse_req_t?, name: UnsafePointer<CChar>) {
        var status = stat()
        guard fstatat(passthrough.rootFD, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            var miss = fuse_entry_param()
            miss.entry_timeout = policy.rootMissTimeout
            fuse_reply_entry(request, &miss)
            return
        }
        replyPassthroughEntry(request, parent: passthrough.root, name: name)
    }

    /// `mkdir .Trash-UID` at the root, by user UID only: made in BACKING, as
    /// that user, 0700 whatever was asked (the trash specification's mode).
    func trashMkdir(_ request: fuse_req_t?, name: UnsafePointer<CChar>) {
        let caller = fuse_req_ctx(request).pointee.uid
        guard String(cString: name) == ".Trash-\(caller)" else {
            return refuse(request, EACCES, "mkdir '\(String(cString: name))': user \(caller)'s trash folder is .Trash-\(caller)")
        }
        passthroughMake(request, parent: passthrough.root, name: name) { mkdirat($0, name, 0o700) }
    }

    /// Whether `node` is the `files/` folder of a trash folder at the root.
    func isTrashFiles(_ node: PassthroughNode) -> Bool {
        guard node.name == Array("files".utf8), let trash = passthrough.node(node.parent) else { return false }
        return trash.parent == NodeID.bundles && Self.isTrashFolderName(String(decoding: trash.name, as: UTF8.self))
    }

    /// The link left in `files/` for `item`: the path from there to the item
    /// in `bundles/`, through the mount (`.Trash-UID/files/` is two below the root).
    static func trashLink(to item: ItemName) -> [UInt8] { Array("../../\(bundlesName)/".utf8) + item.bytes }

    /// The item a link in `files/` leads to, if it is one `trashLink` made.
    static func item(ofTrashLink target: [UInt8]) -> ItemName? {
        let prefix = Array("../../\(bundlesName)/".utf8)
        guard target.count > prefix.count, Array(target.prefix(prefix.count)) == prefix else { return nil }
        let name = Array(target.dropFirst(prefix.count))
        // A path that climbs back out is no item of ours.
        guard !name.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == [0x2E] || $0 == [0x2E, 0x2E] })
        else { return nil }
        return ItemName(name)
    }

    /// `mv VIEW/ENTRY .Trash-UID/files/NAME` (GIO's trash): the link first,
    /// as the caller, then the view's `rm`; the link goes again when the
    /// edit is refused, so the trash never holds what did not leave.
    func trashEntry(_ request: fuse_req_t?, parent: UInt64, name: UnsafePointer<CChar>, files: PassthroughNode,
                    newName: UnsafePointer<CChar>)
    {
        let shown = "move '\(String(cString: name))' to the trash"
        guard let (folder, view) = editableView(parent) else { return refuse(request, EPERM, "\(shown): not an entry of a view") }
        guard let record = entryRecord(named: name, in: folder) else { return fail(request, ENOENT) }
        guard case .edits(let edits) = ViewMembership.leave(view.filter) else {
            let why = if case .refused(let why) = ViewMembership.leave(view.filter) { why } else { "" }
            return refuse(request, EPERM, "\(shown): \(folder.path.joined(separator: "/")) cannot be left by an edit: \(why)")
        }
        if folder.path.count == 2, folder.path[0] == ViewDefinition.tagFolder { madeTagFolders.withLock { _ = $0.insert(folder.path[1]) } }
        withNodeDescriptor(request, files) { filesFD in
            let link = Self.trashLink(to: record.name) + [0]
            let made = link.withUnsafeBufferPointer { target in
                CallerCredentials.asCaller(request) {
                    target.withMemoryRebound(to: CChar.self) { symlinkat($0.baseAddress!, filesFD, newName) == 0 ? 0 : errno }
                }
            }
            guard made == 0 else { return refuse(request, made, "\(shown): the link in the trash: \(String(cString: strerror(made)))") }
            let (code, entry) = journaledEdit(record.name, edits, what: "\(shown) from \(folder.path.joined(separator: "/"))",
                                              expected: { !view.filter.matches($0) })
            if code == 0, let entry { trashedRemovals.note(entry, item: record.name, in: folder.id) }
            if code != 0 { _ = CallerCredentials.asCaller(request) { unlinkat(filesFD, newName, 0) } }
            fail(request, code)
            // The kernel moved the entry's name into files/: the link there is another node.
            if code == 0 { forgetNamesAfterReply([(files.id, Self.bytes(newName))]) }
        }
    }

    /// `mv .Trash-UID/files/NAME VIEW/NAME` (a file manager's "Restore"): the
    /// item joins the view, as `ln -s` into it would, and the link goes.
    func restoreFromTrash(_ request: fuse_req_t?, files: PassthroughNode, name: UnsafePointer<CChar>, newParent: UInt64,
                          newName: UnsafePointer<CChar>)
    {
        let shown = "restore '\(String(cString: name))' from the trash"
        guard let (target, targetView) = editableView(newParent) else {
            return refuse(request, EPERM, "\(shown): only into a view folder")
        }
        withNodeDescriptor(request, files) { filesFD in
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = buffer.withUnsafeMutableBufferPointer { out in
                out.withMemoryRebound(to: CChar.self) { readlinkat(filesFD, name, $0.baseAddress!, $0.count - 1) }
            }
            guard count > 0, let item = Self.item(ofTrashLink: Array(buffer.prefix(count))) else {
                return refuse(request, EPERM, "\(shown): not a link the trash made to an item")
            }
            var code: Int32 = 0
            switch ViewMembership.join(targetView.filter, tagNamed: tag(forFolder:)) {
            // Back into the folder it left: the trashing taken back, nested tags and all (found
            // from outside: restored into tag/lang, an item tagged lang/rust came back tagged lang).
            case .edits where takeBack(trashedRemovals, of: item, in: target, what: shown): break
            case .edits(let edits): code = edit(item, edits, what: shown, expected: targetView.filter.matches)
            case .alreadyMember: break
            case .refused(let why): return refuse(request, EPERM, "\(shown): \(target.path.joined(separator: "/")) cannot be joined by an edit: \(why)")
            }
            if code == 0 { code = CallerCredentials.asCaller(request) { unlinkat(filesFD, name, 0) == 0 ? 0 : errno } }
            // Its `info/NAME.trashinfo` goes too, as `gio trash --restore` removes it
            // (found from outside: moving the link back left it in the trash for good).
            // The info folder is opened beneath BACKING by its path, never as `files/..`,
            // which leads wherever the folder was moved meanwhile.
            if code == 0, let trash = passthrough.node(files.parent) {
                let infoFD = (trash.name + Array("/info".utf8)).withCString { qfs_open_beneath(passthrough.rootFD, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                if infoFD >= 0 {
                    let info = Self.bytes(name) + Array(".trashinfo".utf8)
                    _ = CallerCredentials.asCaller(request) { info.withCString { unlinkat(infoFD, $0, 0) } == 0 ? 0 : errno }
                    close(infoFD)
                }
            }
            fail(request, code)
            if code == 0 { forgetNamesAfterReply([(newParent, Self.bytes(newName))]) }
        }
    }
}
