#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// The index file: a snapshot of every item, then a journal of the changes
/// applied since, appended as they happen.
///
///     "QFSINDEX"  header length (8)  header checksum (8)  header
///     body: the snapshot's items (`IndexedItem`), `itemCount` of them,
///           then each view's order (`StoredViewOrders`),
///           then where each item begins (8 bytes each, from the body's start)
///     journal: records, each  length (8)  checksum (8)  kind (1)  payload
///
/// The header says where the orders and the item offsets begin, so one view
/// is read without decoding every item (`readView`: `queryfs ls BACKING
/// tag/Work --trust-index` decodes the tag's 11,702 items of 100,000).
/// The header names what the index describes (the backing directory's
/// path, device and inode; the field sources items were read with; the
/// queryfs version that wrote it) and checks the body. A header or body
/// that fails its checksum, or a file that does not begin with the magic,
/// is corrupt; one for another directory is foreign; one written by another
/// version or with other field sources is outdated. None of them is used.
/// A journal record that fails its checksum ends the journal (a write torn
/// by a crash): what came before it stands. Whether the index is current is
/// not the file's to say: a mount keeping it current says so in its lock
/// (`IndexLock`); otherwise readers compare stamps (`IndexReconciler`).
enum IndexFile {
    static let magic = Array("QFSINDEX".utf8)
    static let formatVersion: UInt64 = 6
    /// Raised whenever reading an item changes what it yields (a parser
    /// fix): items indexed by an older reading are then read again, even
    /// within one queryfs version.
    static let scanRevision = 2

    /// What an index must describe to be used.
    struct Identity: Equatable, Sendable {
        var backingPath: String
        var device: UInt64
        var inode: UInt64
        var sources: FieldSources
        var payloadLimit: Int
        var version = Identity.currentVersion
        static let currentVersion = QueryFSVersion.string + "/" + String(IndexFile.scanRevision)
        /// The ignore patterns the writer left out items by. Items are read
        /// for names an index lacks, so other patterns never make it wrong
        /// when stamps are compared; an index is answered from without
        /// comparing only when they are the reader's (`IndexedCatalog`).
        var ignorePatterns: [String] = []

        init(backing: BackingDirectory, sources: FieldSources, payloadLimit: Int, ignorePatterns: [String]) throws(SystemError) {
            var status = stat()
            guard fstat(backing.fd, &status) == 0 else { throw SystemError.current("stat", path: backing.path) }
            backingPath = backing.path
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            self.sources = sources
            self.payloadLimit = payloadLimit
            self.ignorePatterns = ignorePatterns
        }

        init(backingPath: String, device: UInt64, inode: UInt64, sources: FieldSources, payloadLimit: Int, version: String) {
            self.backingPath = backingPath
            self.device = device
            self.inode = inode
            self.sources = sources
            self.payloadLimit = payloadLimit
            self.version = version
        }

        /// Whether items read as `other` says serve where this is wanted:
        /// the same directory, version and field sources, and every payload
        /// key wanted kept (an index may keep more).
        func accepts(_ other: Identity) -> Rejection? {
            guard other.device == device, other.inode == inode else {
                return .foreign("it describes \(other.backingPath) (device \(other.device), inode \(other.inode)), not this directory")
            }
            guard other.version == version else { return .outdated("written by queryfs \(other.version), this is \(version)") }
            var mine = sources, theirs = other.sources
            mine.extraKeyPaths = []
            theirs.extraKeyPaths = []
            guard mine == theirs, other.payloadLimit == payloadLimit else { return .outdated("the field sources have changed") }
            let missing = sources.extraKeyPaths.subtracting(other.sources.extraKeyPaths)
            guard missing.isEmpty else { return .outdated("it keeps no \(missing.sorted().joined(separator: ", "))") }
            return nil
        }

        fileprivate func encode(into writer: inout IndexWriter) {
            writer.string(version)
            writer.string(backingPath)
            writer.integer(device)
            writer.integer(inode)
            for list in [sources.title, sources.archived, sources.tags, sources.url, sources.extraKeyPaths.sorted(), sources.created, sources.payloadNames,
                         sources.sidecars.kinds.map(\.rawValue)] {
                writer.integer(list.count)
                for key in list { writer.string(key) }
            }
            writer.integer(payloadLimit)
            writer.integer(sources.conflicts.markers.count)
            for marker in sources.conflicts.markers { writer.string(marker) }
            writer.byte((sources.conflicts.numberedCopies ? 1 : 0) | (sources.conflicts.gitMarkers ? 2 : 0) | (sources.recursive ? 4 : 0)
                        | (sources.tagsMayBeText ? 8 : 0) | (sources.inlineTags ? 16 : 0))
            writer.integer(ignorePatterns.count)
            for pattern in ignorePatterns { writer.string(pattern) }
        }

        fileprivate static func decode(from reader: inout IndexReader) throws(IndexDecodingError) -> Identity {
            let version = try reader.string()
            let path = try reader.string()
            let device = try reader.integer()
            let inode = try reader.integer()
            var lists: [[String]] = []
            for _ in 0..<8 {
                var list: [String] = []
                for _ in 0..<(try reader.count()) { list.append(try reader.string()) }
                lists.append(list)
            }
            var sources = FieldSources()
            (sources.title, sources.archived, sources.tags, sources.url) = (lists[0], lists[1], lists[2], lists[3])
            sources.extraKeyPaths = Set(lists[4])
            (sources.created, sources.payloadNames) = (lists[5], lists[6])
            sources.sidecars = Sidecars(try lists[7].map { (name) throws(IndexDecodingError) in
                guard let kind = SidecarKind(rawValue: name) else { throw IndexDecodingError("a sidecar kind '\(name)'") }
                return kind
            })
            let payloadLimit = try reader.int()
            var markers: [String] = []
            for _ in 0..<(try reader.count()) { markers.append(try reader.string()) }
            let flags = try reader.byte()
            sources.conflicts.markers = markers
            sources.conflicts.numberedCopies = flags & 1 != 0
            sources.conflicts.gitMarkers = flags & 2 != 0
            sources.recursive = flags & 4 != 0
            sources.tagsMayBeText = flags & 8 != 0
            sources.inlineTags = flags & 16 != 0
            var identity = Identity(backingPath: path, device: device, inode: inode, sources: sources,
                                    payloadLimit: payloadLimit, version: version)
            for _ in 0..<(try reader.count()) { identity.ignorePatterns.append(try reader.string()) }
            return identity
        }
    }

    /// Why an index file was not used.
    enum Rejection: Error, CustomStringConvertible, Equatable {
        case missing
        case unreadable(String)
        case corrupt(String)
        case foreign(String)
        case outdated(String)

        var description: String {
            switch self {
            case .missing: "there is none yet"
            case .unreadable(let why): "it cannot be read: \(why)"
            case .corrupt(let why): "it is corrupt (\(why))"
            case .foreign(let why): "it is not this directory's (\(why))"
            case .outdated(let why): "it is outdated (\(why))"
            }
        }
    }

    /// One change appended to the journal.
    enum Record {
        case upsert(IndexedItem)
        case remove(ItemName)

        func encode(into writer: inout IndexWriter) {
            switch self {
            case .upsert(let indexed):
                writer.byte(1)
                indexed.encode(into: &writer)
            case .remove(let name):
                writer.byte(2)
                writer.data(name.bytes)
            }
        }
    }

    /// An index as read: its items, and what the file said about them.
    struct Contents {
        var identity: Identity
        /// In no particular order; each with the stamp it was read at, and
        /// a serial unique among them (`ItemRecord.serial`: its position
        /// in the snapshot plus one, or past them for a journal's new item).
        var items: [ItemRecord]
        var bodyBytes: Int
        var journalBytes: Int
        /// A record was torn or failed its checksum (the writer died mid-write).
        var tornJournal: Bool
        /// The views' orders as of the snapshot, positions into `items`;
        /// empty once a journal record was replayed (they no longer hold).
        var viewOrders = StoredViewOrders()

        /// The items by name (for comparing with BACKING's listing).
        func byName() -> [ItemName: ItemRecord] {
            var byName: [ItemName: ItemRecord] = [:]
            byName.reserveCapacity(items.count)
            for item in items { byName[item.name] = item }
            return byName
        }
    }

    // MARK: Writing

    /// The whole file for `items`, with the views' orders as positions into them.
    static func snapshot(_ items: some Collection<IndexedItem>, identity: Identity,
                         viewOrders: StoredViewOrders = StoredViewOrders()) -> [UInt8]
    {
        var body = IndexWriter(capacity: items.count * 200)
        var offsets = IndexWriter(capacity: items.count * 8)
        for item in items {
            offsets.fixed64(UInt64(body.bytes.count))
            item.encode(into: &body)
        }
        let ordersOffset = body.bytes.count
        viewOrders.encode(into: &body)
        let offsetsOffset = body.bytes.count
        body.append(offsets.bytes)
        var header = IndexWriter()
        header.integer(formatVersion)
        identity.encode(into: &header)
        header.integer(items.count)
        header.fixed64(UInt64(body.bytes.count))
        header.fixed64(IndexChecksum.of(body.bytes))
        header.integer(ordersOffset)
        header.integer(offsetsOffset)
        var file = IndexWriter(capacity: 24 + header.bytes.count + body.bytes.count)
        file.append(magic)
        file.fixed64(UInt64(header.bytes.count))
        file.fixed64(IndexChecksum.of(header.bytes))
        file.append(header.bytes)
        file.append(body.bytes)
        return file.bytes
    }

    /// The bytes that append `records` to the journal, each checked on its own.
    static func journal(_ records: [Record]) -> [UInt8] {
        var out = IndexWriter()
        for record in records {
            var payload = IndexWriter()
            record.encode(into: &payload)
            out.fixed64(UInt64(payload.bytes.count))
            out.fixed64(IndexChecksum.of(payload.bytes))
            out.append(payload.bytes)
        }
        return out.bytes
    }

    /// Whether the file at `path` may be replaced or removed: absent, empty,
    /// or an index (a mistyped `--index ~/notes.txt` must not cost the notes).
    static func mayReplace(_ path: String) -> Bool { refusalToReplace(path) == nil }

    /// Why the file at `path` may not be replaced (nil: it may), said as
    /// what it is: a mount told "not an index file" of a dangling link and
    /// of a folder that did not exist (found from outside).
    static func refusalToReplace(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: return "is a symbolic link"
            default: return "cannot be opened: " + String(cString: strerror(errno))
            }
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return "cannot be read: " + String(cString: strerror(errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { return "is not a regular file" }
        guard status.st_uid == geteuid() else { return "belongs to user \(status.st_uid)" }
        var head = [UInt8](repeating: 0, count: magic.count)
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return got == 0 || got == magic.count && head == magic ? nil : "is not an index file (nor empty)"
    }

    /// Replaces the file at `location` whole (a reader sees the old file or
    /// the new one), readable by its owner alone: titles are private.
    static func replace(at location: IndexLocation, with bytes: [UInt8]) throws(SystemError) {
        let path = location.path
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let folder = path[..<slash].isEmpty ? "/" : String(path[..<slash])
        let name = Array(path[path.index(after: slash)...].utf8)
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirfd >= 0 else { throw SystemError.current("open", path: folder) }
        defer { close(dirfd) }
        try AtomicFile.replace(name, in: dirfd, with: bytes, ownerOnly: true)
    }

    // MARK: Reading

    /// Reads the index at `path`; `wanted` says which directory and sources it must describe.
    static func read(path: String, wanted: Identity) -> Result<Contents, Rejection> {
        let bytes: [UInt8]
        switch readWhole(path) {
        case .success(let read): bytes = read
        case .failure(let rejection): return .failure(rejection)
        }
        // An empty file is one an index is yet to be written into, not a corrupt one (it was called that).
        if bytes.isEmpty { return .failure(.missing) }
        let decoded: Result<Contents, IndexDecodingError> = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(IndexDecodingError) in try decode(buffer) }
        }
        switch decoded {
        case .failure(let error): return .failure(error.isOtherFormat ? .outdated(error.description) : .corrupt(error.description))
        case .success(let contents):
            if let rejection = wanted.accepts(contents.identity) { return .failure(rejection) }
            return .success(contents)
        }
    }

    /// The parts of an index file, checked: the header decoded and the
    /// body's bounds, its sections' offsets and (unless `checkingSums` is
    /// false) both checksums verified.
    struct Layout {
        var identity: Identity
        var itemCount: Int
        var body: UnsafeBufferPointer<UInt8>
        /// Where the views' orders and the item offsets begin, from the body's start.
        var ordersOffset: Int
        var offsetsOffset: Int
        /// Where the journal begins, from the file's start.
        var bodyEnd: Int

        init(_ buffer: UnsafeBufferPointer<UInt8>, checkingSums: Bool) throws(IndexDecodingError) {
            guard buffer.count >= magic.count + 16, Array(buffer.prefix(magic.count)) == magic else {
                throw IndexDecodingError("not a queryfs index")
            }
            var reader = IndexReader(buffer, offset: magic.count)
            let headerLength = try reader.fixed64()
            let headerChecksum = try reader.fixed64()
            guard headerLength <= UInt64(reader.remaining) else { throw IndexDecodingError("the header runs past the end") }
            let headerStart = reader.offset
            let headerBytes = UnsafeBufferPointer(rebasing: buffer[headerStart..<headerStart + Int(headerLength)])
            guard !checkingSums || IndexChecksum.of(headerBytes) == headerChecksum else { throw IndexDecodingError("the header's checksum does not match") }
            var header = IndexReader(headerBytes)
            let version = try header.integer()
            guard version == formatVersion else { throw IndexDecodingError("written in format \(version), this is \(formatVersion)", isOtherFormat: true) }
            identity = try Identity.decode(from: &header)
            let itemCount = try header.integer()
            let bodyLength = try header.fixed64()
            let bodyChecksum = try header.fixed64()
            let ordersOffset = try header.integer()
            let offsetsOffset = try header.integer()
            let bodyStart = headerStart + Int(headerLength)
            // Each item takes at least one byte, and eight in the offsets.
            guard bodyLength <= UInt64(buffer.count - bodyStart), itemCount <= bodyLength / 9,
                  ordersOffset <= offsetsOffset, offsetsOffset <= bodyLength, bodyLength - offsetsOffset == itemCount * 8
            else {
                throw IndexDecodingError("the body runs past the end, or its sections do not fit it")
            }
            bodyEnd = bodyStart + Int(bodyLength)
            body = UnsafeBufferPointer(rebasing: buffer[bodyStart..<bodyEnd])
            guard !checkingSums || IndexChecksum.of(body) == bodyChecksum else { throw IndexDecodingError("the items' checksum does not match") }
            self.itemCount = Int(itemCount)
            self.ordersOffset = Int(ordersOffset)
            self.offsetsOffset = Int(offsetsOffset)
        }

        /// Where item `position` begins in the body, checked to lie before the orders.
        func offset(ofItem position: Int) throws(IndexDecodingError) -> Int {
            let raw = UnsafeRawBufferPointer(body)
            let offset = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offsetsOffset + position * 8, as: UInt64.self))
            guard offset < UInt64(ordersOffset) else { throw IndexDecodingError("item \(position) begins past the items") }
            return Int(offset)
        }

        /// The snapshot's items at `positions`, in that order.
        func items(at positions: [UInt32]) throws(IndexDecodingError) -> [Item] {
            var items: [Item] = []
            items.reserveCapacity(positions.count)
            let itemBytes = UnsafeBufferPointer(rebasing: body[..<ordersOffset])
            for position in positions {
                var reader = IndexReader(itemBytes, offset: try offset(ofItem: Int(position)))
                items.append(try IndexedFields.decode(from: &reader).item)
            }
            return items
        }

        /// Every item as a record (`ItemRecord.make(indexed:serial:)`,
        /// serials 1, 2, … in order), in the snapshot's order, decoded on every core in
        /// runs of `decodingRun` items. Each run starts where the offsets
        /// say its first item does and must end where the next run's first
        /// begins (the last: exactly at the orders), so the items still tile
        /// the section with no gap or overlap, as one sequential pass checked.
        /// Each run decodes into its own slots of the result: gathering runs'
        /// arrays into one copied every item again (a retain and a release
        /// for each of its strings and arrays).
        /// Why: decoding 100,000 items was 0.2 s of a trusted start on one
        /// core, the largest piece of it.
        func allItems() throws(IndexDecodingError) -> [ItemRecord] {
            guard itemCount > 0 else {
                // An empty collection's index: no buffer to fill (its base address may be nil).
                guard ordersOffset == 0 else { throw IndexDecodingError("bytes left after the items") }
                return []
            }
            let itemBytes = UnsafeBufferPointer(rebasing: body[..<ordersOffset])
            let runs = stride(from: 0, to: itemCount, by: Self.decodingRun).map { $0..<Swift.min($0 + Self.decodingRun, itemCount) }
            var failure: IndexDecodingError?
            let items = [ItemRecord](unsafeUninitializedCapacity: itemCount) { buffer, initialized in
                let output = buffer.baseAddress!
                // Each run says how many of its slots it filled, and why it stopped short.
                let outcomes = parallelMap(runs, threads: Scanner.defaultThreads, minimumCount: 2) { run -> (filled: Int, error: IndexDecodingError?) in
                    var filled = 0
                    do throws(IndexDecodingError) {
                        var reader = IndexReader(itemBytes, offset: run.lowerBound == 0 ? 0 : try offset(ofItem: run.lowerBound))
                        for position in run {
                            // The offsets a view is read by must be where the items are.
                            guard try offset(ofItem: position) == reader.offset else { throw IndexDecodingError("item \(position) is not where the offsets say") }
                            let fields = try IndexedFields.decode(from: &reader)
                            (output + position).initialize(to: ItemRecord.make(indexed: fields, serial: ItemRecord.serial(ofPosition: position)))
                            filled += 1
                        }
                        let end = run.upperBound == itemCount ? ordersOffset : try offset(ofItem: run.upperBound)
                        guard reader.offset == end else {
                            throw IndexDecodingError(run.upperBound == itemCount ? "bytes left after the items" : "item \(run.upperBound) is not where the offsets say")
                        }
                        return (filled, nil)
                    } catch {
                        return (filled, error)
                    }
                }
                if let first = outcomes.lazy.compactMap(\.error).first {
                    for (run, outcome) in zip(runs, outcomes) { (output + run.lowerBound).deinitialize(count: outcome.filled) }
                    initialized = 0
                    failure = first
                    return
                }
                initialized = itemCount
            }
            if let failure { throw failure }
            return items
        }

        /// Items per run of `allItems` (small enough to share out evenly, large enough that handing one out costs nothing).
        static let decodingRun = 4_096

        /// Every snapshot item's name and stamp, nothing else decoded (the
        /// freshness check of a stored view: 100,000 names, not 100,000 items).
        func stamps() throws(IndexDecodingError) -> [ItemName: UInt64] {
            var stamps: [ItemName: UInt64] = [:]
            stamps.reserveCapacity(itemCount)
            let itemBytes = UnsafeBufferPointer(rebasing: body[..<ordersOffset])
            for position in 0..<itemCount {
                var reader = IndexReader(itemBytes, offset: try offset(ofItem: position))
                let (name, stamp) = try IndexedItem.decodeNameAndStamp(from: &reader)
                stamps[name] = stamp
            }
            return stamps
        }

        func viewOrders() throws(IndexDecodingError) -> StoredViewOrders {
            var reader = IndexReader(UnsafeBufferPointer(rebasing: body[..<offsetsOffset]), offset: ordersOffset)
            let orders = try StoredViewOrders.decode(from: &reader, itemCount: itemCount)
            guard reader.isAtEnd else { throw IndexDecodingError("bytes left after the views' orders") }
            return orders
        }
    }

    /// What vouches that a stored view still describes BACKING.
    enum ViewFreshness {
        /// The caller trusts the index (`--trust-index`, or a mount keeps it current).
        case trusted
        /// `check` is given every indexed item's name and stamp, and says
        /// whether BACKING holds exactly those items, each unchanged.
        case checked((_ stamps: [ItemName: UInt64]) -> Bool)
    }

    /// The items of one stored view of the index at `path`, in the view's
    /// order, decoding those items alone (`ls tag/Work --trust-index` at
    /// 100,000 items: the tag's 11,702). nil when the file cannot answer so —
    /// it is unusable (the full read then says why), a journal follows its
    /// snapshot (the stored orders no longer hold), the view was not
    /// stored, or `freshness` finds BACKING changed — and the caller reads
    /// the whole index as before. The file's identity is checked before
    /// `freshness` is asked, so a foreign index costs no walk of BACKING.
    static func readView(path: String, wanted: Identity, view: StoredViewOrders.Key,
                         freshness: ViewFreshness = .trusted) -> [Item]? {
        guard case .success(let bytes) = readWhole(path) else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let layout = try? Layout(buffer, checkingSums: true), layout.bodyEnd == buffer.count,
                  // Stored under other ignore patterns, the view may hold items these leave out.
                  wanted.accepts(layout.identity) == nil, layout.identity.ignorePatterns == wanted.ignorePatterns,
                  let positions = try? layout.viewOrders().positions(of: view)
            else { return nil }
            if case .checked(let check) = freshness {
                guard let stamps = try? layout.stamps(), check(stamps) else { return nil }
            }
            return try? layout.items(at: positions)
        }
    }

    /// The identity of the index in `buffer` and the items of its stored
    /// `view`, decoded through the item offsets: nil members when a journal
    /// follows the snapshot or the view was not stored.
    static func decodeView(_ view: StoredViewOrders.Key, in buffer: UnsafeBufferPointer<UInt8>,
                           checkingSums: Bool = true) throws(IndexDecodingError) -> (Identity, [Item]?)
    {
        let layout = try Layout(buffer, checkingSums: checkingSums)
        guard layout.bodyEnd == buffer.count, let positions = try layout.viewOrders().positions(of: view) else { return (layout.identity, nil) }
        return (layout.identity, try layout.items(at: positions))
    }

    /// `checkingSums` false: for the fuzzer, which could not otherwise get
    /// past a checksum to the decoding behind it.
    static func decode(_ buffer: UnsafeBufferPointer<UInt8>, checkingSums: Bool = true) throws(IndexDecodingError) -> Contents {
        let layout = try Layout(buffer, checkingSums: checkingSums)
        let (identity, body, bodyEnd) = (layout.identity, layout.body, layout.bodyEnd)
        var items = try layout.allItems()
        var viewOrders = try layout.viewOrders()
        // The journal: replayed up to its first torn record, by name (the
        // table is made only when there is a journal to replay).
        var journal = IndexReader(buffer, offset: bodyEnd)
        var position: [ItemName: Int] = [:]
        if !journal.isAtEnd {
            position.reserveCapacity(items.count)
            for (index, item) in items.enumerated() { position[item.name] = index }
        }
        // Removed items' slots, swept below: removing from the middle would move every later item.
        var removedSlots: [Int] = []
        var replayed = 0
        var torn = false
        while !journal.isAtEnd {
            guard let length = try? journal.fixed64(), let checksum = try? journal.fixed64(),
                  length <= UInt64(journal.remaining)
            else {
                torn = true
                break
            }
            let start = journal.offset
            let payload = UnsafeBufferPointer(rebasing: buffer[start..<start + Int(length)])
            guard !checkingSums || IndexChecksum.of(payload) == checksum else {
                torn = true
                break
            }
            journal.skip(Int(length))
            replayed += 1
            var record = IndexReader(payload)
            switch try record.byte() {
            case 1:
                // A slot's serial is its own: an item replaced in it keeps the serial, a new one takes the next slot's.
                let fields = try IndexedFields.decode(from: &record)
                let name = ItemName(Array(fields.name))
                if let at = position[name] {
                    items[at] = ItemRecord.make(indexed: fields, serial: ItemRecord.serial(ofPosition: at))
                } else {
                    position[name] = items.count
                    items.append(ItemRecord.make(indexed: fields, serial: ItemRecord.serial(ofPosition: items.count)))
                }
            case 2:
                if let at = position.removeValue(forKey: ItemName(try record.data())) { removedSlots.append(at) }
            case let kind: throw IndexDecodingError("a journal record of unknown kind \(kind)")
            }
        }
        if !removedSlots.isEmpty {
            var kept = [Bool](repeating: true, count: items.count)
            for slot in removedSlots { kept[slot] = false }
            items = items.indices.filter { kept[$0] }.map { items[$0] }
        }
        if replayed > 0 || torn { viewOrders = StoredViewOrders() }
        return Contents(identity: identity, items: items, bodyBytes: body.count,
                        journalBytes: buffer.count - bodyEnd, tornJournal: torn, viewOrders: viewOrders)
    }

    /// The file's bytes: a regular file of this user's (opened without
    /// blocking or following a link, as payloads are: a FIFO planted there
    /// must not hang the mount).
    private static func readWhole(_ path: String) -> Result<[UInt8], Rejection> {
        var otherOwner: uid_t?
        let read: Result<[UInt8], SystemError> = path.withCString { cPath in
            Result { () throws(SystemError) in
                try DirectoryReader.readFile(cPath, in: AT_FDCWD, expectedSize: 0, limit: 1 << 40) { status in
                    guard status.st_uid != geteuid() else { return nil }
                    otherOwner = status.st_uid
                    return SystemError(errno: EPERM, operation: "open")
                }
            }
        }
        switch read {
        case .success(let bytes): return .success(bytes)
        case .failure(let error):
            if let otherOwner { return .failure(.foreign("it belongs to user \(otherOwner), not to this one")) }
            return .failure(error.errno == ENOENT ? .missing : .unreadable(error.message))
        }
    }
}
