#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// A file or folder under `bundles/` that the kernel knows, and how many
/// lookups the kernel holds (as passthrough_ll's `lo_inode`). Unlike
/// passthrough_ll it does not keep a descriptor open for life: the kernel
/// may know a million nodes, and a process has a few thousand descriptors.
/// `PassthroughTable.withDescriptor` lends one, reopening it by name (and
/// checking the inode) when the table had let it go.
final class PassthroughNode: @unchecked Sendable {
    // Eight-byte fields first, then the narrow ones: the object stays in a
    // smaller malloc chunk (one per node the kernel holds).
    let id: UInt64
    let device: UInt64
    let inode: UInt64
    /// The item this node is in (an entry of the backing directory, or in
    /// a recursive collection one at any depth), nil for the backing
    /// directory itself and its folders of items. Used to invalidate what an
    /// item's change touches.
    let item: ItemName?
    /// For a folder of items (a recursive collection), its path in BACKING.
    let folder: ItemName?
    /// Where the kernel last looked it up: parent node and name.
    var parent: UInt64
    var name: [UInt8]
    var lookups: UInt64 = 0
    /// What the file looked like when the watcher last invalidated it
    /// (touched by the watcher thread only).
    var invalidatedState: (stamp: FileChangeStamp, settled: Bool)?
    /// The file type bits (S_IFMT) at lookup.
    let type: mode_t

    // Guarded by the table's lock.
    /// An O_PATH descriptor on the backing file, -1 while closed.
    fileprivate var descriptor: Int32
    /// Handlers using the descriptor now: it is not closed under them.
    fileprivate var pins: Int32 = 0
    /// Its slot in the table's clock, -1 when not in it.
    fileprivate var slot: Int32 = -1
    /// Used since the clock's hand last passed (second chance).
    fileprivate var referenced = true
    /// Whether this node is its item itself (the bundle or file), not a file inside it.
    let isItemRoot: Bool

    init(id: UInt64, fd: Int32, device: UInt64, inode: UInt64, type: mode_t, item: ItemName?, parent: UInt64, name: [UInt8],
         folder: ItemName? = nil, isItemRoot: Bool = false) {
        self.id = id
        descriptor = fd
        self.device = device
        self.inode = inode
        self.type = type
        self.item = item
        self.folder = folder
        self.isItemRoot = isItemRoot
        self.parent = parent
        self.name = name
    }
}

/// The live passthrough nodes, by node id, and the descriptors open on
/// them: at most `descriptorLimit`, kept by a clock (second chance), so a
/// walk of a million files runs in a few thousand descriptors. BACKING's
/// own descriptor is never let go.
final class PassthroughTable: @unchecked Sendable {
    private let lock = PlainLock()
    private var nodes: [UInt64: PassthroughNode] = [:]
    private var nodesOfItem: [ItemName: ItemNodes] = [:]
    /// The nodes of folders of items the kernel holds, by path.
    private var nodeOfFolder: [ItemName: UInt64] = [:]
    /// Items at any depth: a folder without a payload file is a folder of items.
    let recursive: Bool
    private let payloadNames: [String]
    let root: PassthroughNode
    /// BACKING, O_PATH, open for the mount's life.
    let rootFD: Int32
    /// How many node descriptors stay open at most.
    let descriptorLimit: Int
    private var clock: [PassthroughNode?]
    private var hand = 0

    /// The catalog's own copy of an item's name, nil when it has none: a
    /// node keeps that one instead of bytes of its own (about 100 bytes a
    /// node). Called outside the table's lock.
    private let sharedName: @Sendable (ItemName) -> ItemName?

    init(backing: BackingDirectory, descriptorLimit: Int = PassthroughTable.defaultDescriptorLimit(),
         sharedName: @escaping @Sendable (ItemName) -> ItemName? = { _ in nil }) throws(SystemError) {
        self.sharedName = sharedName
        let fd = open(backing.path, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: backing.path) }
        var status = stat()
        fstat(fd, &status)
        rootFD = fd
        recursive = backing.recursive
        payloadNames = backing.payloadNames
        root = PassthroughNode(id: NodeID.bundles, fd: fd, device: UInt64(status.st_dev), inode: UInt64(status.st_ino),
                               type: S_IFDIR, item: nil, parent: NodeID.root, name: Array("bundles".utf8))
        root.lookups = 1 << 62  // never forgotten
        nodes[NodeID.bundles] = root
        self.descriptorLimit = max(16, descriptorLimit)
        clock = Array(repeating: nil, count: self.descriptorLimit)
    }

    /// A quarter of the process's descriptor limit (the rest is for open
    /// files, directories being read, the watcher, and libfuse's splice
    /// pipes, two a worker thread), within 16…65,536: a floor of 64 took
    /// half of a 128 limit, and a walk of bundles/ met EMFILE.
    static func defaultDescriptorLimit() -> Int {
        guard let limit = DescriptorLimit.current else { return 65_536 }
        return min(65_536, max(16, limit / 4))
    }

    /// How many node descriptors are open now (for tests and `queryfs status`).
    var openDescriptorCount: Int { lock.withLock { clock.reduce(0) { $0 + ($1 == nil ? 0 : 1) } } }

    func node(_ id: UInt64) -> PassthroughNode? {
        lock.withLock { nodes[id] }
    }

    /// Runs `body` with an O_PATH descriptor on `node`'s backing file, not
    /// closed until `body` returns. Nil, with errno set, when the descriptor
    /// had been let go and the file cannot be found again under its name
    /// (ESTALE: it was removed, or replaced by another file).
    func withDescriptor<T>(_ node: PassthroughNode, _ body: (Int32) throws(SystemError) -> T) throws(SystemError) -> T {
        let fd = try acquire(node)
        defer { release(node) }
        return try body(fd)
    }

    /// The same, for two nodes at once (rename, link).
    func withDescriptors<T>(_ first: PassthroughNode, _ second: PassthroughNode,
                            _ body: (Int32, Int32) throws(SystemError) -> T) throws(SystemError) -> T {
        try withDescriptor(first) { (one: Int32) throws(SystemError) -> T in
            try withDescriptor(second) { (two: Int32) throws(SystemError) -> T in try body(one, two) }
        }
    }

    private func acquire(_ node: PassthroughNode) throws(SystemError) -> Int32 {
        let (open, parentID, name): (Int32, UInt64, [UInt8]) = lock.withLock {
            if node.descriptor >= 0 {
                node.pins += 1
                node.referenced = true
                return (node.descriptor, 0, [])
            }
            return (-1, node.parent, node.name)
        }
        if open >= 0 { return open }
        // Reopened by the name it was last looked up under, outside the lock
        // (the parent's may need reopening too); the inode says it is the same file.
        guard let parent = self.node(parentID) else { throw SystemError(errno: ESTALE, operation: "reopen") }
        let fd = try withDescriptor(parent) { (parentFD: Int32) throws(SystemError) -> Int32 in
            let fd = name.withCString { openat(parentFD, $0, QFS_O_PATH | O_NOFOLLOW | O_CLOEXEC) }
            guard fd >= 0 else { throw SystemError(errno: errno == ENOENT ? ESTALE : errno, operation: "reopen") }
            return fd
        }
        var status = stat()
        guard fstatat(fd, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0,
              UInt64(status.st_ino) == node.inode, UInt64(status.st_dev) == node.device else {
            close(fd)
            throw SystemError(errno: ESTALE, operation: "reopen")
        }
        return lock.withLock {
            if node.descriptor >= 0 {
                close(fd)  // another handler reopened it meanwhile
            } else {
                node.descriptor = fd
                keep(node)
            }
            node.pins += 1
            node.referenced = true
            return node.descriptor
        }
    }

    private func release(_ node: PassthroughNode) {
        lock.withLock {
            node.pins -= 1
            if node.pins == 0, node.slot < 0, node.descriptor >= 0, node !== root { closeDescriptor(node) }
        }
    }

    /// Gives `node`'s open descriptor a slot, closing the descriptor of a
    /// node neither pinned nor used since the hand last passed (under the lock).
    private func keep(_ node: PassthroughNode) {
        for _ in 0..<(2 * clock.count) {
            defer { hand = (hand + 1) % clock.count }
            guard let victim = clock[hand] else {
                clock[hand] = node
                node.slot = Int32(hand)
                return
            }
            if victim.pins == 0 && !victim.referenced {
                victim.slot = -1
                closeDescriptor(victim)
                clock[hand] = node
                node.slot = Int32(hand)
                return
            }
            victim.referenced = false
        }
        // Every slot pinned (more handlers than slots): kept outside the
        // clock, closed when its last pin goes.
        node.slot = -1
    }

    /// Lets `node`'s descriptor go (now, or when its last handler is done
    /// with it): its next use reopens it by name and checks the inode, so a
    /// file replaced under that name (a save by rename, a checkout, an
    /// edit's atomic rewrite) answers ESTALE — the kernel then looks the
    /// name up again — instead of reading and writing the old, deleted file.
    func letGo(_ node: PassthroughNode) {
        lock.withLock {
            guard node !== root, node.descriptor >= 0 else { return }
            if node.slot >= 0 {
                clock[Int(node.slot)] = nil
                node.slot = -1
            }
            if node.pins == 0 { closeDescriptor(node) }
        }
    }

    private func closeDescriptor(_ node: PassthroughNode) {
        close(node.descriptor)
        node.descriptor = -1
    }

    /// Looks `name` up in `parent` and counts one kernel lookup.
    func lookup(_ name: UnsafePointer<CChar>, in parent: PassthroughNode) throws(SystemError) -> (PassthroughNode, stat) {
        let fd = try withDescriptor(parent) { (parentFD: Int32) throws(SystemError) -> Int32 in
            let fd = openat(parentFD, name, QFS_O_PATH | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError.current("lookup") }
            return fd
        }
        var status = stat()
        guard fstatat(fd, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 else {
            let error = SystemError.current("stat")
            close(fd)
            throw error
        }
        var nameBytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
        let (item, folder) = attribution(of: nameBytes, in: parent, status: status, fd: fd)
        // An item directly in BACKING is named by its name: one array for
        // both (about 100 bytes a node, a million nodes after a walk of bundles/).
        if let item, item.bytes == nameBytes { nameBytes = item.bytes }
        let id = NodeID.passthrough(backingInode: UInt64(status.st_ino))
        let node: PassthroughNode = lock.withLock {
            if let existing = nodes[id], existing.device == UInt64(status.st_dev) {
                if existing.descriptor < 0 {
                    existing.descriptor = fd
                    keep(existing)
                } else {
                    close(fd)
                }
                existing.referenced = true
                existing.lookups += 1
                existing.parent = parent.id
                existing.name = nameBytes
                return existing
            }
            let created = PassthroughNode(id: id, fd: fd, device: UInt64(status.st_dev), inode: UInt64(status.st_ino),
                                          type: status.st_mode & S_IFMT, item: item, parent: parent.id, name: nameBytes,
                                          folder: folder, isItemRoot: parent.item == nil && item != nil)
            created.lookups = 1
            if let old = nodes[id] { drop(old) }  // an inode number reused by a new file
            nodes[id] = created
            if let item { nodesOfItem[item] = nodesOfItem[item].inserting(id) }
            if let folder { nodeOfFolder[folder] = id }
            keep(created)
            return created
        }
        return (node, status)
    }

    /// A rename through the mount moved the file `identity` to `name` in
    /// `parent` (whose descriptor is `parentFD`), where the kernel now holds
    /// its node. Within its item (an editor's save by rename) the node goes
    /// by the new name from now on. Anywhere else it belongs to another item
    /// (a temp file renamed over a note at the top is that note now): the
    /// table gets a new node object under the same id, attributed as a
    /// lookup would, and the old one is let go — a handler still using it
    /// keeps its fixed fields, and the kernel never sees the id change.
    /// A folder moved between items keeps its files' attribution until the
    /// kernel looks them up again.
    func moved(_ identity: (device: UInt64, inode: UInt64), to parent: PassthroughNode, name: [UInt8], parentFD: Int32) {
        let id = NodeID.passthrough(backingInode: identity.inode)
        let sameItem: Bool? = lock.withLock {
            guard let node = nodes[id], node.device == identity.device, id != NodeID.bundles else { return nil }
            guard !node.isItemRoot, let item = node.item, parent.item == item else { return false }
            node.parent = parent.id
            node.name = name
            return true
        }
        guard sameItem == false else { return }
        // Attributed as `lookup` does, from the file under its new name (outside the lock: it reads the folder).
        let fd = name.withCString { openat(parentFD, $0, QFS_O_PATH | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return }
        defer { close(fd) }
        var status = stat()
        guard fstatat(fd, "", &status, QFS_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0, UInt64(status.st_ino) == identity.inode else { return }
        let (item, folder) = attribution(of: name, in: parent, status: status, fd: fd)
        lock.withLock {
            guard let old = nodes[id], old.device == identity.device else { return }
            let moved = PassthroughNode(id: id, fd: -1, device: old.device, inode: old.inode, type: old.type, item: item,
                                        parent: parent.id, name: name, folder: folder, isItemRoot: parent.item == nil && item != nil)
            moved.lookups = old.lookups
            if let oldItem = old.item { nodesOfItem[oldItem] = nodesOfItem[oldItem]?.removing(id) }
            if let oldFolder = old.folder, nodeOfFolder[oldFolder] == id { nodeOfFolder[oldFolder] = nil }
            drop(old)
            nodes[id] = moved
            if let item { nodesOfItem[item] = nodesOfItem[item].inserting(id) }
            if let folder { nodeOfFolder[folder] = id }
        }
    }

    /// Items of bundles/ whose node the kernel forgot lately, by name: the
    /// event replay's removal of one needs the node the kernel had (its id
    /// and type), after the kernel let go of it (a file replaced by a rename
    /// has its name dropped from the kernel's cache). The last 256.
    private var forgottenItemRoots: [[UInt8]: PassthroughNode] = [:]
    private var forgottenOrder: [[UInt8]] = []
    private static let forgottenKept = 256

    /// The node the kernel last had for item `name` of bundles/, if it forgot
    /// it lately; taken, so that one removal is announced once.
    func takeForgottenItemRoot(named name: [UInt8]) -> PassthroughNode? {
        lock.withLock {
            guard let node = forgottenItemRoots.removeValue(forKey: name) else { return nil }
            forgottenOrder.removeAll { $0 == name }
            return node
        }
    }

    /// The kernel dropped `count` lookups of `id`.
    func forget(_ id: UInt64, count: UInt64) {
        lock.withLock {
            guard let node = nodes[id], id != NodeID.bundles else { return }
            node.lookups = node.lookups > count ? node.lookups - count : 0
            if node.lookups == 0 {
                if node.isItemRoot, node.parent == NodeID.bundles {
                    if forgottenItemRoots.updateValue(node, forKey: node.name) == nil { forgottenOrder.append(node.name) }
                    if forgottenOrder.count > Self.forgottenKept { forgottenItemRoots[forgottenOrder.removeFirst()] = nil }
                }
                nodes[id] = nil
                if let item = node.item { nodesOfItem[item] = nodesOfItem[item]?.removing(id) }
                if let folder = node.folder, nodeOfFolder[folder] == id { nodeOfFolder[folder] = nil }
                drop(node)
            }
        }
    }

    /// Takes a node out of the clock and closes its descriptor, now or when
    /// its last pin goes (under the lock).
    private func drop(_ node: PassthroughNode) {
        if node.slot >= 0 {
            clock[Int(node.slot)] = nil
            node.slot = -1
        }
        if node.pins == 0, node.descriptor >= 0 { closeDescriptor(node) }
    }

    /// The nodes the kernel holds inside an item (for invalidation).
    func nodes(inItem item: ItemName) -> [PassthroughNode] {
        lock.withLock { (nodesOfItem[item]?.ids ?? []).compactMap { nodes[$0] } }
    }

    /// The node of the folder a nested item lies in (bundles/ for one
    /// directly in BACKING), nil when the kernel holds none: then it holds
    /// no name in that folder either.
    func folderNode(of item: ItemName) -> UInt64? {
        guard let slash = item.bytes.lastIndex(of: UInt8(ascii: "/")) else { return NodeID.bundles }
        return lock.withLock { nodeOfFolder[ItemName(Array(item.bytes[..<slash]))] }
    }

    /// What a node named `name` in `parent` belongs to: the item of its
    /// parent; else (in BACKING or a folder of items) it is an item itself,
    /// or in a recursive collection a folder of items (a folder, not hidden,
    /// without a payload file: `BackingDirectory.listing`'s rule).
    private func attribution(of name: [UInt8], in parent: PassthroughNode, status: stat, fd: Int32) -> (item: ItemName?, folder: ItemName?) {
        if let item = parent.item { return (item, nil) }
        let made = ItemName((parent.folder.map { $0.bytes + [UInt8(ascii: "/")] } ?? []) + name)
        let path = sharedName(made) ?? made
        guard recursive, status.st_mode & S_IFMT == S_IFDIR, !path.isHidden else { return (path, nil) }
        let holdsPayload = payloadNames.contains { faccessat(fd, $0, F_OK, AT_SYMLINK_NOFOLLOW) == 0 }
        return holdsPayload ? (path, nil) : (nil, path)
    }
}

/// The nodes the kernel holds in one item: nearly always one (the bundle
/// or the file itself), kept inline; a set only beyond it. A set for each
/// item was about 100 bytes a node.
fileprivate enum ItemNodes {
    case one(UInt64)
    case many(Set<UInt64>)

    var ids: [UInt64] {
        switch self {
        case .one(let id): [id]
        case .many(let ids): Array(ids)
        }
    }

    /// Nil when no node is left.
    func removing(_ id: UInt64) -> ItemNodes? {
        switch self {
        case .one(let only): return only == id ? nil : self
        case .many(var ids):
            ids.remove(id)
            if ids.count > 1 { return .many(ids) }
            return ids.first.map { .one($0) }
        }
    }
}

extension Optional<ItemNodes> {
    fileprivate func inserting(_ id: UInt64) -> ItemNodes {
        switch self {
        case nil: return .one(id)
        case .one(let only)?: return only == id ? .one(id) : .many([only, id])
        case .many(var ids)?:
            ids.insert(id)
            return .many(ids)
        }
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
