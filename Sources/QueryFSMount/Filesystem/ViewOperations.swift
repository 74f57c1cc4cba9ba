#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// The read-only side of the mount: the root, `tag/`, view folders and
/// their symlink entries. Nothing here blocks on the index or on I/O.
extension QueryFilesystem {
    /// A child of the root or of `tag/`, or an entry of a view folder.
    func viewLookup(_ request: fuse_req_t?, parent: UInt64, name: UnsafePointer<CChar>) {
        let nameBytes = UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name))
        switch NodeID.kind(of: parent) {
        case .root:
            let text = String(decoding: nameBytes, as: UTF8.self)
            if text == Self.bundlesName {
                var status = stat()
                fstatat(passthrough.rootFD, "", &status, QFS_AT_EMPTY_PATH)
                status.st_ino = ino_t(NodeID.bundles)
                var entry = entryParameters(id: NodeID.bundles, attributes: status, timeout: policy.itemTimeout)
                fuse_reply_entry(request, &entry)
            } else if text == ViewDefinition.tagFolder {
                var entry = entryParameters(id: NodeID.tagRoot, attributes: directoryAttributes(id: NodeID.tagRoot, changed: changed(NodeID.tagRoot)),
                                            timeout: policy.viewTimeout)
                fuse_reply_entry(request, &entry)
            } else if text == ViewDefinition.queryFolder {
                var entry = entryParameters(id: NodeID.queryRoot, attributes: directoryAttributes(id: NodeID.queryRoot, changed: changed(NodeID.queryRoot)),
                                            timeout: policy.viewTimeout)
                fuse_reply_entry(request, &entry)
            } else if text == Self.controlName {
                var entry = entryParameters(id: NodeID.control, attributes: controlAttributes(), timeout: policy.viewTimeout)
                fuse_reply_entry(request, &entry)
            } else if let folder = folders.folder(path: [text]) {
                replyFolderEntry(request, folder)
            } else if Self.isTrashFolderName(text) {
                trashLookup(request, name: name)
            } else {
                // A miss the kernel keeps (a zero inode): see `rootMissTimeout`.
                var entry = fuse_entry_param()
                entry.entry_timeout = policy.rootMissTimeout
                fuse_reply_entry(request, &entry)
            }
        case .tagRoot:
            let text = String(decoding: nameBytes, as: UTF8.self)
            if !text.contains("/"), let folder = folders.folder(path: [ViewDefinition.tagFolder, text]) {
                replyFolderEntry(request, folder)
            } else {
                fuse_reply_err(request, ENOENT)
            }
        case .queryRoot:
            queryFolderLookup(request, name: String(decoding: nameBytes, as: UTF8.self))
        case .control:
            let name = String(decoding: nameBytes, as: UTF8.self)
            guard let id = [Self.statusName: NodeID.status, Self.settledName: NodeID.settled][name] else { return fail(request, ENOENT) }
            // Never cached: each stat and open asks again.
            var entry = entryParameters(id: id, attributes: viewAttributes(of: id)!, timeout: 0)
            fuse_reply_entry(request, &entry)
        case .folder(let serial):
            guard let folder = folders.folder(serial: serial) else { return fail(request, ENOENT) }
            if folder.isGroup {
                let child = folders.folder(path: folder.path + [String(decoding: nameBytes, as: UTF8.self)])
                return child.map { replyFolderEntry(request, $0) } ?? fail(request, ENOENT)
            }
            // A tag's folder holds the folders of the tags nested under it (`tag/a/b/`) beside its entries.
            if let tag = folder.tagFolderName, let child = folders.folder(path: [ViewDefinition.tagFolder, tag + "/" + String(decoding: nameBytes, as: UTF8.self)]) {
                return replyFolderEntry(request, child)
            }
            // As readdir: a reply made from the old listing reaches the kernel
            // before the watcher's invalidation of its name (which waits for
            // lookups in the folder to finish), never after it.
            func reply(_ listing: ViewListing, _ index: Int, exact: Bool) {
                let record = listing.records[index]
                // Only an exact name is kept (a stale one has no timeout).
                if exact { listing.noteShown(index..<index + 1) }
                let id = NodeID.entry(folder: serial, item: record.serial)
                var entry = entryParameters(id: id, attributes: entryAttributes(id: id, record: record, depth: folder.depth,
                                                                                 desktop: listing.naming.desktopFile),
                                            timeout: exact ? policy.viewTimeout : 0)
                fuse_reply_entry(request, &entry)
            }
            var stale: ViewListing?
            folder.replyLock.withLock {
                let listing = folder.listing
                if let index = listing.index(ofEntryNamed: nameBytes) { reply(listing, index, exact: true) } else { stale = listing }
            }
            // A stale name is resolved for what acts on an entry (open, readlink, rm,
            // mv), not for a look at it: a file manager's late stat of a name an event
            // gave, renamed since, found the entry and kept it as a ghost until F5,
            // where on a disk the stat fails and the name is dropped (found from outside,
            // in all six). Nor for making a name there: `cp -P` stats the name
            // (not there), and its symlink must then not find it there either.
            // A name a program just gave by a rename is still found (`RetitledNames`).
            if stale != nil, let context = fuse_req_ctx(request), CallerSyscall.isLookingOrMaking(context.pointee.pid) {
                if let item = retitledNames.item(named: nameBytes, in: folder.id) {
                    let answered: Bool = folder.replyLock.withLock {
                        let listing = folder.listing
                        guard let index = listing.index(ofItem: item) else { return false }
                        reply(listing, index, exact: false)
                        return true
                    }
                    if answered { return }
                }
                // A process that opened the item by that name (an editor about to save it again) still finds it;
                // not for making a name (a second paste asked "Replace?", the name found taken).
                if !CallerSyscall.isMaking(context.pointee.pid), let process = openedItems.openingProcess(of: context.pointee.pid),
                   let listing = stale,
                   case .found(let index) = listing.search(ofEntryMeaning: nameBytes, isCurrent: { folder.listing === listing },
                                                           mayHaveTitle: titlePresence.mayHave, mayBeShared: titlePresence.mayBeShared,
                                                           prefer: { self.openedItems.wasOpened($0.name, by: process) }),
                   openedItems.wasOpened(listing.records[index].name, by: process) {
                    let answered: Bool = folder.replyLock.withLock {
                        guard folder.listing === listing else { return false }
                        reply(listing, index, exact: false)
                        return true
                    }
                    if answered { return }
                }
                return fail(request, ENOENT)
            }
            // A stale name (see `index(ofEntryMeaning:)`) is answered but not
            // kept. Finding it may index a whole listing (100 ms at 100,000
            // entries): done outside the lock, which the watcher needs to
            // publish the next listing — a script polling for a name yet to
            // come held every change back by that much.
            // An open through a stale name of a title entries share means the
            // entry the process opened, or none: a guess sent an editor's save
            // into another note of that title (found from outside). For `rm`
            // and `mv` (journaled, undoable) the nearest entry stays the answer:
            // `rm -r` works through names whose ranks move as it goes.
            let caller = fuse_req_ctx(request)?.pointee.pid ?? 0
            let opening = stale != nil && CallerSyscall.isOpening(caller)
            for _ in 0..<8 {
                guard let listing = stale else { return }
                let search = listing.search(ofEntryMeaning: nameBytes, isCurrent: { folder.listing === listing },
                                            mayHaveTitle: titlePresence.mayHave,
                                            mayBeShared: opening ? titlePresence.mayBeShared : { _ in false },
                                            prefer: { self.openedItems.wasOpened($0.name, byProcessOf: caller) })
                let answered: Bool = folder.replyLock.withLock {
                    guard folder.listing === listing else { stale = folder.listing; return false }
                    switch search {
                    case .found(let index): reply(listing, index, exact: listing.index(ofEntryNamed: nameBytes) == index)
                    case .missing:
                        // The name a program just gave an entry by renaming it (`RetitledNames`), answered as a stale name is.
                        // Or one `ln -s` gave, for what acts on it (the `mv` of `ln -sf`; not a stat: returned above).
                        if let item = retitledNames.item(named: nameBytes, in: folder.id) ?? linkedNames.item(named: nameBytes, in: folder.id),
                           let index = listing.index(ofItem: item) {
                            reply(listing, index, exact: false)
                        } else {
                            fail(request, ENOENT)
                        }
                    case .outdated: return false
                    }
                    return true
                }
                if answered { return }
            }
            fail(request, ENOENT)
        default:
            fuse_reply_err(request, ENOENT)
        }
    }

    func replyFolderEntry(_ request: fuse_req_t?, _ folder: ViewFolder) {
        var entry = entryParameters(id: folder.id, attributes: directoryAttributes(id: folder.id, changed: folder.changed),
                                    timeout: policy.viewTimeout)
        fuse_reply_entry(request, &entry)
    }

    func viewGetattr(_ request: fuse_req_t?, id: UInt64) {
        guard var attributes = viewAttributes(of: id) else { return fail(request, missingNodeError(id)) }
        fuse_reply_attr(request, &attributes, policy.viewTimeout)
    }

    /// A batch of a view-side folder's listing, from the listing as it is
    /// now: a view that changes between two batches is dropped from the
    /// kernel's cache after.
    func viewReaddir(_ request: fuse_req_t?, id: UInt64, size: Int, offset: Int, plus: Bool) {
        withListingLock(of: id) {
            guard let listing = viewDirectoryListing(of: id) else { return fail(request, ENOENT) }
            let folder = viewFolder(id)
            folder?.listed()
            let end = listing.reply(request, size: size, offset: offset, plus: plus, timeout: policy.viewTimeout)
            // Entries 0 and 1 are `.` and `..`; a tag folder's nested folders come after its entries.
            if plus, let folder {
                let entries = folder.listing.count
                folder.noteListed(min(max(offset - 2, 0), entries)..<min(max(end - 2, 0), entries))
            }
        }
        catalog.idleTrim.mark()
    }

    /// mkdir in the views: a saved query in `query/`, a tag in `tag/`, nothing elsewhere.
    func viewMkdir(_ request: fuse_req_t?, parent: UInt64, name: String) {
        switch parent {
        case NodeID.queryRoot: queryMkdir(request, name: name)
        case NodeID.tagRoot: tagMkdir(request, name: name)
        case NodeID.root where Self.isTrashFolderName(name): name.withCString { trashMkdir(request, name: $0) }
        default:
            // In a tag's folder: a tag nested under it (`mkdir tag/a/b` makes `a/b`).
            if let tag = viewFolder(parent)?.tagFolderName, !name.contains("/") { return tagMkdir(request, name: tag + "/" + name) }
            refuseOnView(request, "mkdir")
        }
    }

    /// rmdir in the views: a query folder, a tag folder, nothing elsewhere.
    func viewRmdir(_ request: fuse_req_t?, parent: UInt64, name: String) {
        switch parent {
        case NodeID.queryRoot: queryRmdir(request, name: name)
        case NodeID.tagRoot: tagRmdir(request, name: name)
        default:
            if let tag = viewFolder(parent)?.tagFolderName, !name.contains("/") { return tagRmdir(request, name: tag + "/" + name) }
            refuseOnView(request, "rmdir")
        }
    }

    /// What views answer to changes that are not edits (chmod, a new file, a
    /// hard link…): EPERM, and one log line.
    func refuseOnView(_ request: fuse_req_t?, _ operation: String) {
        refuse(request, EPERM, "\(operation) in a view: not an edit (views change by ln -s, rm and mv; bundles/ is BACKING)")
    }

    /// Why node `id` has no attributes: an entry whose item left the catalog
    /// is stale (ESTALE: the kernel looks the name up again, and finds what
    /// it means now, if anything); anything else is not there.
    func missingNodeError(_ id: UInt64) -> Int32 {
        if case .entry = NodeID.kind(of: id) { return ESTALE }
        return ENOENT
    }

    /// Attributes of a view-side node, or nil if there is no such node.
    func viewAttributes(of id: UInt64) -> stat? {
        switch NodeID.kind(of: id) {
        case .root, .tagRoot, .queryRoot: return directoryAttributes(id: id, changed: changed(id))
        case .control: return controlAttributes()
        case .status: return statusAttributes()
        case .settled: return viewNodeAttributes(id: NodeID.settled, mode: S_IFREG | 0o444, time: mountTime)
        case .folder(let serial):
            guard let folder = folders.folder(serial: serial) else { return nil }
            return directoryAttributes(id: id, changed: folder.changed)
        case .entry(let folderSerial, let itemSerial):
            guard let (folder, record) = entryRecord(folder: folderSerial, item: itemSerial) else { return nil }
            return entryAttributes(id: id, record: record, depth: folder.depth, desktop: folder.listing.naming.desktopFile)
        default: return nil
        }
    }

    /// The view folder (or group) behind node `id`, if it is one.
    func viewFolder(_ id: UInt64) -> ViewFolder? {
        guard case .folder(let serial) = NodeID.kind(of: id) else { return nil }
        return folders.folder(serial: serial)
    }

    /// The folder and latest record behind an entry id.
    func entryRecord(folder folderSerial: UInt32, item itemSerial: UInt32) -> (ViewFolder, ItemRecord)? {
        guard let folder = folders.folder(serial: folderSerial), let record = folders.latestRecord(serial: itemSerial) else { return nil }
        return (folder, record)
    }

    func viewReadlink(_ request: fuse_req_t?, id: UInt64) {
        guard case .entry(let folderSerial, let itemSerial) = NodeID.kind(of: id) else { return fail(request, EINVAL) }
        guard let (folder, record) = entryRecord(folder: folderSerial, item: itemSerial) else { return fail(request, ESTALE) }
        // A desktop entry is a file; a link the kernel still held from before its folder changed form reads as none.
        guard !folder.listing.naming.desktopFile else { return fail(request, EINVAL) }
        // The caller's thread id is read before the reply: replying frees the request
        // (read after it, AddressSanitizer caught a use after free).
        let caller = kernelCachesSymlinks.load(ordering: .relaxed) && linkWarmer != nil ? fuse_req_ctx(request)?.pointee.pid : nil
        linkStyle.target(for: record.name, depth: folder.depth).withCString { _ = fuse_reply_readlink(request, $0) }
        if let caller { linkWarmer?.noteReadlink(from: caller, folder: folder) }
    }

    /// The folders of the tags nested right under a tag folder's tag, by their last name.
    private func nestedTagFolders(in folder: ViewFolder) -> [(name: String, folder: ViewFolder)] {
        guard let tag = folder.tagFolderName else { return [] }
        let prefix = tag + "/"
        return folders.tagFolders.compactMap { name in
            guard name.hasPrefix(prefix), !name.dropFirst(prefix.count).contains("/"),
                  let child = folders.folder(path: [ViewDefinition.tagFolder, name]) else { return nil }
            return (String(name.dropFirst(prefix.count)), child)
        }
    }

    /// A directory of folders (`tag/`, `query/`, a group): `.`, `..` and the
    /// folders at `parent + [name]` that exist.
    private func folderListing(_ dots: [DirectoryListing.Entry], in parent: [String], named names: [String]) -> DirectoryListing {
        var children = dots
        for name in names {
            guard let folder = folders.folder(path: parent + [name]) else { continue }
            children.append(.init(name: Array(name.utf8), attributes: directoryAttributes(id: folder.id, changed: folder.changed),
                                  id: folder.id))
        }
        return DirectoryListing(count: children.count) { children[$0] }
    }

    /// The listing of a view-side directory, fixed at opendir.
    func viewDirectoryListing(of id: UInt64) -> DirectoryListing? {
        let dots: [DirectoryListing.Entry] = [
            .init(name: Array(".".utf8), attributes: directoryAttributes(id: id, changed: changed(id)), id: 0),
            .init(name: Array("..".utf8), attributes: directoryAttributes(id: NodeID.root, changed: changed(NodeID.root)), id: 0),
        ]
        switch NodeID.kind(of: id) {
        case .root:
            var children = dots
            var bundles = stat()
            fstatat(passthrough.rootFD, "", &bundles, QFS_AT_EMPTY_PATH)
            bundles.st_ino = ino_t(NodeID.bundles)
            children.append(.init(name: Array(Self.bundlesName.utf8), attributes: bundles, id: NodeID.bundles))
            for folder in topLevelFolders {
                children.append(.init(name: Array(folder.path[0].utf8),
                                      attributes: directoryAttributes(id: folder.id, changed: folder.changed), id: folder.id))
            }
            children.append(.init(name: Array(ViewDefinition.tagFolder.utf8),
                                  attributes: directoryAttributes(id: NodeID.tagRoot, changed: changed(NodeID.tagRoot)), id: NodeID.tagRoot))
            children.append(.init(name: Array(ViewDefinition.queryFolder.utf8),
                                  attributes: directoryAttributes(id: NodeID.queryRoot, changed: changed(NodeID.queryRoot)), id: NodeID.queryRoot))
            children.append(.init(name: Array(Self.controlName.utf8), attributes: controlAttributes(), id: NodeID.control))
            return DirectoryListing(count: children.count) { children[$0] }
        case .control:
            var children = dots
            children.append(.init(name: Array(Self.statusName.utf8), attributes: statusAttributes(), id: NodeID.status))
            children.append(.init(name: Array(Self.settledName.utf8), attributes: viewAttributes(of: NodeID.settled)!, id: NodeID.settled))
            return DirectoryListing(count: children.count) { children[$0] }
        case .queryRoot:
            return folderListing(dots, in: [ViewDefinition.queryFolder], named: folders.queryFolders)
        case .tagRoot:
            return folderListing(dots, in: [ViewDefinition.tagFolder], named: folders.tagFolders.filter { !$0.contains("/") })
        case .folder(let serial):
            guard let folder = folders.folder(serial: serial) else { return nil }
            if let children = folder.groupChildren { return folderListing(dots, in: folder.path, named: children) }
            let listing = folder.listing
            let folderAttributes = directoryAttributes(id: id, changed: folder.changed)
            let nested = nestedTagFolders(in: folder)
            return DirectoryListing(count: listing.count + 2 + nested.count) { [self] index in
                if index < 2 { return index == 0 ? .init(name: Array(".".utf8), attributes: folderAttributes, id: 0) : dots[1] }
                if index >= listing.count + 2 {
                    let child = nested[index - listing.count - 2]
                    return .init(name: Array(child.name.utf8), attributes: directoryAttributes(id: child.folder.id, changed: child.folder.changed),
                                 id: child.folder.id)
                }
                let record = listing.records[index - 2]
                let entryID = NodeID.entry(folder: serial, item: record.serial)
                return .init(name: listing.name(at: index - 2),
                             attributes: entryAttributes(id: entryID, record: record, depth: folder.depth, desktop: listing.naming.desktopFile),
                             id: entryID)
            }
        default:
            return nil
        }
    }
}
