#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Dispatch
import QueryFSEngine

/// Reads items from a backing directory (SPEC §1) with plain system calls:
/// per item one statx, and for a bundle a walk of its tree (statx each
/// entry) plus one read of its payload. Nothing else is read.
package struct Scanner: Sendable {
    package var sources: FieldSources {
        // A reloaded configuration sets new sources: the scan must use them.
        didSet { paths = sources.splitPaths }
    }
    private(set) var paths: FieldSources.SplitPaths
    /// Largest payload read; a larger one is reported and ignored.
    package var payloadLimit = 16 << 20
    /// Deepest folder level walked inside a bundle.
    static let maximumBundleDepth = 64

    /// Read each item only under its shared lock (SPEC §5): an item whose
    /// lock a writer holds is reported as `.locked` instead of half-read.
    package var respectsLocks = false

    package init(sources: FieldSources = FieldSources()) {
        self.sources = sources
        self.paths = sources.splitPaths
    }

    /// Every item of the directory at `path`. Items are read in parallel on
    /// `threads` threads; their order in the result is unspecified.
    package func scan(directory path: String, threads: Int = Scanner.readingThreads) throws(SystemError) -> [Item] {
        let root = try BackingDirectory(path: path, readingAs: sources)
        return try scan(root, threads: threads)
    }

    package func scan(_ root: BackingDirectory, threads: Int = Scanner.readingThreads) throws(SystemError) -> [Item] {
        let names = try root.itemNames()
        // Vanished entries leave a nameless placeholder, removed in place: no
        // second array of 100,000 items at the peak.
        return readAll(names, in: root.fd, threads: threads).compactMap { if case .item(let item) = $0.scan { item } else { nil } }
    }

    /// Reads every item of `names` (a listing's: those of one folder next to
    /// each other) on `threads` threads, in order. The names of a folder are
    /// read from its descriptor, opened beneath BACKING once per run of names
    /// rather than once per item (`withParent`): at 100,000 notes in 1,000
    /// folders that is 1,000 openat2 calls, not 100,000. `progress` is told
    /// each name read (from the reading threads).
    package func readAll(_ names: [ItemName], in rootFD: Int32, threads: Int = Scanner.readingThreads,
                         progress: (@Sendable () -> Void)? = nil) -> [ItemRead] {
        Self.mapByFolder(names, in: rootFD, threads: threads) { name, leaf, folderFD in
            defer { progress?() }
            // A folder gone or no folder now: each name says so on its own.
            guard let folderFD else { return read(named: name, in: rootFD) }
            return read(name, raw: readItem(leaf, in: folderFD, tooDeep: Self.isTooDeep(name)))
        }
    }

    /// `body` for each of `names` (a listing's: those of one folder next to
    /// each other) on `threads` threads, in order, given the name's last
    /// component and the descriptor of its folder (nil when that folder
    /// cannot be opened). The folder is opened beneath BACKING once per run
    /// of names rather than once per item (`BackingDirectory.withParent`):
    /// at 100,000 notes in 1,000 folders that is 1,000 openat2 calls, not
    /// 100,000 — and no close per item.
    static func mapByFolder<R>(_ names: [ItemName], in rootFD: Int32, threads: Int,
                               _ body: (ItemName, UnsafePointer<CChar>, Int32?) -> R) -> [R] {
        // Runs of one folder, cut at 256 names so that a flat collection still spreads over every thread.
        var runs: [Range<Int>] = []
        var start = 0
        for index in names.indices where index > start {
            let a = names[start], b = names[index]
            if index - start >= 256 || !a.bytes[..<a.lastComponentStart].elementsEqual(b.bytes[..<b.lastComponentStart]) {
                runs.append(start..<index)
                start = index
            }
        }
        if start < names.count { runs.append(start..<names.count) }
        let results = parallelMap(runs, threads: threads, minimumCount: 2) { run -> [R] in
            let folderStart = names[run.lowerBound].lastComponentStart
            let folderFD = folderStart == 0 ? rootFD
                : Array(names[run.lowerBound].bytes[..<(folderStart - 1)]).withCString { qfs_open_beneath(rootFD, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            defer { if folderFD >= 0 && folderFD != rootFD { close(folderFD) } }
            return run.map { index in
                let name = names[index]
                return Array(name.bytes[folderStart...]).withCString { body(name, $0, folderFD >= 0 ? folderFD : nil) }
            }
        }
        return results.flatMap { $0 }
    }

    /// Threads for work that only computes: one per core, at most 8.
    package static var defaultThreads: Int { max(1, min(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 8)) }

    /// Threads for work that reads the disk (scans, stamp walks, rereads):
    /// at least 8 whatever the cores, since a cold read mostly waits. At
    /// 100,000 notes with the page cache dropped, on 2 cores: `queryfs ls
    /// --no-index` 7.8 s on 2 threads, 6.9 s on 8; warm 2.3–2.6 s and
    /// 2.1–2.5 s; the daemon's RSS after the same scan 60.5 MB either way.
    package static var readingThreads: Int { max(8, defaultThreads) }

    /// The outcome of reading one item.
    package enum ItemScan: Sendable {
        case item(Item)
        case gone
        /// A writer holds the item's exclusive lock (only with `respectsLocks`).
        case locked
        /// In a recursive collection, a folder of items rather than an item
        /// (a folder without a payload file): its items are read on their own.
        case folder
    }

    /// Re-reads one item; nil when it no longer exists (or became hidden).
    /// With `respectsLocks`, a locked item reads as nil too: use `readItem(named:in:)`.
    package func scanItem(named name: ItemName, in rootFD: Int32) -> Item? {
        if case .item(let item) = scan(named: name, in: rootFD) { return item }
        return nil
    }

    /// Reads one item, telling a vanished item from a locked one.
    package func scan(named name: ItemName, in rootFD: Int32) -> ItemScan {
        read(named: name, in: rootFD).scan
    }

    /// One item read, with what watching and polling it needs.
    package struct ItemRead: Sendable {
        package var scan: ItemScan
        /// The folders inside a bundle, relative to it (the watcher watches
        /// them without listing the bundle again).
        package var directories: [[UInt8]] = []
        /// The item's stamp as this read saw it (nil when it is gone or locked).
        package var stamp: ItemStamp?
        /// When the read started, in nanoseconds since 1970.
        package var started: Int64 = 0

        /// The stamp an index may keep for what this read saw (0: none).
        package var settledStamp: UInt64 { stamp?.settledValue(readStart: started) ?? 0 }
    }

    /// Reads one item, with its folders and stamp.
    package func read(named name: ItemName, in rootFD: Int32) -> ItemRead {
        guard !name.isHidden else { return ItemRead(scan: .gone) }
        return read(name, raw: readItem(named: name, in: rootFD))
    }

    private func read(_ name: ItemName, raw: @autoclosure () -> RawItem) -> ItemRead {
        guard !name.isHidden else { return ItemRead(scan: .gone) }
        let started = realtimeNanoseconds()
        let raw = raw()
        switch raw {
        case .bundle(_, let walk):
            return ItemRead(scan: itemScan(name, raw), directories: walk.subdirectories, stamp: walk.stamp, started: started)
        case .file(let status, _, _, let sidecar):
            var stamp = ItemStamp()
            stamp.add(name: [], status: status)
            if let sidecar, case .success(let (_, sidecarStatus)) = sidecar.contents { stamp.add(name: sidecar.name, status: sidecarStatus) }
            return ItemRead(scan: itemScan(name, raw), stamp: stamp, started: started)
        default: return ItemRead(scan: itemScan(name, raw))
        }
    }

    /// The stamp of an item from stats alone (no payload, no lock, no
    /// attribute read), nil when it is gone: what polling costs per item.
    package func stamp(named name: ItemName, in rootFD: Int32) -> ItemStamp? {
        try? BackingDirectory.withParent(of: name, in: rootFD) { parentFD, cName -> ItemStamp? in
            stamp(of: cName, in: parentFD)
        } ?? nil
    }

    /// Whether the entry `cName` of the folder `parentFD` still has the
    /// stamp `indexed` (an index's value, never 0), found as cheaply as the
    /// bundle allows. A bundle that held only its payload when it was
    /// indexed — nearly every one — is stamped from two stats (the folder and
    /// the payload, by name), not by opening and listing the folder: any
    /// name made, removed or renamed in it moves the folder's own times, so
    /// the two give the listing's stamp as long as the payload is all there
    /// is. Otherwise they differ from it, and the folder is listed as
    /// `stamp(of:in:)` does. `queryfs ls` of 100,000 bundles, unchanged:
    /// 9 system calls a bundle down to 2 (Benchmarks/RESULTS.md, stop 49).
    func hasStamp(_ indexed: UInt64, _ cName: UnsafePointer<CChar>, in parentFD: Int32) -> Bool {
        guard let status = try? FileStatus(cName, in: parentFD) else { return false }
        func matches(_ stamp: ItemStamp) -> Bool { (stamp.value == 0 ? 1 : stamp.value) == indexed }
        if status.isDirectory {
            var quick = ItemStamp()
            quick.add(name: [], status: status)
            let folder = Self.bytes(of: cName)
            for fileName in sources.payloadNames {
                let path = folder + [UInt8(ascii: "/")] + Array(fileName.utf8)
                guard let payload = path.withCString({ try? FileStatus($0, in: parentFD) }) else { continue }
                quick.add(name: Array(fileName.utf8), status: payload)
                if matches(quick) { return true }
                break
            }
        }
        return stamp(of: cName, in: parentFD, status: status).map(matches) ?? false
    }

    /// The stamp of the entry `cName` of the folder `parentFD` (see `stamp(named:in:)`).
    func stamp(of cName: UnsafePointer<CChar>, in parentFD: Int32) -> ItemStamp? {
        guard let status = try? FileStatus(cName, in: parentFD) else { return nil }
        return stamp(of: cName, in: parentFD, status: status)
    }

    /// `stamp(of:in:)` with the entry's own status read already.
    private func stamp(of cName: UnsafePointer<CChar>, in parentFD: Int32, status: FileStatus) -> ItemStamp? {
        guard status.isDirectory else {
            var stamp = ItemStamp()
            stamp.add(name: [], status: status)
            // A sidecar edited moves the file's stamp: polling reads it again.
            for (_, candidate) in sources.sidecars.candidates(for: Self.bytes(of: cName)) {
                if let sidecar = candidate.withCString({ try? FileStatus($0, in: parentFD) }) { stamp.add(name: candidate, status: sidecar) }
            }
            return stamp
        }
        var walk = BundleWalk(modified: status.modified, scanner: self, statsOnly: true)
        walk.stamp.add(name: [], status: status)
        walk.walkBundle(cName, in: parentFD)
        return walk.stamp
    }

    /// What a quick polling round compares (nil when the item is gone): a
    /// bundle's payload, a plain file itself — one stat (two for a bundle
    /// whose payload is JSON), no listing: over a network filesystem each
    /// stat is a round trip, and a round of 100,000 items must stay cheap.
    /// It moves when a payload is saved, by rename or in place; items made,
    /// removed or renamed show in BACKING's listing; other files inside a
    /// bundle and attribute tags on its folder wait for the full round.
    package func quickStamp(named name: ItemName, in rootFD: Int32) -> ItemStamp? {
        var stamp = ItemStamp()
        for fileName in sources.payloadNames {
            let path = name.bytes + [UInt8(ascii: "/")] + Array(fileName.utf8)
            guard let payload = path.withCString({ try? FileStatus($0, in: rootFD) }) else { continue }
            stamp.add(name: Array(fileName.utf8), status: payload)
            return stamp
        }
        // No payload: a plain file, a bundle without one, or gone.
        guard let status = name.bytes.withCString({ try? FileStatus($0, in: rootFD) }) else { return nil }
        stamp.add(name: [], status: status)
        return stamp
    }

    private func itemScan(_ name: ItemName, _ raw: RawItem) -> ItemScan {
        switch raw {
        case .vanished:
            return .gone
        case .locked:
            return .locked
        case .folder:
            return .folder
        case .unreadable(let error):
            return .item(Item(name: name, kind: .file, problems: ["cannot \(error.operation): \(error.message)"]))
        case .file(let status, let attribute, nil, let sidecar?):
            return .item(sidecarItem(name, status: status, attribute: attribute, sidecar: sidecar))
        case .file(let status, let attribute, nil, nil):
            let (tags, tagProblem) = TagLimit.capped(attribute.tags)
            return .item(Item(name: name, kind: .file, tags: tags, modified: status.modified, created: status.created, size: status.size,
                              problems: [attribute.problem, tagProblem].compactMap { $0 }).withConflict(conflict(of: name, markers: false)))
        case .file(let status, let attribute, let head?, _):
            // A note: its fields from its front matter (and first heading), its tags
            // merged with the attribute's, as a bundle's payload tags are.
            var problems = [attribute.problem].compactMap { $0 }
            var note = FrontMatter.Parsed()
            switch head {
            case .success(let bytes): note = FrontMatter.parse(bytes, inlineTags: sources.inlineTags)
            case .failure(let error): problems.append("cannot read: \(error.message)")
            }
            let fields = note.payload.isEmpty ? PayloadFields() : PayloadFields(payload: .dictionary(note.payload), paths: paths)
            problems += note.problems + fields.problems.map { "front matter: \($0)" }
            let (tags, tagProblem) = TagLimit.capped(ExtendedAttributeTags.merge(payload: fields.tags, attribute: attribute.tags))
            if let tagProblem { problems.append(tagProblem) }
            return .item(Item(name: name, kind: .file, title: fields.title, archived: fields.archived, tags: tags, url: fields.url,
                              modified: status.modified, created: fields.created ?? status.created, size: status.size, payloadValues: fields.payloadValues,
                              problems: problems).withConflict(conflict(of: name, markers: false)))
        case .bundle(let status, let walk):
            var fields = PayloadFields()
            var problems = walk.problems
            if let (fileName, bytes) = walk.payload {
                fields = decode(payloadBytes: bytes, fileName: fileName)
                problems += fields.problems.map { "\(fileName): \($0)" }
            } else if walk.problems.isEmpty {
                problems.append("no payload (\(sources.payloadNames.joined(separator: " or ")))")
            }
            let (tags, tagProblem) = TagLimit.capped(ExtendedAttributeTags.merge(payload: fields.tags, attribute: walk.attributeTags))
            if let tagProblem { problems.append(tagProblem) }
            let markers = walk.payload.map { sources.conflicts.hasGitMarkers($0.bytes) } ?? false
            return .item(Item(
                name: name, kind: .bundle, title: fields.title, archived: fields.archived,
                tags: tags,
                url: fields.url, modified: walk.modified, created: fields.created ?? status.created, size: walk.size,
                payloadValues: fields.payloadValues, problems: problems).withConflict(conflict(of: name, markers: markers)))
        }
    }

    /// A sync tool's copy by its name, else a payload with git markers;
    /// numbered copies need the other names (`ConflictPatterns.markNumberedCopies`).
    private func conflict(of name: ItemName, markers: Bool) -> (kind: ConflictKind, original: ItemName)? {
        if let original = sources.conflicts.originalOfSyncCopy(name) { return (.syncCopy, original) }
        return markers ? (.gitMarkers, name) : nil
    }

    /// The item a bundle holding only this payload reads as: its fields,
    /// and the problems the payload has (fuzzing and tools start here).
    package func item(named name: ItemName, payload bytes: [UInt8], fileName: String) -> Item {
        let fields = decode(payloadBytes: bytes, fileName: fileName)
        let (tags, tagProblem) = TagLimit.capped(fields.tags)
        return Item(name: name, kind: .bundle, title: fields.title, archived: fields.archived, tags: tags, url: fields.url,
                    size: UInt64(bytes.count), payloadValues: fields.payloadValues,
                    problems: fields.problems.map { "\(fileName): \($0)" } + [tagProblem].compactMap { $0 })
            .withConflict(conflict(of: name, markers: sources.conflicts.hasGitMarkers(bytes)))
    }

    /// The I/O floor of a scan: the same directory walked with the same
    /// statx/open/getdents/read calls, parsing nothing and building no items.
    /// Benchmarks compare `scan` against it. Returns how many items it saw.
    package func walkWithoutParsing(_ root: BackingDirectory, threads: Int = Scanner.readingThreads) throws(SystemError) -> Int {
        let names = try root.itemNames()
        return parallelMap(names, threads: threads) { name -> Bool in
            if case .vanished = readItem(named: name, in: root.fd) { return false }
            return true
        }.count { $0 }
    }

    /// What the file system says of one item, payload bytes included.
    enum RawItem {
        case vanished
        case locked
        case folder
        case unreadable(SystemError)
        /// `head`: the first bytes of a note (`FrontMatter.isNote`), nil for any other file;
        /// `sidecar`: the file's sidecar, when the collection reads them and it has one.
        case file(FileStatus, attributeTags: (tags: [String], problem: String?), head: Result<[UInt8], SystemError>?, sidecar: SidecarRead? = nil)
        case bundle(FileStatus, BundleWalk)
    }

    func readItem(named name: ItemName, in rootFD: Int32) -> RawItem {
        do {
            return try BackingDirectory.withParent(of: name, in: rootFD) { parentFD, cName in
                readItem(cName, in: parentFD, tooDeep: Self.isTooDeep(name))
            }
        } catch {
            // The folder it lay in is gone, or is no folder (a link now): so is the item.
            return [ENOENT, ENOTDIR, ELOOP, EXDEV].contains(error.errno) ? .vanished : .unreadable(error)
        }
    }

    /// Whether `name` is a folder too deep to be walked for items
    /// (`BackingDirectory.maximumFolderDepth`): a folder there is one item.
    static func isTooDeep(_ name: ItemName) -> Bool {
        name.bytes.lazy.filter { $0 == UInt8(ascii: "/") }.count >= BackingDirectory.maximumFolderDepth
    }

    /// Reads the entry `cName` of the folder `rootFD` (BACKING, or the folder a nested item lies in).
    /// `tooDeep`: a folder without a payload is one item all the same, with a
    /// problem that says why (found from outside: it and all it held vanished
    /// from every view, with nothing said).
    private func readItem(_ cName: UnsafePointer<CChar>, in rootFD: Int32, tooDeep: Bool) -> RawItem {
        do {
            let status: FileStatus
            do throws(SystemError) {
                status = try FileStatus(cName, in: rootFD)
            } catch {
                return error.errno == ENOENT ? .vanished : .unreadable(error)
            }
            guard status.isDirectory else {
                // Only regular files are opened to see their lock: opening a
                // device can act on it (a tape rewinds), and FIFOs hold no data.
                if respectsLocks, status.isRegularFile, Self.isLockedForReading(cName, in: rootFD) { return .locked }
                var attribute: (tags: [String], problem: String?)?
                let head = status.isRegularFile && FrontMatter.isNote(ItemName(Self.bytes(of: cName))) ? Result { () throws(SystemError) in
                    try DirectoryReader.readHead(cName, in: rootFD, count: FrontMatter.Limits.headBytes) { attribute = ExtendedAttributeTags.read(fd: $0) }
                } : nil
                let leaf = Self.bytes(of: cName)
                var sidecar: SidecarRead?
                if !sources.sidecars.isEmpty {
                    // A sidecar whose file is there is that file's metadata, not an item.
                    if sources.sidecars.isSidecarShaped(leaf), Self.hasOwner(leaf, in: rootFD, sidecars: sources.sidecars) { return .vanished }
                    if status.isRegularFile { sidecar = SidecarRead.find(for: leaf, in: rootFD, sidecars: sources.sidecars) }
                }
                return .file(status, attributeTags: attribute ?? ExtendedAttributeTags.read(fd: rootFD, name: cName), head: head, sidecar: sidecar)
            }
            let holdsPayload = BackingDirectory.holdsPayload(Self.bytes(of: cName), in: rootFD, names: sources.payloadNames)
            if sources.recursive, !tooDeep, !holdsPayload {
                // A folder this user cannot enter holds items no one can list: an
                // item of its own, so that its problem is reported rather than lost.
                guard faccessat(rootFD, cName, R_OK | X_OK, AT_EACCESS) == 0 else {
                    return .unreadable(SystemError.current("list this folder", path: String(decoding: Self.bytes(of: cName), as: UTF8.self)))
                }
                return .folder
            }
            var walk = BundleWalk(modified: status.modified, scanner: self)
            walk.stamp.add(name: [], status: status)
            walk.walkBundle(cName, in: rootFD)
            if sources.recursive, tooDeep, !holdsPayload {
                walk.problems.append("a folder \(BackingDirectory.maximumFolderDepth) folders deep: one item, the items in it not read")
            }
            return walk.locked ? .locked : .bundle(status, walk)
        }
    }

    /// A file with a sidecar: its fields from the sidecar, its tags merged with the attribute's.
    private func sidecarItem(_ name: ItemName, status: FileStatus, attribute: (tags: [String], problem: String?), sidecar: SidecarRead) -> Item {
        var problems = [attribute.problem].compactMap { $0 }
        var fields = PayloadFields()
        var modified = status.modified
        let shown = String(decoding: sidecar.name, as: UTF8.self)
        switch sidecar.contents {
        case .success(let (bytes, sidecarStatus)):
            if sidecarStatus.modified > modified { modified = sidecarStatus.modified }
            do throws(FrontMatterError) {
                fields = PayloadFields(payload: try sidecar.kind.read(bytes), paths: paths)
                problems += fields.problems.map { "\(shown): \($0)" }
            } catch {
                problems.append("\(shown): \(error.message); ignored")
            }
        case .failure(let error):
            problems.append("cannot read \(shown): \(error.message)")
        }
        let (tags, tagProblem) = TagLimit.capped(ExtendedAttributeTags.merge(payload: fields.tags, attribute: attribute.tags))
        if let tagProblem { problems.append(tagProblem) }
        return Item(name: name, kind: .file, title: fields.title, archived: fields.archived, tags: tags, url: fields.url,
                    modified: modified, created: fields.created ?? status.created, size: status.size, payloadValues: fields.payloadValues,
                    problems: problems).withConflict(conflict(of: name, markers: false))
    }

    /// Whether the folder `folderFD` holds a file the sidecar-shaped `name` belongs to (one listing).
    private static func hasOwner(_ name: [UInt8], in folderFD: Int32, sidecars: Sidecars) -> Bool {
        let copy = dup(folderFD)
        guard copy >= 0 else { return false }
        lseek(copy, 0, SEEK_SET)
        guard let entries = try? DirectoryReader.readEntries(consuming: copy) else { return false }
        return !sidecars.owners(of: name, among: Set(entries.map(\.name))).isEmpty
    }

    private static func bytes(of cName: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: cName, count: strlen(cName)).bindMemory(to: UInt8.self))
    }

    private func decode(payloadBytes: [UInt8], fileName: String) -> PayloadFields {
        do {
            let payload = try PayloadDecoder.decode(payloadBytes, fileName: fileName)
            return PayloadFields(payload: payload, paths: paths)
        } catch {
            var fields = PayloadFields()
            fields.problems.append("malformed: \(error)")
            return fields
        }
    }

    /// Whether a writer holds the exclusive lock of the plain file `name`.
    static func isLockedForReading(_ name: UnsafePointer<CChar>, in dirfd: Int32) -> Bool {
        let fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }
}

/// The walk of one bundle's tree: latest mtime, total size of regular files,
/// and the payload's bytes.
struct BundleWalk {
    var modified: Timestamp
    let scanner: Scanner
    var size: UInt64 = 0
    var payload: (fileName: String, bytes: [UInt8])?
    var problems: [String] = []
    /// The bundle's exclusive lock is held by a writer: nothing was read.
    var locked = false
    /// Tags from the bundle folder's `user.xdg.tags` attribute.
    var attributeTags: [String] = []
    /// Folders inside the bundle, as paths relative to it.
    var subdirectories: [[UInt8]] = []
    /// Every folder and file seen, for polling (`ItemStamp`).
    var stamp = ItemStamp()
    /// Only stat (the poller's walk): no lock, attribute or payload read.
    let statsOnly: Bool

    init(modified: Timestamp, scanner: Scanner, statsOnly: Bool = false) {
        self.modified = modified
        self.scanner = scanner
        self.statsOnly = statsOnly
    }

    mutating func walkBundle(_ name: UnsafePointer<CChar>, in parentFD: Int32) {
        walk(name, in: parentFD, depth: 0, path: [])
    }

    /// `path`: the folder's path inside the bundle, as bytes (names need not be UTF-8).
    private mutating func walk(_ name: UnsafePointer<CChar>, in parentFD: Int32, depth: Int, path: [UInt8]) {
        let shown = path.isEmpty ? "bundle" : String(decoding: path, as: UTF8.self)
        let openedFD = DirectoryReader.openDirectory(name, in: parentFD)
        guard openedFD >= 0, let stream = fdopendir(openedFD) else {
            let error = SystemError.current("open")
            if openedFD >= 0 { close(openedFD) }
            problems.append("cannot open \(shown): \(error.message)")
            return
        }
        defer { closedir(stream) }  // also drops the shared lock below
        let fd = dirfd(stream)
        // The bundle's lock is flock on the bundle directory itself: this very
        // descriptor. A writer holding it exclusively means: read nothing now.
        if depth == 0, !statsOnly, scanner.respectsLocks, flock(fd, LOCK_SH | LOCK_NB) != 0, errno == EWOULDBLOCK {
            locked = true
            return
        }
        if depth == 0, !statsOnly {
            let attribute = ExtendedAttributeTags.read(fd: fd)
            attributeTags = attribute.tags
            if let problem = attribute.problem { problems.append(problem) }
        }
        let entries: [DirectoryEntry]
        do {
            entries = try DirectoryReader.readEntries(stream)
        } catch {
            problems.append("cannot list \(shown): \(error.message)")
            return
        }
        var payloadCandidates: [(String, [UInt8], Int)] = []
        var deniedSaid = false
        for entry in entries {
            entry.name.withCString { cChild in
                let status: FileStatus
                do throws(SystemError) {
                    status = try FileStatus(cChild, in: fd)
                } catch {
                    // Gone meanwhile: nothing to say. A folder that may be read but
                    // not searched (no x) is said to be one, not to have no payload
                    // (found from outside).
                    if (error.errno == EACCES || error.errno == EPERM) && !deniedSaid {
                        problems.append("cannot look into \(shown): \(error.message)")
                        deniedSaid = true
                    }
                    return
                }
                let childPath = path.isEmpty ? entry.name : path + [UInt8(ascii: "/")] + entry.name
                stamp.add(name: childPath, status: status)
                if status.modified > modified { modified = status.modified }
                if status.isRegularFile {
                    size &+= status.size
                    if depth == 0, let fileName = scanner.sources.payloadNames.first(where: { Array($0.utf8) == entry.name }) {
                        payloadCandidates.append((fileName, entry.name, Int(clamping: status.size)))
                    }
                } else if status.isDirectory, depth + 1 < Scanner.maximumBundleDepth {
                    subdirectories.append(childPath)
                    walk(cChild, in: fd, depth: depth + 1, path: childPath)
                }
                // A payload's name on something else (a FIFO, a device, a folder, a link): said as that, not as
                // "no payload", which sent the user looking for a missing file (found from outside).
                if depth == 0, !statsOnly, !status.isRegularFile, let fileName = scanner.sources.payloadNames.first(where: { Array($0.utf8) == entry.name }) {
                    problems.append("\(fileName) is not a regular file (\(status.typeDescription)); ignored")
                }
            }
        }
        guard depth == 0, !statsOnly else { return }
        // payload.plist wins over payload.json when both exist.
        let preferred = payloadCandidates.min { a, b in
            scanner.sources.payloadNames.firstIndex(of: a.0)! < scanner.sources.payloadNames.firstIndex(of: b.0)!
        }
        if let (fileName, nameBytes, expectedSize) = preferred {
            if expectedSize > scanner.payloadLimit {
                problems.append("\(fileName) is larger than \(scanner.payloadLimit) bytes; ignored")
                return
            }
            let result = nameBytes.withCString { cName in
                Result { () throws(SystemError) in
                    try DirectoryReader.readFile(cName, in: fd, expectedSize: expectedSize, limit: scanner.payloadLimit)
                }
            }
            switch result {
            case .success(let bytes): payload = (fileName, bytes)
            case .failure(let error): problems.append("cannot read \(fileName): \(error.message)")
            }
        }
    }
}

fileprivate extension Item {
    /// The item marked as a conflict copy (`Scanner`'s name and payload tests).
    func withConflict(_ conflict: (kind: ConflictKind, original: ItemName)?) -> Item {
        var item = self
        item.setConflict(conflict?.kind, of: conflict?.original)
        return item
    }
}
