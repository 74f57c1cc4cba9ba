#if canImport(Glibc)
import Glibc
#endif
import CFuse
import Logging
import Synchronization
import QueryFSEngine
import QueryFSCollection

/// Tells the kernel to drop what it cached, and says when it could not.
/// ENOENT is the usual answer (the kernel had nothing cached under that id
/// or name) and no failure; any other failure is logged with its reason,
/// once per kind, so a mount whose invalidations fail is seen, not hidden.
/// Call only from the watcher thread (a notification waits for the kernel,
/// which may be waiting for a request handler).
struct KernelNotifications {
    let session: OpaquePointer
    let logger: Logger

    /// The errnos already logged (a failing mount would repeat one thousands of times).
    private static let logged = Mutex<Set<Int32>>([])

    /// Drops the node's attributes and every page the kernel keeps of it (file data, a folder's listing, a link's target).
    func invalidateInode(_ id: UInt64) {
        check(fuse_lowlevel_notify_inval_inode(session, id, 0, 0), "inode \(id)")
    }

    /// Drops only the node's attributes (a negative offset: its pages stay).
    func invalidateAttributes(_ id: UInt64) {
        check(fuse_lowlevel_notify_inval_inode(session, id, -1, 0), "attributes of inode \(id)")
    }

    func invalidateEntry(parent: UInt64, name: [UInt8]) {
        let result = name.withCString { fuse_lowlevel_notify_inval_entry(session, parent, $0, name.count) }
        check(result, "name '\(String(decoding: name, as: UTF8.self))' in \(parent)")
    }

    private func check(_ result: Int32, _ what: @autoclosure () -> String) {
        // The connection going away (an unmount, the shutdown's abort) is no failure to report.
        guard result != 0, result != -ENOENT, ![ENOTCONN, ECONNABORTED, ENODEV, EBADF].contains(-result) else { return }
        let code = -result
        guard Self.logged.withLock({ $0.insert(code).inserted }) else { return }
        logger.warning("""
            the kernel did not drop its cached \(what()): \(String(cString: strerror(code))) \
            (logged once; views may show stale entries until their cache times out)
            """)
    }
}
