#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// Edits through views (SPEC §6): `ln -s` into a view joins it, `rm` of an
/// entry leaves it, `mv` between views leaves one and joins the other, a
/// rename within a view retitles, and `mkdir`, `rmdir` and `mv` in `tag/`
/// make, remove and rename tags. Each changes payloads through
/// `ItemEditor` (coordinated, atomic, journaled), then waits until every
/// view shows the change (`LiveCatalog.applyNow`) before it answers. What
/// cannot be expressed as an edit is EPERM, with one log line saying why.
extension QueryFilesystem {
    var editor: ItemEditor {
        ItemEditor(backing: catalog.backing, sources: catalog.fieldSources, lockTimeout: lockTimeout)
    }

    /// Answers `code` and logs why.
    func refuse(_ request: fuse_req_t?, _ code: Int32, _ why: String) {
        catalog.logger.notice("\(why)")
        fail(request, code)
    }

    /// The view folder at node `id` and its definition (a tag folder made by
    /// `mkdir` has no view in the index until an item joins it).
    func editableView(_ id: UInt64) -> (folder: ViewFolder, view: ViewDefinition)? {
        guard let folder = viewFolder(id), !folder.isGroup else { return nil }
        if let definition = catalog.withIndex({ $0.view(at: folder.path)?.definition }) { return (folder, definition) }
        if folder.path.count == 2, folder.path[0] == ViewDefinition.tagFolder { return (folder, .tag(folder: folder.path[1])) }
        return nil
    }

    /// The record of the entry `name` in `folder`'s current listing: the
    /// entry a lookup of it finds, a name just given by a rename
    /// (`RetitledNames`) included, so that `rm` and `mv` of a name `ls -l`
    /// shows never say ENOENT.
    func entryRecord(named name: UnsafePointer<CChar>, in folder: ViewFolder) -> ItemRecord? {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name))
        let listing = folder.listing
        // The nearest of a shared title, as `rm -r` needs (see the lookup); `mv` and `rm` are journaled.
        if let index = listing.index(ofEntryMeaning: bytes, mayBeShared: { _ in false }) { return listing.records[index] }
        let given = retitledNames.item(named: bytes, in: folder.id) ?? linkedNames.item(named: bytes, in: folder.id)
        return given.flatMap(listing.index(ofItem:)).map { listing.records[$0] }
    }

    /// The tag to add for `tag/<folder>/`: one that an item already carries
    /// (the folder name is it sanitized), else the folder name itself.
    func tag(forFolder folder: String) -> String {
        catalog.withIndex { index in
            index.view(at: [ViewDefinition.tagFolder, folder])?.records.first?.item.tags.first { EntryNaming.tagFolderName($0) == folder }
        } ?? folder
    }

    /// Makes the edits, checks beforehand that they do what `expected` says
    /// of the item, and waits until every view shows them; 0 or the errno.
    func edit(_ item: ItemName, _ edits: [FieldEdit], what: String, expected: (Item) -> Bool) -> Int32 {
        journaledEdit(item, edits, what: what, expected: expected).code
    }

    /// `edit`, with the journal's entry for it (nil when nothing was journaled).
    func journaledEdit(_ item: ItemName, _ edits: [FieldEdit], what: String, expected: (Item) -> Bool) -> (code: Int32, entry: EditJournal.Entry?) {
        guard let current = catalog.withIndex({ $0.records[item]?.item }) else {
            catalog.logger.notice("\(what): no item \(item)")
            return (ENOENT, nil)
        }
        guard expected(edits.reduce(current) { $1.applied(to: $0) }) else {
            catalog.logger.notice("\(what): \(edits.map(\.description).joined(separator: ", ")) would not do it (the view's terms contradict each other)")
            return (EPERM, nil)
        }
        let entry: EditJournal.Entry?
        do {
            entry = try editor.apply(edits, to: item)
        } catch {
            catalog.logger.error("\(what): \(error)")
            return (error.errno, nil)
        }
        letGoOfFiles(in: [item])
        catalog.applyNow([item])
        return (0, entry)
    }

    /// Takes back the item's `rm` from `folder` of the last few seconds
    /// (`RecentRemovals`); false when there is none or it cannot be (the
    /// item changed since: the link then joins as any link does).
    private func takeBackRecentRemoval(of item: ItemName, in folder: ViewFolder, what: String) -> Bool {
        takeBack(recentRemovals, of: item, in: folder, what: what)
    }

    /// Takes back the item's removal from `folder` that `removals` kept; false when there is none or it cannot be.
    func takeBack(_ removals: RecentRemovals, of item: ItemName, in folder: ViewFolder, what: String) -> Bool {
        guard let removal = removals.take(item: item, in: folder.id) else { return false }
        do {
            try editor.undo(removal)
        } catch {
            catalog.logger.notice("\(what): the rm before it is not taken back (\(error.message)); the link joins instead")
            return false
        }
        letGoOfFiles(in: [item])
        catalog.applyNow([item])
        return true
    }

    /// The items' files under bundles/ were rewritten (replaced by rename):
    /// what the kernel opens there next is found again by name, not the old
    /// file its node still holds (a write after `ln -s` went into it). No
    /// kernel notification here: this runs in a request handler.
    func letGoOfFiles(in items: some Sequence<ItemName>) {
        for item in items {
            for node in passthrough.nodes(inItem: item) { passthrough.letGo(node) }
        }
    }

    /// After an edit's answer: a name the kernel keeps for the request
    /// (the one `mv` gave) that means nothing here, to be forgotten.
    func forgetNamesAfterReply(_ names: [(parent: UInt64, name: [UInt8])] = []) {
        for (parent, name) in names { nameInvalidations.add(parent: parent, name: name) }
    }

    /// After an edit that made the kernel hold `typed` in `folder` for the
    /// entry of `item` (`ln -s X tag/t/mine`, `mv` or a rename typed over
    /// the whole name): unless that is the entry's real name, the event
    /// replay unlinks it through the mount, so watchers hear it go as they
    /// hear the real one come (found from outside: the typed name stayed in
    /// pcmanfm and Nautilus windows until they reloaded; the kernel raises no
    /// event for a name `fuse_lowlevel_notify_delete` drops). The edit has
    /// published the new listing before it returns, so the real name is
    /// known here. `heldAs`: the node the kernel holds the name for (an
    /// entry moved in from another view keeps that view's node), nil when
    /// unknown; the real name held for another node is dropped.
    /// `record`: a record of the item (any of its states: the serial is what counts).
    /// The real name is told from its rank prefix (O(1)), not by a walk of the listing.
    func announceTypedNameGone(_ typed: [UInt8], for record: ItemRecord, in folder: ViewFolder, heldAs: UInt64?) {
        let listing = folder.listing
        let entry = NodeID.entry(folder: folder.serial, item: record.serial)
        if let index = typed.withUnsafeBufferPointer({ listing.index(ofEntryNamed: $0) }),
           listing.records[index].name == record.name, listing.name(at: index) == typed {
            // The real name: kept, unless the kernel holds it for another node.
            if heldAs != entry { forgetNamesAfterReply([(folder.id, typed)]) }
            return
        }
        guard let replayer = eventReplayer, heldAs != nil else { return forgetNamesAfterReply([(folder.id, typed)]) }
        replayer.add([.entries(folder: folder, old: nil, new: nil, script: .removing(typed, record: record))])
    }

    // MARK: ln -s, rm, mv of entries

    func viewSymlink(_ request: fuse_req_t?, target: UnsafePointer<CChar>, parent: UInt64, name: UnsafePointer<CChar>) {
        let shown = "ln -s '\(String(cString: target))' '\(String(cString: name))'"
        guard let (folder, view) = editableView(parent) else { return refuse(request, EPERM, "\(shown): not in a view folder") }
        let targetBytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(target).assumingMemoryBound(to: UInt8.self), count: strlen(target)))
        guard let item = item(forTarget: targetBytes, from: folder) else {
            return refuse(request, ENOENT, "\(shown) in \(folder.path.joined(separator: "/")): the target is not an item "
                + "(../bundles/NAME, MOUNTPOINT/bundles/NAME, BACKING/NAME or a view's entry)")
        }
        switch ViewMembership.join(view.filter, tagNamed: tag(forFolder:)) {
        case .alreadyMember:
            return fail(request, EEXIST)
        case .refused(let why):
            return refuse(request, EPERM, "\(shown): \(folder.path.joined(separator: "/")) cannot be joined by an edit: \(why)")
        case .edits(let edits):
            // An item the view shows already is not changed: in tag/a, an item tagged
            // a/b would gain `a` (found from outside: `ln -sfn` of an entry onto itself).
            let alreadyShown = catalog.withIndex { $0.records[item].map { view.filter.matches($0.item) } } ?? false
            if !alreadyShown, !takeBackRecentRemoval(of: item, in: folder, what: shown) {
                let code = edit(item, edits, what: shown, expected: view.filter.matches)
                guard code == 0 else { return fail(request, code) }
            }
        }
        // The entry, under the name given; not kept (its real name is computed), so the kernel asks again.
        guard let record = catalog.withIndex({ $0.records[item] }) else { return fail(request, ENOENT) }
        let id = NodeID.entry(folder: folder.serial, item: record.serial)
        // A link, as symlink(2) made, even in a folder of desktop entries: the
        // kernel refuses an answer of another type, and replaces the node when
        // it next looks the name up (zero timeouts).
        var entry = entryParameters(id: id, attributes: linkAttributes(id: id, record: record, depth: folder.depth), timeout: 0)
        // The name given leads to the entry for an `mv` that follows (not for a
        // lookup: the entry shows under its own name only): `ln -sf` links a
        // temporary name, then renames it onto the entry's own. Noted before
        // the reply, which lets the `mv` come.
        linkedNames.note(Self.bytes(name), for: item, in: folder.id)
        // The process that made the link looks the name up next (Nautilus's
        // paste): found for it, not for others (found from outside: "Error
        // while copying" after a paste that tagged the note, its rank moved).
        if let context = fuse_req_ctx(request) { openedItems.note(item, openedBy: context.pointee.pid) }
        fuse_reply_entry(request, &entry)
        forgetNamesAfterReply()
        announceTypedNameGone(Self.bytes(name), for: record, in: folder, heldAs: id)
    }

    func viewUnlink(_ request: fuse_req_t?, parent: UInt64, name: UnsafePointer<CChar>) {
        let shown = "rm '\(String(cString: name))'"
        guard let (folder, view) = editableView(parent) else { return refuse(request, EPERM, "\(shown): not an entry of a view") }
        guard let record = entryRecord(named: name, in: folder) else { return fail(request, ENOENT) }
        // `rm -r tag/t` removes the entries, then the folder: emptied by rm, it
        // stays until rmdir. So do the folders of tags nested in it, which
        // leaving `t` takes from the item too, and which `rm -r` read and goes
        // into next (found from outside: "cannot remove 'tag/a/b'", and tag/a left).
        if folder.path.count == 2, folder.path[0] == ViewDefinition.tagFolder {
            let name = folder.path[1]
            let nested = folders.tagFolders.filter { $0.hasPrefix(name + "/") }
            madeTagFolders.withLock { made in
                made.formUnion(Self.withAncestors(name))
                made.formUnion(nested)
            }
        }
        guard case .edits(let edits) = ViewMembership.leave(view.filter) else {
            let why = if case .refused(let why) = ViewMembership.leave(view.filter) { why } else { "" }
            return refuse(request, EPERM, "\(shown): \(folder.path.joined(separator: "/")) cannot be left by an edit: \(why)")
        }
        let (code, entry) = journaledEdit(record.name, edits, what: "\(shown) in \(folder.path.joined(separator: "/"))", expected: { !view.filter.matches($0) })
        if code == 0, let entry { recentRemovals.note(entry, item: record.name, in: folder.id) }
        fail(request, code)
        if code == 0 { forgetNamesAfterReply() }
    }

    /// `mv` of an entry: within its folder it retitles; into another view it
    /// leaves the first (where that can be done) and joins the second, in
    /// one coordinated write. From `bundles/` into a view it joins.
    func viewRename(_ request: fuse_req_t?, parent: UInt64, name: UnsafePointer<CChar>, newParent: UInt64,
                    newName: UnsafePointer<CChar>, flags: UInt32)
    {
        let shown = "mv '\(String(cString: name))' '\(String(cString: newName))'"
        // A top-level tag's folder renamed, or moved into another tag's folder (`mv tag/kernel
        // tag/work/`: the tag becomes `work/kernel`; found from outside: EPERM, while a nested
        // one could move across parents).
        if parent == NodeID.tagRoot, let toParent = tagPrefix(of: newParent),
           newParent == NodeID.tagRoot || folders.folder(path: [ViewDefinition.tagFolder, String(cString: name)]) != nil {
            return tagRename(request, from: String(cString: name), to: toParent + String(cString: newName))
        }
        // A nested tag's folder (`tag/lang/x` to `tag/lang/y`, or to another parent tag): its tag renamed
        // (found from outside: ENOENT, and Nemo's "Untitled Folder" in tag/lang could not be named).
        if let from = nestedTagFolder(parent: parent, name: String(cString: name)), let toParent = tagPrefix(of: newParent) {
            return tagRename(request, from: from, to: toParent + String(cString: newName))
        }
        if parent == NodeID.queryRoot, newParent == NodeID.queryRoot {
            return queryRename(request, from: String(cString: name), to: String(cString: newName), flags: flags)
        }
        guard flags & QFS_RENAME_EXCHANGE == 0 else { return refuse(request, EPERM, "\(shown): views cannot exchange entries") }
        guard let (target, targetView) = editableView(newParent) else {
            return refuse(request, EPERM, "\(shown): only into a view folder (or within one, to retitle)")
        }
        let item: ItemName
        var edits: [FieldEdit] = []
        // The node the kernel moves under the new name: the source view's entry (unknown from bundles/).
        var moved: (node: UInt64, record: ItemRecord)?
        if parent == NodeID.bundles || passthrough.node(parent)?.folder != nil, let node = passthrough.node(parent),
           let named = self.item(named: name, in: node) {
            item = named
        } else {
            guard let (source, sourceView) = editableView(parent) else { return refuse(request, EPERM, "\(shown): not an entry of a view") }
            guard let record = entryRecord(named: name, in: source) else { return fail(request, ENOENT) }
            item = record.name
            moved = (NodeID.entry(folder: source.serial, item: record.serial), record)
            if source.serial == target.serial {
                // conflicts/ names entries after the item they clash with, not their title: no title to set there.
                guard sourceView.entryTitle.source == .title else {
                    return refuse(request, EPERM, "\(shown): conflicts/ names entries after the item they clash with; retitle in another view")
                }
                return retitle(request, record, newName: newName, in: target, what: shown)
            }
            if case .edits(let leaving) = ViewMembership.leave(sourceView.filter) {
                edits += leaving
                // Emptied by a move, a tag folder stays until rmdir, as one emptied by rm does:
                // a file manager showing it had it vanish under its window.
                if source.path.count == 2, source.path[0] == ViewDefinition.tagFolder {
                    madeTagFolders.withLock { $0.formUnion(Self.withAncestors(source.path[1])) }
                }
            }
        }
        switch ViewMembership.join(targetView.filter, tagNamed: tag(forFolder:)) {
        case .edits(let joining): edits += joining
        case .alreadyMember: break
        case .refused(let why): return refuse(request, EPERM, "\(shown): \(target.path.joined(separator: "/")) cannot be joined by an edit: \(why)")
        }
        guard !edits.isEmpty else { return refuse(request, EPERM, "\(shown): nothing to change (the item is in both views already)") }
        let code = edit(item, Self.joiningFirst(edits), what: shown, expected: targetView.filter.matches)
        fail(request, code)
        // The kernel moved its name for the old entry; the entry's real name is computed.
        if code == 0 {
            if let moved { announceTypedNameGone(Self.bytes(newName), for: moved.record, in: target, heldAs: moved.node) }
            else { forgetNamesAfterReply([(newParent, Self.bytes(newName))]) }
            if let moved, let (source, _) = editableView(parent) { announceEntryStayed(moved.record, in: source, reportedGone: Self.bytes(name)) }
        }
    }

    /// After a move out of `folder` that left the item in it (`mv tag/a/X
    /// tag/a/b/`: what is in `a/b` is in `a`): the kernel told watchers the
    /// name moved away, and its entry is there still. When its name did not
    /// change, nothing in the listing's change says so, and file managers
    /// dropped the entry until reloaded (found from outside): the replay
    /// makes it again through the mount, so they hear it come back.
    private func announceEntryStayed(_ record: ItemRecord, in folder: ViewFolder, reportedGone name: [UInt8]) {
        let listing = folder.listing
        guard let replayer = eventReplayer,
              let index = name.withUnsafeBufferPointer({ listing.index(ofEntryNamed: $0) }),
              listing.records[index].serial == record.serial, listing.name(at: index) == name else { return }
        replayer.add([.entries(folder: folder, old: nil, new: nil, script: .creating(name, record: listing.records[index]))])
    }

    /// A move's edits with the tags it adds before those it removes, where
    /// no removal would take the new tag too (`mv tag/a/X tag/a/b/` must
    /// leave `a` first): a note's one-item block list emptied first came
    /// back as a flow list, `tags: [beta]` (found from outside).
    static func joiningFirst(_ edits: [FieldEdit]) -> [FieldEdit] {
        let added = edits.compactMap { if case .addTag(let tag) = $0 { tag } else { nil } }
        let removed = edits.compactMap { edit -> String? in
            switch edit {
            case .removeTag(let tag), .removeTagFolder(let tag): tag
            default: nil
            }
        }
        guard !added.isEmpty, !removed.isEmpty, !added.contains(where: { tag in
            removed.contains { tag == $0 || tag.hasPrefix($0 + "/") || EntryNaming.tagFolderName(tag) == $0 }
        }) else { return edits }
        let isAddition = { (edit: FieldEdit) in if case .addTag = edit { true } else { false } }
        return edits.filter(isAddition) + edits.filter { !isAddition($0) }
    }

    /// A rename within a view folder (`mv`, a file manager's F2) sets the
    /// title: the new name less a leading rank and the entry's `.ext` (the
    /// item's, or `.desktop`).
    private func retitle(_ request: fuse_req_t?, _ record: ItemRecord, newName: UnsafePointer<CChar>, in folder: ViewFolder, what: String) {
        var title = Substring(String(decoding: Self.bytes(newName), as: UTF8.self))
        // A leading number is the rank only when it could be one here: the
        // folder's width and at most its count. "2024 Plans" in a folder of
        // 48 keeps its year (found from outside: the title became "Plans").
        let listing = folder.listing
        if let space = title.firstIndex(of: " "), !title[..<space].isEmpty, title[..<space].allSatisfy({ ("0"..."9").contains($0) }),
           title[..<space].count == listing.width, let rank = Int(title[..<space]), rank <= max(listing.count, 1) {
            title = title[title.index(after: space)...]
        }
        let ext = record.entryTitle(folder.listing.naming).ext
        let suffix = ext.isEmpty ? "" : "." + ext
        if !suffix.isEmpty, title.hasSuffix(suffix) { title = title.dropLast(suffix.count) }
        guard !title.isEmpty else { return refuse(request, EINVAL, "\(what): the new name leaves no title") }
        let code = edit(record.name, [.setTitle(String(title))], what: what, expected: { _ in true })
        if code == 0 { retitledNames.note(Self.bytes(newName), for: record.name, in: folder.id) }
        fail(request, code)
        if code == 0 { announceTypedNameGone(Self.bytes(newName), for: record, in: folder, heldAs: NodeID.entry(folder: folder.serial, item: record.serial)) }
    }

    static func bytes(_ name: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
    }

    /// The item a symlink target leads to: `../bundles/X` (as deep as the
    /// folder is), `MOUNTPOINT/bundles/X`, `BACKING/X`, or an entry of a view
    /// (relative or absolute).
    func item(forTarget target: [UInt8], from folder: ViewFolder) -> ItemName? {
        var parts = target.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
        var resolved: [[UInt8]]
        if target.first == UInt8(ascii: "/") {
            let mount = Array(mountPoint.utf8).split(separator: UInt8(ascii: "/")).map(Array.init)
            let backing = Array(catalog.backing.path.utf8).split(separator: UInt8(ascii: "/")).map(Array.init)
            if parts.starts(with: mount), !mount.isEmpty {
                parts.removeFirst(mount.count)
                resolved = []
            } else if parts.starts(with: backing), parts.count > backing.count {
                return item(inPath: Array(parts.dropFirst(backing.count)))
            } else {
                return nil
            }
        } else {
            resolved = QueryFilesystem.mountPath(of: folder.path).map { Array($0.utf8) }
        }
        for part in parts {
            if part == [UInt8(ascii: ".")] { continue }
            if part == [UInt8(ascii: "."), UInt8(ascii: ".")] {
                guard !resolved.isEmpty else { return nil }
                resolved.removeLast()
            } else {
                resolved.append(part)
            }
        }
        if resolved.count >= 2, resolved[0] == Array(Self.bundlesName.utf8) { return item(inPath: Array(resolved.dropFirst())) }
        // An entry's own link copied as it is into a folder at another depth
        // (a file manager's copy and paste, `cp -a`: `../bundles/X` from
        // by-name/ pasted into tag/t/): the bundle it named.
        if target.first != UInt8(ascii: "/"), let up = parts.firstIndex(where: { $0 != [0x2E, 0x2E] }), up > 0,
           parts.count > up + 1, parts[up] == Array(Self.bundlesName.utf8), let named = item(inPath: Array(parts[(up + 1)...])) {
            return named
        }
        guard resolved.count >= 2, let view = folders.folder(path: QueryFilesystem.folderPath(ofMountPath: resolved.dropLast().map { String(decoding: $0, as: UTF8.self) })),
              !view.isGroup else { return nil }
        let listing = view.listing
        return resolved.last!.withUnsafeBufferPointer { listing.index(ofEntryNamed: $0) }.map { listing.records[$0].name }
    }

    /// The item a path inside BACKING lies in: the shortest leading part of
    /// it that the catalog knows (`X` of `X/payload.plist`; in a recursive
    /// collection, `notes/idea.md` of `notes/idea.md`). None for a path with
    /// a `..` anywhere: `X/../../elsewhere` leads out of X, and was taken
    /// for X (found from outside: such an `ln -s` tagged X).
    private func item(inPath components: [[UInt8]]) -> ItemName? {
        guard !components.contains([UInt8(ascii: "."), UInt8(ascii: ".")]) else { return nil }
        return catalog.withIndex { index in
            var prefix: [UInt8] = []
            for component in components {
                if !prefix.isEmpty { prefix.append(UInt8(ascii: "/")) }
                prefix += component
                if index.records[ItemName(prefix)] != nil { return ItemName(prefix) }
            }
            return nil
        }
    }

    // MARK: Tag folders

    /// `mkdir tag/<name>`: an empty tag folder, there until `rmdir` or unmount.
    func tagMkdir(_ request: fuse_req_t?, name: String) {
        guard EntryNaming.tagFolderName(name) == name else {
            return refuse(request, EINVAL, "mkdir tag/\(name): not a tag folder name (it would read as '\(EntryNaming.tagFolderName(name) ?? "")')")
        }
        guard folders.folder(path: [ViewDefinition.tagFolder, name]) == nil else { return fail(request, EEXIST) }
        madeTagFolders.withLock { _ = $0.insert(name) }
        tagRootClock.tick()
        let folder = tagRootLock.withLock { installListing(of: [ViewDefinition.tagFolder, name], records: [], at: .now).folder }
        replyFolderEntry(request, folder)
    }

    /// A nested tag's folder name and those of the folders it is in
    /// (`a/b/c`: `a`, `a/b`, `a/b/c`): a folder kept after it was emptied
    /// keeps the folders above it too (found from outside: `rm` emptied
    /// tag/x/y/, and tag/x went, taking tag/x/y with it).
    static func withAncestors(_ name: String) -> [String] {
        let parts = name.split(separator: "/")
        return parts.indices.map { parts[...$0].joined(separator: "/") }
    }

    /// `rmdir tag/<name>`: only an empty one (ENOTEMPTY while items carry the tag).
    func tagRmdir(_ request: fuse_req_t?, name: String) {
        guard let folder = folders.folder(path: [ViewDefinition.tagFolder, name]) else { return fail(request, ENOENT) }
        guard folder.listing.count == 0, !folders.tagFolders.contains(where: { $0.hasPrefix(name + "/") }) else { return fail(request, ENOTEMPTY) }
        madeTagFolders.withLock { _ = $0.remove(name) }
        tagRootClock.tick()
        tagRootLock.withLock { folders.removeFolder(path: [ViewDefinition.tagFolder, name]) }
        fail(request, 0)
    }

    /// `mv tag/<a> tag/<b>`: the tag renamed on every item that carries it.
    /// The tag of folder `name` in the tag folder `parent`, if that is a nested tag's folder.
    private func nestedTagFolder(parent: UInt64, name: String) -> String? {
        guard let tag = viewFolder(parent)?.tagFolderName else { return nil }
        let nested = tag + "/" + name
        return folders.folder(path: [ViewDefinition.tagFolder, nested]) != nil ? nested : nil
    }

    /// What a tag folder's name is put after in folder `id`: nothing in `tag/`, `TAG/` in a tag's folder.
    private func tagPrefix(of id: UInt64) -> String? {
        if id == NodeID.tagRoot { return "" }
        return viewFolder(id)?.tagFolderName.map { $0 + "/" }
    }

    private func tagRename(_ request: fuse_req_t?, from: String, to: String) {
        let what = "mv tag/\(from) tag/\(to)"
        guard let source = folders.folder(path: [ViewDefinition.tagFolder, from]) else { return fail(request, ENOENT) }
        guard EntryNaming.tagFolderName(to) == to else { return refuse(request, EINVAL, "\(what): not a tag folder name") }
        if from == to { return fail(request, 0) }
        if let existing = folders.folder(path: [ViewDefinition.tagFolder, to]), existing.listing.count > 0 { return fail(request, ENOTEMPTY) }
        let items = source.listing.records.map(\.name)
        // The kernel will move the folder's name to the folder's node: the
        // node is the renamed folder from now on.
        madeTagFolders.withLock { made in
            if made.remove(from) != nil || items.isEmpty { made.insert(to) }
        }
        tagRootClock.tick()
        tagRootLock.withLock { folders.moveFolder(from: [ViewDefinition.tagFolder, from], to: [ViewDefinition.tagFolder, to]) }
        // All or nothing: an item that cannot take the new name (its lock
        // held, a tag list no edit can change, an inline `#tag`) has the
        // ones renamed before it renamed back, and the folder goes back to
        // its name (found from outside: some items renamed, a ghost folder).
        var renamed: [EditJournal.Entry] = []
        var failure: Int32 = 0
        // One action: a single `queryfs undo` takes the whole rename back.
        let action = EditJournal.newAction()
        for item in items {
            do {
                if let entry = try editor.apply([.renameTagFolder(from, to: to)], to: item, action: action) { renamed.append(entry) }
            } catch {
                catalog.logger.error("\(what): \(error); the items renamed before it are renamed back")
                failure = error.errno
                break
            }
        }
        if failure != 0 {
            // Taken back as undos of their own entries, newest first: journaled
            // as undone, so `queryfs undo` never takes this no-op for the last
            // action (found from outside: it did, and could make part of the
            // failed rename again). One that cannot be taken back now (its lock
            // held) stays journaled and not undone: `queryfs undo` takes it back.
            for entry in renamed.reversed() {
                do {
                    try editor.undo(entry)
                } catch {
                    catalog.logger.error("\(what): renaming \(entry.item) back: \(error) (queryfs undo takes the rename back)")
                }
            }
            tagRootClock.tick()
            tagRootLock.withLock { folders.moveFolder(from: [ViewDefinition.tagFolder, to], to: [ViewDefinition.tagFolder, from]) }
            madeTagFolders.withLock { made in
                if made.remove(to) != nil { made.insert(from) }
            }
        }
        letGoOfFiles(in: items)
        catalog.applyNow(Set(items))
        fail(request, failure)
        forgetNamesAfterReply()
    }
}
