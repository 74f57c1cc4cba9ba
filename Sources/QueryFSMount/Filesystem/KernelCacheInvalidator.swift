#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// Tells the kernel what a burst changed (`KernelDelta`, made by
/// `ViewTreeUpdater`), so the kernel can keep day-long timeouts and still
/// never show a stale listing, name, target or attribute; and hands the
/// event replay its steps. Runs on the watcher thread, outside every lock
/// request handlers take (a notification waits for the kernel, which may
/// wait for a handler).
///
/// Per changed view: the folder's readdir cache and mtime (inval_inode), the
/// dentries of entry names that no longer exist or now mean another item
/// (inval_entry), and the attributes of entries whose item changed
/// (inval_inode). When more than `sweepThreshold` entries shifted (an
/// item moved across a large view renames every entry in between), only
/// those whose name now means another item are dropped, found off the
/// watcher thread (see `invalidateRenamedEntries`).
/// Per touched item: every passthrough node the kernel holds inside it.
struct KernelCacheInvalidator {
    let filesystem: QueryFilesystem
    /// Past this many shifted entries, names are compared off the watcher thread.
    var sweepThreshold = 256

    /// The tree first, then the kernel and the replay.
    func apply(_ update: LiveCatalog.Update) {
        invalidate(ViewTreeUpdater(filesystem: filesystem).apply(update))
    }

    func invalidate(_ delta: KernelDelta) {
        var events: [EventReplayer.Step] = []
        defer { filesystem.eventReplayer?.add(events) }
        let replaying = filesystem.eventReplayer != nil
        let bound = filesystem.eventReplayer?.bound ?? 0
        for entry in delta.forgottenEntries { invalidateEntry(parent: entry.parent, name: entry.name) }
        for inode in delta.forgottenInodes { invalidateInode(inode) }
        // A reload's view folders: the old one removed through the mount (its
        // watchers hear it go: IN_DELETE_SELF, IN_IGNORED), the new one made
        // (its parent's hear it come). Without these a watcher of a changed or
        // removed view heard nothing, and kept the old listing for good.
        if replaying {
            for (path, old, new) in delta.reconfiguredFolders {
                guard let parent = filesystem.parentID(ofFolderAt: path), let name = path.last else { continue }
                let parentPath = Array(path.dropLast())
                if let old { events.append(.folder(parent: parent, parentPath: parentPath, name: name, entry: folderEntry(old), made: false)) }
                if let new { events.append(.folder(parent: parent, parentPath: parentPath, name: name, entry: folderEntry(new), made: true)) }
            }
        }
        if delta.tagRootChanged { invalidateInode(NodeID.tagRoot) }
        for folderChange in delta.folders {
            switch folderChange {
            case .emptied(let folder, let old, let change):
                invalidateListing(of: folder)
                invalidateRenamedEntries(of: folder, old: old, new: folder.listing, change: change)
                if replaying { events.append(replayStep(folder: folder, old: old, change: change, bound: bound)) }
            case .removed(let folder, let change):
                let place = QueryFilesystem.mountPath(of: change.path)
                let parent = filesystem.parentID(ofFolderAt: change.path)
                if replaying, let parent {
                    events.append(.folder(parent: parent, parentPath: Array(place.dropLast()), name: place.last!,
                                          entry: folderEntry(folder), made: false))
                }
                // A nested tag's folder: its name in its parent tag's folder.
                invalidateEntry(parent: parent ?? NodeID.tagRoot, name: Array(place.last!.utf8))
                invalidateInode(parent ?? NodeID.tagRoot)
            case .replaced(let folder, nil, let change):
                invalidateListing(of: folder)
                let place = QueryFilesystem.mountPath(of: change.path)
                let parent = filesystem.parentID(ofFolderAt: change.path)
                if replaying, let parent {
                    events.append(.folder(parent: parent, parentPath: Array(place.dropLast()), name: place.last!,
                                          entry: folderEntry(folder), made: true))
                }
                if let parent, parent != NodeID.tagRoot, folder.tagFolderName != nil { invalidateInode(parent) }
            case .replaced(let folder, let old?, let change):
                invalidateListing(of: folder)
                invalidateRenamedEntries(of: folder, old: old, new: folder.listing, change: change)
                forgetGoneItems(delta.goneItems, of: folder, old: old, change: change)
                if replaying { events.append(replayStep(folder: folder, old: old, change: change, bound: bound)) }
                // Attributes only: an entry node's target never changes (an
                // item's name is what it is; a renamed bundle is a new item with
                // a new serial), so the kernel may keep the target it read.
                for item in delta.changedItems {
                    notifications?.invalidateAttributes(NodeID.entry(folder: folder.serial, item: item))
                }
            }
        }
        var touchedPaths: [[UInt8]] = []
        var touchedFolders = Set<UInt64>()
        for item in delta.touchedItems {
            let nodes = filesystem.passthrough.nodes(inItem: item)
            // The node of the item itself in bundles/ (or in its folder), if the kernel holds one.
            let itemNode = nodes.first { $0.isItemRoot }
            let changedFiles = invalidatePassthrough(item: item, nodes: nodes, itemNode: itemNode?.id, replaying: replaying)
            if item.isNested {
                // Its folder's listing and the name in it (gone, or new where the kernel cached its absence).
                // The replay makes no events for it: it reaches bundles/ only.
                if let folder = filesystem.passthrough.folderNode(of: item) {
                    touchedFolders.insert(folder)
                    invalidateEntry(parent: folder, name: Array(item.bytes[item.lastComponentStart...]))
                }
                continue
            }
            guard replaying else { continue }
            switch bundleEvent(item, held: itemNode, joined: delta.joinedItems.contains(item), gone: delta.goneItems.contains(item)) {
            case .made(let type): events.append(.bundleMade(item, type: type))
            case .gone(let node): events.append(.bundleGone(item, entry: goneEntry(node)))
            case .changed: touchedPaths += [item.bytes] + changedFiles
            case nil: break
            }
        }
        if !touchedPaths.isEmpty { events.append(.touched(touchedPaths)) }
        // bundles/'s listing, which the kernel keeps (no opendir): an item may have come or gone.
        if !delta.touchedItems.isEmpty { invalidateInode(NodeID.bundles) }
        for folder in touchedFolders { invalidateInode(folder) }
    }

    /// The event replay's step for a changed view folder. The names its
    /// operations make the kernel hold are noted as shown by the folder's
    /// listing, as a lookup's are: the replay runs later, on its own thread,
    /// and a sweep must not skip over them (`ViewListing.shown`).
    private func replayStep(folder: ViewFolder, old: ViewListing, change: ViewChange, bound: Int) -> EventReplayer.Step {
        let new = folder.listing
        let script = EventScript(old: old, new: new, change: change, bound: bound)
        for name in script.namesGiven {
            if let index = name.withUnsafeBufferPointer({ new.index(ofEntryNamed: $0) }) { new.noteShown(index..<index + 1) }
        }
        return .entries(folder: folder, old: old, new: new, script: script)
    }

    /// Entries whose item left the catalog: their nodes answer ESTALE from
    /// now on, and the kernel drops their attributes. A name of theirs the
    /// kernel still holds (one from an older rank, left cached as shifted
    /// names are) is then looked up again at its next use, and means what it
    /// means now: nothing, or the item that holds that rank and title now
    /// (a bundle renamed in BACKING is a new item under the same title).
    /// It stood for the deleted item's last state, until the kernel evicted
    /// it: a script waiting for an entry to go waited forever.
    private func forgetGoneItems(_ gone: Set<ItemName>, of folder: ViewFolder, old: ViewListing, change: ViewChange) {
        guard !gone.isEmpty else { return }
        for index in change.oldNames.keys where index < old.count {
            let record = old.records[index]
            guard gone.contains(record.name) else { continue }
            filesystem.folders.forget(serial: record.serial)
            invalidateInode(NodeID.entry(folder: folder.serial, item: record.serial))
        }
    }

    private func folderEntry(_ folder: ViewFolder) -> fuse_entry_param {
        filesystem.entryParameters(id: folder.id, attributes: filesystem.directoryAttributes(id: folder.id, changed: folder.changed),
                                   timeout: filesystem.policy.viewTimeout)
    }

    /// `made`: with the item's file type (a bundle's folder, a note's file).
    private enum BundleEvent { case made(type: mode_t), gone(node: PassthroughNode), changed }

    /// The entry a gone bundle had: its descriptor, if still open, reads its
    /// last status; else the type it was looked up with serves.
    private func goneEntry(_ node: PassthroughNode) -> fuse_entry_param {
        var status = stat()
        status.st_mode = node.type | 0o755
        _ = try? filesystem.passthrough.withDescriptor(node) { fstatat($0, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) }
        status.st_ino = ino_t(node.id)
        return filesystem.entryParameters(id: node.id, attributes: status, timeout: 0)
    }

    /// What a watcher of bundles/ is to hear about `item`: judged by
    /// whether it joined or left the catalog with this burst and whether
    /// BACKING has it now — not by whether the kernel holds a node for it:
    /// a node is let go when its file is replaced by a rename, and during a
    /// burst the kernel had forgotten it when the file went (no DELETE, a
    /// ghost in every watcher) or when it changed again (a CREATE of a name
    /// watchers had). A removal needs the node the kernel had: the one it
    /// holds, or the one it forgot lately (`PassthroughTable.takeForgottenItemRoot`).
    private func bundleEvent(_ item: ItemName, held: PassthroughNode?, joined: Bool, gone: Bool) -> BundleEvent? {
        var status = stat()
        let exists = item.withCString { fstatat(filesystem.passthrough.rootFD, $0, &status, AT_SYMLINK_NOFOLLOW) } == 0
        // Joined: made, even if the kernel holds a node (a listing since found the name; an inotify watcher still needs the CREATE).
        if exists { return joined ? .made(type: status.st_mode & S_IFMT) : .changed }
        guard gone || held != nil, let node = held ?? filesystem.passthrough.takeForgottenItemRoot(named: item.bytes) else { return nil }
        return .gone(node: node)
    }

    /// Entry names of the old listing that are gone or now mean another item.
    ///
    /// A name that only lost its rank (`0005 A.x` is now `0006 A.x`) is left
    /// to the kernel when many shift: it still leads to the same item's entry
    /// node, as the mount's own lookup of a stale name does, while dropping
    /// the folder's dentry instead (as this did up to stop 22) made the kernel
    /// prune every cached child at once — a million after an `ls` of a
    /// million-entry view, the next lookup in that folder waiting for it
    /// (p99 of a change 7.4 s at 1,000,000 items, 28 ms at 1,000).
    private func invalidateRenamedEntries(of folder: ViewFolder, old: ViewListing, new: ViewListing, change: ViewChange) {
        var stale: [[UInt8]] = []
        // The entries that left (removed, retitled, moved): the names a watcher polls, first.
        stale.append(contentsOf: change.oldNames.values)
        // An entry updated in place keeps its rank: only its own name may change (a new title).
        for index in change.diff.updates where index < old.count {
            let newIndex = change.updatedTo[index] ?? index
            if newIndex >= new.count || new.records[newIndex].name != old.records[index].name || new.name(at: newIndex) != old.name(at: index) {
                stale.append(old.name(at: index))
            }
        }
        // Ranks shift only between the places entries left and came.
        let range = change.shiftedRange.clamped(to: 0..<old.count)
        if range.count > sweepThreshold {
            // Compared off this thread, a chunk at a time (`NameSweeps`).
            for name in stale { invalidateEntry(parent: folder.id, name: name) }
            filesystem.nameSweeps.sweep(folder: folder.id, old: old, new: new, range: range)
            return
        }
        for index in range {
            let name = old.name(at: index)
            // Same name for another item (a bundle renamed in BACKING keeps
            // its title, so its entry name, but gets a new node id) is stale too.
            if index >= new.count || new.records[index].name != old.records[index].name || new.name(at: index) != name {
                stale.append(name)
            }
        }
        for name in stale { invalidateEntry(parent: folder.id, name: name) }
    }

    /// Drops the kernel's view of every node inside `item` under bundles/:
    /// attributes and cached data, and dentries whose name now means another file.
    /// A node whose file is unchanged since its last invalidation is left
    /// alone: a bundle being filled with thousands of files would otherwise
    /// cost thousands of invalidations per burst.
    /// Returns the paths (under bundles/) of the item's files, directly in
    /// it, that changed: where the event replay touches them.
    private func invalidatePassthrough(item: ItemName, nodes: [PassthroughNode], itemNode: UInt64?, replaying: Bool) -> [[UInt8]] {
        var changed: [[UInt8]] = []
        let now = Timestamp.now
        for node in nodes {
            var status = stat()
            let found = filesystem.passthrough.node(node.parent).flatMap { parent in
                try? filesystem.passthrough.withDescriptor(parent) { parentFD in
                    node.name.withCString { fstatat(parentFD, $0, &status, AT_SYMLINK_NOFOLLOW) } == 0
                }
            } ?? false
            let same = found && UInt64(status.st_ino) == node.inode
            if !same {
                node.invalidatedState = nil
                // Replaced under its name (a new inode): its descriptor is the old file's, let go so that
                // a use of the old node answers ESTALE. A gone one keeps it: the replay reads its last status there.
                if found { filesystem.passthrough.letGo(node) }
                invalidateInode(node.id)
                // A gone bundle's own name: the event replay reports its deletion. One replaced
                // under the same name is not gone (the replay says it changed): its name is dropped here.
                if !(replaying && node.parent == NodeID.bundles && !found) { invalidateEntry(parent: node.parent, name: node.name) }
                if node.parent == itemNode { changed.append(item.bytes + [UInt8(ascii: "/")] + node.name) }
                continue
            }
            let stamp = FileChangeStamp(status)
            if let previous = node.invalidatedState, previous.settled, previous.stamp == stamp { continue }
            if node.parent == itemNode { changed.append(item.bytes + [UInt8(ascii: "/")] + node.name) }
            invalidateInode(node.id)
            node.invalidatedState = (stamp, stamp.isSettled(takenAt: now))
        }
        // The item itself in bundles/, if the kernel holds a dentry for a name now gone.
        var status = stat()
        if !replaying, !item.isNested, item.withCString({ fstatat(filesystem.passthrough.rootFD, $0, &status, AT_SYMLINK_NOFOLLOW) }) != 0 {
            invalidateEntry(parent: NodeID.bundles, name: item.bytes)
        }
        return changed
    }

    private var notifications: KernelNotifications? {
        filesystem.session.map { KernelNotifications(session: $0, logger: filesystem.catalog.logger) }
    }

    private func invalidateInode(_ id: UInt64) {
        // The root, tag/ and query/ have no ViewFolder: their mtime moves here.
        switch id {
        case NodeID.root: filesystem.rootClock.tick()
        case NodeID.tagRoot: filesystem.tagRootClock.tick()
        case NodeID.queryRoot: filesystem.queryRootClock.tick()
        default: break
        }
        notifications?.invalidateInode(id)
    }

    /// A view folder whose listing changed. Its mtime moved with the listing
    /// (`ViewFolder.replace` advances it at every change), so where the
    /// kernel checks a folder's mtime before it serves a kept listing from
    /// the start (FUSE_CAP_AUTO_INVAL_DATA), dropping the attributes is
    /// enough: the next listing from the start asks for them, sees the new
    /// mtime and reads the folder again.
    /// Dropping the pages instead took the watcher about 5 ms per million
    /// entries, and the next change waited for it: after every view was
    /// listed at 1,000,000 items, the second rewrite took 28–47 ms to show.
    /// (bundles/ keeps the full drop: its mtime is BACKING's, which a
    /// coarse clock may leave unchanged across two changes.)
    private func invalidateListing(of folder: ViewFolder) {
        if filesystem.kernelChecksListingTimes.load(ordering: .relaxed) {
            notifications?.invalidateAttributes(folder.id)
        } else {
            invalidateInode(folder.id)
        }
    }

    /// Names go to their own thread (see `NameInvalidations`).
    private func invalidateEntry(parent: UInt64, name: [UInt8]) {
        filesystem.nameInvalidations.add(parent: parent, name: name)
    }
}
