#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// A file or folder under `bundles/` that the kernel knows: an QFS_O_PATH
/// descriptor on the backing file, and how many lookups the kernel holds
/// (as passthrough_ll's `lo_inode`). The descriptor follows the file across
/// renames; it is closed when the kernel forgets the node.
final class PassthroughNode: @unchecked Sendable {
    let id: UInt64
    let fd: Int32
    let device: UInt64
    let inode: UInt64
    /// The item (top-level entry of the backing directory) this node is in,
    /// nil for the backing directory itself. Used to invalidate what an
    /// item's change touches.
    let item: ItemName?
    /// Where the kernel last looked it up: parent node and name.
    var parent: UInt64
    var name: [UInt8]
    var lookups: UInt64 = 0
    /// What the file looked like when the watcher last invalidated it
    /// (touched by the watcher thread only).
    var invalidatedState: (stamp: FileChangeStamp, settled: Bool)?

    init(id: UInt64, fd: Int32, device: UInt64, inode: UInt64, item: ItemName?, parent: UInt64, name: [UInt8]) {
        self.id = id
        self.fd = fd
        self.device = device
        self.inode = inode
        self.item = item
        self.parent = parent
        self.name = name
    }
}

/// The live passthrough nodes, by node id.
final class PassthroughTable: @unchecked Sendable {
    private let lock = PlainLock()
    private var nodes: [UInt64: PassthroughNode] = [:]
    private var nodesOfItem: [ItemName: Set<UInt64>] = [:]
    let root: PassthroughNode

    init(backing: BackingDirectory) throws(SystemError) {
        let fd = open(backing.path, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: backing.path) }
        var status = stat()
        fstat(fd, &status)
        root = PassthroughNode(id: NodeID.bundles, fd: fd, device: UInt64(status.st_dev), inode: UInt64(status.st_ino),
                               item: nil, parent: NodeID.root, name: Array("bundles".utf8))
        root.lookups = 1 << 62  // never forgotten
        nodes[NodeID.bundles] = root
    }

    func node(_ id: UInt64) -> PassthroughNode? {
        lock.withLock { nodes[id] }
    }

    /// Looks `name` up in `parent` and counts one kernel lookup.
    func lookup(_ name: UnsafePointer<CChar>, in parent: PassthroughNode) throws(SystemError) -> (PassthroughNode, stat) {
        let fd = openat(parent.fd, name, QFS_O_PATH | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("lookup") }
        var status = stat()
        guard fstatat(fd, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 else {
            let error = SystemError.current("stat")
            close(fd)
            throw error
        }
        let nameBytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
        let item = parent.item ?? ItemName(nameBytes)
        let id = NodeID.passthrough(backingInode: UInt64(status.st_ino))
        let node: PassthroughNode = lock.withLock {
            if let existing = nodes[id], existing.device == UInt64(status.st_dev) {
                close(fd)
                existing.lookups += 1
                existing.parent = parent.id
                existing.name = nameBytes
                return existing
            }
            let created = PassthroughNode(id: id, fd: fd, device: UInt64(status.st_dev), inode: UInt64(status.st_ino),
                                          item: item, parent: parent.id, name: nameBytes)
            created.lookups = 1
            if let old = nodes[id] { close(old.fd) }  // an inode number reused by a new file
            nodes[id] = created
            nodesOfItem[item, default: []].insert(id)
            return created
        }
        return (node, status)
    }

    /// The kernel dropped `count` lookups of `id`.
    func forget(_ id: UInt64, count: UInt64) {
        lock.withLock {
            guard let node = nodes[id], id != NodeID.bundles else { return }
            node.lookups = node.lookups > count ? node.lookups - count : 0
            if node.lookups == 0 {
                nodes[id] = nil
                if let item = node.item {
                    nodesOfItem[item]?.remove(id)
                    if nodesOfItem[item]?.isEmpty == true { nodesOfItem[item] = nil }
                }
                close(node.fd)
            }
        }
    }

    /// The nodes the kernel holds inside an item (for invalidation).
    func nodes(inItem item: ItemName) -> [PassthroughNode] {
        lock.withLock { (nodesOfItem[item] ?? []).compactMap { nodes[$0] } }
    }
}

/// Enough of a file's status to tell that it has not changed since: a file
/// whose ctime, mtime, size and inode all match changed neither data nor
/// attributes — provided the stamp was taken well after its ctime, since
/// the kernel stamps times at clock-tick granularity and two changes within
/// one tick share a ctime.
struct FileChangeStamp: Equatable {
    var ctime: Timestamp
    var mtime: Timestamp
    var size: Int64
    var inode: UInt64

    init(_ status: stat) {
        ctime = Timestamp(seconds: Int64(status.st_ctim.tv_sec), nanoseconds: UInt32(status.st_ctim.tv_nsec))
        mtime = Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: UInt32(status.st_mtim.tv_nsec))
        size = Int64(status.st_size)
        inode = UInt64(status.st_ino)
    }

    /// Taken at `time`, was the stamp settled: is any later change bound to
    /// get a later ctime?
    func isSettled(takenAt time: Timestamp) -> Bool {
        // In Doubles: a backing filesystem may report any ctime, and Int64
        // nanoseconds of one far off would overflow (a trap).
        let elapsed = Double(time.seconds) - Double(ctime.seconds) + (Double(time.nanoseconds) - Double(ctime.nanoseconds)) / 1e9
        return elapsed > 0.05  // 50 ms, far above any clock tick
    }
}
