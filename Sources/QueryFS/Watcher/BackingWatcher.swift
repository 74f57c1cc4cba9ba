#if canImport(Glibc)
import Glibc
#endif

/// Watches a backing directory with inotify: the directory itself and every
/// directory inside every bundle (nested too), so that an in-place edit of a
/// payload is seen. It reports which items may have changed; it does not
/// read them.
final class BackingWatcher {
    /// What the events amount to since the last call.
    struct Observation {
        var dirtyItems = Set<ItemName>()
        /// Events were lost (queue overflow): everything must be rescanned.
        var needsFullRescan = false
        /// The backing directory itself was deleted or moved away.
        var backingGone = false
        /// The configuration file was written, replaced or removed.
        var configurationChanged = false

        init(backingGone: Bool = false) { self.backingGone = backingGone }
    }

    private let inotify: Inotify
    private let rootPath: String
    private var rootDescriptor: Int32 = -1
    /// Which item each watched bundle directory belongs to.
    private var itemOfDescriptor: [Int32: ItemName] = [:]
    private var descriptorsOfItem: [ItemName: Set<Int32>] = [:]
    /// Bundles that could not be watched (watch limit): rescanned periodically.
    private(set) var unwatchedItems = Set<ItemName>()
    private(set) var watchLimitReached = false
    private let log: (String) -> Void
    /// The configuration file: the watch on its folder, and its name there.
    private var configurationDescriptor: Int32 = -1
    private var configurationName: [UInt8] = []

    private static let bundleMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR)
    private static let rootMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR)

    init(rootPath: String, log: @escaping (String) -> Void) throws(SystemError) {
        inotify = try Inotify()
        self.rootPath = rootPath.hasSuffix("/") && rootPath.count > 1 ? String(rootPath.dropLast()) : rootPath
        self.log = log
        rootDescriptor = try inotify.addWatch(path: Array(rootPath.utf8), mask: Self.rootMask)
    }

    var fd: Int32 { inotify.fd }

    /// Reports changes to the file at `path` (`configurationChanged`): its
    /// folder is watched for the name being written (close after writing),
    /// renamed over (how editors save) or removed. BACKING itself already
    /// has such a watch; IN_MASK_ADD keeps its mask.
    func watchConfiguration(path: String) throws(SystemError) {
        let bytes = Array(path.utf8)
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<$0]) } ?? Array(".".utf8)
        configurationName = slash.map { Array(bytes[($0 + 1)...]) } ?? bytes
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR) | UInt32(bitPattern: IN_MASK_ADD)
        configurationDescriptor = try inotify.addWatch(path: folder, mask: mask)
    }

    /// Waits up to `timeout` ms for events (returns early if `wakeFD` becomes readable).
    func inotifyWait(timeout: Int32, wakeFD: Int32) -> [Inotify.Event] {
        inotify.wait(timeout: timeout, wakeFD: wakeFD)
    }

    /// Watches every directory of a bundle (idempotent: existing watches are
    /// kept, new subdirectories are added). Plain files need no watch of
    /// their own: the root's watch reports their changes.
    func watchBundle(_ name: ItemName) {
        guard !name.isHidden else { return }
        var path = Array(rootPath.utf8)
        path.append(UInt8(ascii: "/"))
        path += name.bytes
        watchDirectoryTree(path, item: name, depth: 0)
    }

    /// Watches a bundle whose folders are already known from the scan: no
    /// listing needed (the initial scan of 100,000 bundles saves as many
    /// open/getdents/close calls).
    func watchBundle(_ name: ItemName, directories: [[UInt8]]) {
        guard !name.isHidden else { return }
        var root = Array(rootPath.utf8)
        root.append(UInt8(ascii: "/"))
        root += name.bytes
        for path in [root] + directories.map({ root + [UInt8(ascii: "/")] + $0 }) {
            do {
                let descriptor = try inotify.addWatch(path: path, mask: Self.bundleMask)
                assign(descriptor, to: name)
            } catch {
                if error.errno == ENOSPC {
                    if !watchLimitReached {
                        log("warning: inotify watch limit reached (fs.inotify.max_user_watches); "
                            + "unwatched bundles are rescanned every few seconds instead")
                    }
                    watchLimitReached = true
                    unwatchedItems.insert(name)
                }
                return
            }
        }
    }

    private func watchDirectoryTree(_ path: [UInt8], item: ItemName, depth: Int) {
        guard depth < Scanner.maximumBundleDepth else { return }
        let descriptor: Int32
        do {
            descriptor = try inotify.addWatch(path: path, mask: Self.bundleMask)
        } catch {
            switch error.errno {
            case ENOSPC:
                if !watchLimitReached {
                    log("warning: inotify watch limit reached (fs.inotify.max_user_watches); "
                        + "unwatched bundles are rescanned every few seconds instead")
                }
                watchLimitReached = true
                unwatchedItems.insert(item)
            case ENOTDIR, ENOENT, ELOOP:
                break  // a plain file, or gone already: the root's watch covers it
            default:
                log("warning: cannot watch \(String(decoding: path, as: UTF8.self)): \(error.message)")
            }
            return
        }
        assign(descriptor, to: item)
        // Subdirectories: created before the watch existed, they need their own.
        let fd = path.withCString { open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0, let entries = try? DirectoryReader.readEntries(consuming: fd) else { return }
        for entry in entries where entry.type == UInt8(DT_DIR) {
            watchDirectoryTree(path + [UInt8(ascii: "/")] + entry.name, item: item, depth: depth + 1)
        }
    }

    /// Forgets the watches of an item that is gone.
    func unwatch(_ name: ItemName) {
        for descriptor in descriptorsOfItem.removeValue(forKey: name) ?? [] {
            // A bundle renamed to another name keeps its inode, and inotify
            // gave the new name the same descriptor: that watch stays.
            guard itemOfDescriptor[descriptor] == name else { continue }
            itemOfDescriptor[descriptor] = nil
            inotify.removeWatch(descriptor)
        }
        unwatchedItems.remove(name)
    }

    /// Records that `descriptor` watches a folder of `item` (taking it over
    /// from the item it belonged to before, after a rename).
    private func assign(_ descriptor: Int32, to item: ItemName) {
        if let previous = itemOfDescriptor[descriptor], previous != item {
            descriptorsOfItem[previous]?.remove(descriptor)
        }
        itemOfDescriptor[descriptor] = item
        descriptorsOfItem[item, default: []].insert(descriptor)
    }

    /// Turns inotify events into dirty items.
    func observe(_ events: [Inotify.Event], into observation: inout Observation) {
        for event in events {
            if event.has(IN_Q_OVERFLOW) {
                observation.needsFullRescan = true
                continue
            }
            if event.descriptor == configurationDescriptor, event.name == configurationName,
               event.has(IN_CLOSE_WRITE) || event.has(IN_MOVED_TO) || event.has(IN_MOVED_FROM) || event.has(IN_DELETE)
            {
                observation.configurationChanged = true
            }
            if event.descriptor == rootDescriptor {
                if event.has(IN_DELETE_SELF) || event.has(IN_MOVE_SELF) || event.has(IN_IGNORED) {
                    if !observation.backingGone {
                        log("error: the backing directory \(rootPath) was deleted or moved; views keep their last state")
                    }
                    observation.backingGone = true
                    continue
                }
                let name = ItemName(event.name)
                guard !event.name.isEmpty, !name.isHidden else { continue }
                observation.dirtyItems.insert(name)
                if event.isDirectory, event.has(IN_CREATE) || event.has(IN_MOVED_TO) { watchBundle(name) }
                continue
            }
            guard let item = itemOfDescriptor[event.descriptor] else { continue }
            if event.has(IN_IGNORED) {
                // The directory is gone (deleted, or replaced by a rename over it).
                itemOfDescriptor[event.descriptor] = nil
                descriptorsOfItem[item]?.remove(event.descriptor)
                observation.dirtyItems.insert(item)
                continue
            }
            observation.dirtyItems.insert(item)
            if event.isDirectory, event.has(IN_CREATE) || event.has(IN_MOVED_TO) {
                watchBundle(item)  // picks up the new subdirectory
            }
        }
    }
}
