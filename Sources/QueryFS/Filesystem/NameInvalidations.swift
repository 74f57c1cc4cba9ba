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
///
/// Sweeps (`sweep`) are the low-priority part: the names of a large range
/// of shifted entries that now mean another item. They run a chunk at a
/// time, and names queued meanwhile go first.
final class NameInvalidations: @unchecked Sendable {
    private enum Work {
        case name(parent: UInt64, name: [UInt8])
        /// A node's attributes and cached listing.
        case node(UInt64)
        /// Nothing: wakes the thread for the next chunk of a sweep.
        case sweepChunk
    }

    /// The entries of `range` of `old` whose name `new` gives to another item.
    struct Sweep {
        let folder: UInt64
        let old: ViewListing
        let new: ViewListing
        var range: Range<Int>
    }

    private let queue = QueueThread<Work>(named: "queryfs-names")
    private let sweeps = PlainLock()
    private var pendingSweeps: [Sweep] = []
    private let log: @Sendable (String) -> Void
    /// Entries a sweep compares between two looks at the queue.
    static let sweepChunk = 4096

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    /// Starts sending through `session` (once the mount is live).
    func start(session: OpaquePointer) {
        let log = self.log
        nonisolated(unsafe) let session = session
        queue.start { [self] batch in
            let kernel = KernelNotifications(session: session, log: log)
            for work in batch {
                switch work {
                case .name(let parent, let name): kernel.invalidateEntry(parent: parent, name: name)
                case .node(let id): kernel.invalidateInode(id)
                case .sweepChunk: break
                }
            }
            if sweepOneChunk(kernel) { queue.add(.sweepChunk) }
        }
    }

    func add(parent: UInt64, name: [UInt8]) {
        queue.add(.name(parent: parent, name: name))
    }

    /// Drops a folder's cached attributes and listing, for a handler that
    /// changed it (`query/` growing on a lookup): handlers must not notify.
    func addFolder(_ id: UInt64) {
        queue.add(.node(id))
    }

    /// Queues a sweep of `range` (see `Sweep`).
    func sweep(folder: UInt64, old: ViewListing, new: ViewListing, range: Range<Int>) {
        // Other widths: every rank is written differently, so no old name survives.
        guard !range.isEmpty, old.width == new.width else { return }
        sweeps.withLock { pendingSweeps.append(Sweep(folder: folder, old: old, new: new, range: range)) }
        queue.add(.sweepChunk)
    }

    /// Compares one chunk of the oldest sweep; whether any sweep is left.
    private func sweepOneChunk(_ kernel: KernelNotifications) -> Bool {
        guard var sweep = sweeps.withLock({ pendingSweeps.first }) else { return false }
        let chunk = sweep.range.prefix(Self.sweepChunk)
        let olds = sweep.old.records.records(in: chunk), news = sweep.new.records.records(in: chunk)
        for (offset, (before, after)) in zip(olds, news).enumerated() {
            guard before !== after, before.name != after.name,
                  before.hasSameEntryTitle(as: after, naming: sweep.old.naming) else { continue }
            kernel.invalidateEntry(parent: sweep.folder, name: sweep.old.name(at: chunk.lowerBound + offset))
        }
        sweep.range = chunk.upperBound..<sweep.range.upperBound
        return sweeps.withLock {
            if sweep.range.isEmpty { pendingSweeps.removeFirst() } else { pendingSweeps[0] = sweep }
            return !pendingSweeps.isEmpty
        }
    }

    /// Ends the thread once the names queued so far are sent, and waits
    /// for it (at most a second): the session must outlive every notification.
    func stop() { queue.stop() }
}
