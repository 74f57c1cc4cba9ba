#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Logging
import Synchronization
import QueryFSEngine

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
        /// Bundles with a new folder, to be watched (or polled).
        var needsWatch = Set<ItemName>()

        init(backingGone: Bool = false) { self.backingGone = backingGone }
    }

    /// nil when no inotify instance could be had (fs.inotify.max_user_instances): everything is polled.
    private let inotify: Inotify?
    private let rootPath: String
    /// The payload files whose coming or going makes a folder a bundle or back.
    private let payloadNames: [String]
    private var rootDescriptor: Int32 = -1
    /// Which item each watched bundle directory belongs to.
    private var itemOfDescriptor: [Int32: ItemName] = [:]
    private var descriptorsOfItem: [ItemName: Set<Int32>] = [:]
    /// In a recursive collection, the folder of items each watch is on
    /// (its events name items inside it, as BACKING's watch does).
    private var folderOfDescriptor: [Int32: ItemName] = [:]
    private var descriptorOfFolder: [ItemName: Int32] = [:]
    /// Some watch was refused for the watch limit (logged once).
    private(set) var watchLimitReached = false
    private let logger: Logger
    /// The configuration file: the watch on its folder, and its name there.
    private var configurationDescriptor: Int32 = -1
    private var configurationName: [UInt8] = []
    private var configurationPath = ""

    private func isLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    private static let bundleMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR)
    private static let rootMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR)

    /// Watches BACKING. When inotify cannot (no instance or no watch left),
    /// BACKING is not watched (`watchesRoot` false) and the caller polls;
    /// any other failure (BACKING unreadable) is an error.
    init(rootPath: String, payloadNames: [String] = FieldSources.defaultPayloadNames, logger: Logger) throws(SystemError) {
        self.payloadNames = payloadNames
        self.rootPath = rootPath.hasSuffix("/") && rootPath.count > 1 ? String(rootPath.dropLast()) : rootPath
        self.logger = logger
        do {
            inotify = try Inotify()
        } catch {
            guard error.errno == EMFILE || error.errno == ENFILE || error.errno == ENOMEM else { throw error }
            inotify = nil
            logger.warning("""
                no inotify instance to be had (\(error.message); fs.inotify.max_user_instances): \
                every item is polled instead, so changes show within seconds rather than milliseconds
                """)
            return
        }
        do {
            rootDescriptor = try inotify!.addWatch(path: Array(rootPath.utf8), mask: Self.rootMask)
            countWatches()
        } catch {
            guard Self.isWatchLimit(error) else { throw error }
            noteWatchLimit()
        }
    }

    /// Whether BACKING itself is watched (else its listing and every item are polled).
    var watchesRoot: Bool { rootDescriptor >= 0 }

    var fd: Int32 { inotify?.fd ?? -1 }

    private static func isWatchLimit(_ error: SystemError) -> Bool { error.errno == ENOSPC || error.errno == ENOMEM }

    private func noteWatchLimit() {
        guard !watchLimitReached else { return }
        watchLimitReached = true
        let limit = (try? readWholeFile("/proc/sys/fs/inotify/max_user_watches"))?
            .split(separator: "\n").first.map(String.init) ?? "?"
        logger.warning("""
            inotify watch limit reached (fs.inotify.max_user_watches = \(limit)): what cannot be watched is polled \
            instead, so its changes show within seconds rather than milliseconds; raise the limit with \
            `sysctl fs.inotify.max_user_watches=1048576` (and a file in /etc/sysctl.d/ to keep it) and mount again
            """)
    }

    /// Reports changes to the file at `path` (`configurationChanged`): its
    /// folder is watched for the name being written (close after writing),
    /// renamed over (how editors save) or removed. BACKING itself already
    /// has such a watch; IN_MASK_ADD keeps its mask. False when it cannot
    /// be watched (the caller polls the file).
    func watchConfiguration(path: String) -> Bool {
        guard let inotify else { return false }
        let bytes = Array(path.utf8)
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<$0]) } ?? Array(".".utf8)
        configurationName = slash.map { Array(bytes[($0 + 1)...]) } ?? bytes
        configurationPath = path
        // IN_CREATE too: a link made in its place (a dotfile manager's) is written by no one.
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ONLYDIR) | UInt32(bitPattern: IN_MASK_ADD)
        do {
            configurationDescriptor = try inotify.addWatch(path: folder, mask: mask)
            countWatches()
            return true
        } catch {
            if Self.isWatchLimit(error) { noteWatchLimit() } else { logger.warning("cannot watch \(path): \(error.message); it is polled") }
            return false
        }
    }

    /// Every event queued now (none without an instance).
    func readAvailable() -> [Inotify.Event] { inotify?.readAvailable() ?? [] }

    /// How many inotify watches are in place (read by `queryfs status` from any thread).
    var watchCount: Int { watches.load(ordering: .relaxed) }
    private let watches = Atomic<Int>(0)

    private func countWatches() {
        let configuration = configurationDescriptor >= 0 && configurationDescriptor != rootDescriptor ? 1 : 0
        watches.store(itemOfDescriptor.count + folderOfDescriptor.count + (rootDescriptor >= 0 ? 1 : 0) + configuration, ordering: .relaxed)
    }

    /// Watches every directory of a bundle (idempotent: existing watches are
    /// kept, new subdirectories are added). Plain files need no watch of
    /// their own: the root's watch reports their changes. False when some
    /// folder of it could not be watched (the caller polls the item).
    @discardableResult
    func watchBundle(_ name: ItemName) -> Bool {
        guard !name.isHidden, watchesRoot else { return false }
        var path = Array(rootPath.utf8)
        path.append(UInt8(ascii: "/"))
        path += name.bytes
        return watchDirectoryTree(path, item: name, depth: 0)
    }

    /// Watches a bundle whose folders are already known from the scan: no
    /// listing needed (the initial scan of 100,000 bundles saves as many
    /// open/getdents/close calls).
    func watchBundle(_ name: ItemName, directories: [[UInt8]]) -> Bool {
        guard !name.isHidden, watchesRoot, let inotify else { return false }
        var root = Array(rootPath.utf8)
        root.append(UInt8(ascii: "/"))
        root += name.bytes
        for path in [root] + directories.map({ root + [UInt8(ascii: "/")] + $0 }) {
            do {
                let descriptor = try inotify.addWatch(path: path, mask: Self.bundleMask)
                assign(descriptor, to: name)
            } catch {
                if Self.isWatchLimit(error) {
                    noteWatchLimit()
                    return false
                }
                // Gone meanwhile: the root's watch reports it.
                if error.errno != ENOENT && error.errno != ENOTDIR { logger.warning("cannot watch \(error.path): \(error.message)") }
            }
        }
        return true
    }

    private func watchDirectoryTree(_ path: [UInt8], item: ItemName, depth: Int) -> Bool {
        guard depth < Scanner.maximumBundleDepth, let inotify else { return true }
        let descriptor: Int32
        do {
            descriptor = try inotify.addWatch(path: path, mask: Self.bundleMask)
        } catch {
            switch error.errno {
            case ENOSPC, ENOMEM:
                noteWatchLimit()
                return false
            case ENOTDIR, ENOENT, ELOOP:
                return true  // a plain file, or gone already: the root's watch covers it
            default:
                logger.warning("cannot watch \(String(decoding: path, as: UTF8.self)): \(error.message)")
                return true
            }
        }
        assign(descriptor, to: item)
        // Subdirectories: created before the watch existed, they need their own.
        let fd = path.withCString { open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0, let entries = try? DirectoryReader.readEntries(consuming: fd) else { return true }
        var complete = true
        for entry in entries where entry.type == UInt8(DT_DIR) {
            complete = watchDirectoryTree(path + [UInt8(ascii: "/")] + entry.name, item: item, depth: depth + 1) && complete
        }
        return complete
    }

    /// Watches a folder of items (a recursive collection) as BACKING is
    /// watched: items made, changed, renamed or removed in it. A folder
    /// renamed keeps its inode, and inotify gives its new path the same
    /// descriptor: the watch moves to the new name. False when it could not
    /// be watched (the watch limit).
    @discardableResult
    func watchFolder(_ name: ItemName, in rootFD: Int32) -> Bool {
        guard watchesRoot, let inotify else { return false }
        // The folder is found beneath BACKING's descriptor through no link
        // (openat2), then watched through that descriptor: a path would let a
        // folder above it swapped for a link place the watch elsewhere.
        let folderFD = name.bytes.withCString { qfs_open_beneath(rootFD, $0, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC) }
        guard folderFD >= 0 else { return true }  // gone, or a link now: nothing of the collection to watch
        defer { close(folderFD) }
        do {
            // The /proc link is followed to the folder itself (IN_DONT_FOLLOW would watch the link).
            let descriptor = try inotify.addWatch(path: Array("/proc/self/fd/\(folderFD)".utf8), mask: Self.rootMask & ~UInt32(IN_DONT_FOLLOW))
            if let previous = folderOfDescriptor[descriptor], previous != name, descriptorOfFolder[previous] == descriptor {
                descriptorOfFolder[previous] = nil
            }
            folderOfDescriptor[descriptor] = name
            descriptorOfFolder[name] = descriptor
            countWatches()
            return true
        } catch {
            if Self.isWatchLimit(error) { noteWatchLimit() }
            else if error.errno != ENOENT && error.errno != ENOTDIR { logger.warning("cannot watch \(error.path): \(error.message)") }
            return false
        }
    }

    /// Forgets the watch of a folder that is gone or became a bundle (kept
    /// when its descriptor now watches the folder under another name).
    func unwatchFolder(_ name: ItemName) {
        guard let descriptor = descriptorOfFolder.removeValue(forKey: name) else { return }
        guard folderOfDescriptor[descriptor] == name else { return }
        folderOfDescriptor[descriptor] = nil
        inotify?.removeWatch(descriptor)
        countWatches()
    }

    /// The kernel dropped the watch (its folder is gone).
    fileprivate func forgetFolderDescriptor(_ descriptor: Int32, of folder: ItemName) {
        folderOfDescriptor[descriptor] = nil
        if descriptorOfFolder[folder] == descriptor { descriptorOfFolder[folder] = nil }
        countWatches()
    }

    /// Whether the folder a nested item lies in is watched (BACKING's own
    /// watch for an item directly inside it).
    func watchesFolder(of name: ItemName) -> Bool {
        guard let slash = name.bytes.lastIndex(of: UInt8(ascii: "/")) else { return watchesRoot }
        return descriptorOfFolder[ItemName(Array(name.bytes[..<slash]))] != nil
    }

    /// Forgets the watches of an item that is gone.
    func unwatch(_ name: ItemName) {
        for descriptor in descriptorsOfItem.removeValue(forKey: name) ?? [] {
            // A bundle renamed to another name keeps its inode, and inotify
            // gave the new name the same descriptor: that watch stays.
            guard itemOfDescriptor[descriptor] == name else { continue }
            itemOfDescriptor[descriptor] = nil
            inotify?.removeWatch(descriptor)
        }
        countWatches()
    }

    /// Records that `descriptor` watches a folder of `item` (taking it over
    /// from the item it belonged to before, after a rename).
    private func assign(_ descriptor: Int32, to item: ItemName) {
        if let previous = itemOfDescriptor[descriptor], previous != item {
            descriptorsOfItem[previous]?.remove(descriptor)
        }
        itemOfDescriptor[descriptor] = item
        descriptorsOfItem[item, default: []].insert(descriptor)
        countWatches()
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
                || event.has(IN_CREATE) && isLink(configurationPath)
            {
                // (A file created is read once written: its IN_CLOSE_WRITE follows. A link is whole at once.)
                observation.configurationChanged = true
            }
            if event.descriptor == rootDescriptor {
                if event.has(IN_DELETE_SELF) || event.has(IN_MOVE_SELF) || event.has(IN_IGNORED) {
                    if !observation.backingGone {
                        // Said as it is (found from outside: "views keep their last state", while a moved
                        // folder's items were still followed through the descriptors held on it).
                        let said = "the backing directory \(rootPath) was moved or deleted: a moved one is still shown where it went, "
                            + "but changes to its items may no longer be heard; unmount and mount it at its new path"
                        logger.error("\(said)")
                    }
                    observation.backingGone = true
                    continue
                }
                let name = ItemName(event.name)
                guard !event.name.isEmpty, !name.isHidden else { continue }
                observation.dirtyItems.insert(name)
                if event.isDirectory, event.has(IN_CREATE) || event.has(IN_MOVED_TO) { observation.needsWatch.insert(name) }
                continue
            }
            if let folder = folderOfDescriptor[event.descriptor] {
                observeInFolder(folder, event, into: &observation)
                continue
            }
            guard let item = itemOfDescriptor[event.descriptor] else { continue }
            if event.has(IN_IGNORED) {
                // The directory is gone (deleted, or replaced by a rename over it).
                itemOfDescriptor[event.descriptor] = nil
                descriptorsOfItem[item]?.remove(event.descriptor)
                countWatches()
                observation.dirtyItems.insert(item)
                continue
            }
            observation.dirtyItems.insert(item)
            if event.isDirectory, event.has(IN_CREATE) || event.has(IN_MOVED_TO) {
                observation.needsWatch.insert(item)  // picks up the new subdirectory
            }
        }
    }
}

extension BackingWatcher {
    /// An event in a folder of items: the item it names is dirty, as for
    /// BACKING's own watch. A payload file made or removed there turns the
    /// folder into a bundle or back: the folder itself is dirty then.
    fileprivate func observeInFolder(_ folder: ItemName, _ event: Inotify.Event, into observation: inout Observation) {
        if event.has(IN_IGNORED) || event.has(IN_DELETE_SELF) {
            forgetFolderDescriptor(event.descriptor, of: folder)
            observation.dirtyItems.insert(folder)
            return
        }
        guard !event.name.isEmpty, event.name.first != UInt8(ascii: ".") else { return }
        if payloadNames.contains(where: { Array($0.utf8) == event.name }) {
            observation.dirtyItems.insert(folder)
            return
        }
        observation.dirtyItems.insert(ItemName(folder.bytes + [UInt8(ascii: "/")] + event.name))
    }
}
