#if canImport(Glibc)
import Glibc
#endif
import CFuse
import Logging
import QueryFSEngine
import QueryFSCollection

/// The names the kernel is to forget (`fuse_lowlevel_notify_inval_entry`),
/// sent by a thread of their own. Dropping a name locks its folder in the
/// kernel, and the kernel holds that lock while a request in the folder
/// waits for its answer: an edit through a view (`rm`, `ln -s`, `mv`) waits
/// for the watcher to update every view before it answers, so the watcher
/// must never wait for a folder lock — it hands names over here and goes on.
/// Folder listings and attributes (`inval_inode`, no folder lock) the watcher
/// still drops itself, before an edit is answered.
///
/// Names of a large range of shifted entries are found by `NameSweeps`, on
/// a thread of lower priority, and dropped here.
final class NameInvalidations: @unchecked Sendable {
    private enum Work {
        case name(parent: UInt64, name: [UInt8])
        case names(parent: UInt64, names: [[UInt8]])
        /// A node's attributes and cached listing.
        case node(UInt64)
    }

    private let queue = QueueThread<Work>(named: "queryfs-names")
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts sending through the filesystem's session; nothing is sent
    /// before the kernel connected (it has cached nothing then).
    func start(filesystem: QueryFilesystem) {
        let logger = self.logger
        queue.start { batch in
            guard let session = filesystem.session else { return }
            let kernel = KernelNotifications(session: session, logger: logger)
            for work in batch {
                switch work {
                case .name(let parent, let name): kernel.invalidateEntry(parent: parent, name: name)
                case .names(let parent, let names): for name in names { kernel.invalidateEntry(parent: parent, name: name) }
                case .node(let id): kernel.invalidateInode(id)
                }
            }
        }
    }

    func add(parent: UInt64, name: [UInt8]) {
        queue.add(.name(parent: parent, name: name))
    }

    func add(parent: UInt64, names: [[UInt8]]) {
        guard !names.isEmpty else { return }
        queue.add(.names(parent: parent, names: names))
    }

    /// Drops a folder's cached attributes and listing, for a handler that
    /// changed it (`query/` growing on a lookup): handlers must not notify.
    func addFolder(_ id: UInt64) {
        queue.add(.node(id))
    }

    /// Ends the thread once the names queued so far are sent, and waits
    /// for it (at most a second): the session must outlive every notification.
    func stop() { queue.stop() }
}
