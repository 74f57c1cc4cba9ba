#if canImport(Glibc)
import Glibc
#endif
import CFuse

/// The names the kernel is to forget (`fuse_lowlevel_notify_inval_entry`),
/// sent by a thread of their own. Dropping a name locks its folder in the
/// kernel, and the kernel holds that lock while a request in the folder
/// waits for its answer: an edit through a view (`rm`, `ln -s`, `mv`) waits
/// for the watcher to update every view before it answers, so the watcher
/// must never wait for a folder lock — it hands names over here and goes on.
/// Folder listings and attributes (`inval_inode`, no folder lock) the watcher
/// still drops itself, before an edit is answered.
final class NameInvalidations: @unchecked Sendable {
    /// A name in a folder, or (name nil) a node's attributes and cached listing.
    private let queue = QueueThread<(parent: UInt64, name: [UInt8]?)>()
    private let log: @Sendable (String) -> Void

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    /// Starts sending through `session` (once the mount is live).
    func start(session: OpaquePointer) {
        let log = self.log
        nonisolated(unsafe) let session = session
        queue.start { batch in
            let kernel = KernelNotifications(session: session, log: log)
            for (parent, name) in batch {
                if let name { kernel.invalidateEntry(parent: parent, name: name) } else { kernel.invalidateInode(parent) }
            }
        }
    }

    func add(parent: UInt64, name: [UInt8]) {
        queue.add((parent, name))
    }

    /// Drops a folder's cached attributes and listing, for a handler that
    /// changed it (`query/` growing on a lookup): handlers must not notify.
    func addFolder(_ id: UInt64) {
        queue.add((id, nil))
    }

    /// Ends the thread once the names queued so far are sent, and waits
    /// for it (at most a second): the session must outlive every notification.
    func stop() { queue.stop() }
}
