#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// The backing directory, held open: every later read is relative to this
/// descriptor, so the scan sees one directory even if its path is renamed.
package final class BackingDirectory: @unchecked Sendable {
    package let path: String
    package let fd: Int32
    /// Items at any depth (`recursive = true`): a folder is a bundle when it
    /// holds a payload file, else a folder of items, walked (`listing`).
    package let recursive: Bool
    /// The payload files that make a folder a bundle (`FieldSources.payloadNames`).
    package let payloadNames: [String]
    /// Sidecars of files: not items while their file is there.
    package let sidecars: Sidecars

    /// Deepest folder level walked for items (a recursive collection).
    package static let maximumFolderDepth = 32

    /// Opens `path`; fails with a clear error when it is missing, not a
    /// directory, or unreadable.
    package convenience init(path: String, readingAs sources: FieldSources) throws(SystemError) {
        try self.init(path: path, recursive: sources.recursive, payloadNames: sources.payloadNames, sidecars: sources.sidecars)
    }

    package init(path: String, recursive: Bool = false, payloadNames: [String] = FieldSources.defaultPayloadNames,
                 sidecars: Sidecars = Sidecars()) throws(SystemError) {
        self.path = path
        self.sidecars = sidecars
        self.recursive = recursive
        self.payloadNames = payloadNames
        let fd = retryingOnEINTR { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// What BACKING holds: its items, and in a recursive collection the
    /// folders walked to find them (each named by its path, as items are).
    package struct Listing: Sendable {
        package var items: [ItemName] = []
        package var folders: [ItemName] = []
    }

    /// Names of the items: every entry whose name does not start with `.`;
    /// in a recursive collection, at any depth.
    package func itemNames() throws(SystemError) -> [ItemName] {
        try listing().items
    }

    /// The items and folders under `folder` (nil: all of BACKING). A
    /// folder inside that cannot be listed is an item, so that its problem
    /// is reported against it rather than lost. Hidden names are skipped at
    /// every depth (`.obsidian/`, `.git/`, `.trash/`). Each folder is opened
    /// relative to its parent's descriptor without following a link, so a
    /// folder swapped for a link meanwhile never leads the walk outside.
    package func listing(under folder: ItemName? = nil) throws(SystemError) -> Listing {
        let start: Int32
        if let folder {
            start = folder.bytes.withCString { qfs_open_beneath(fd, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        } else {
            // A dup shares the file offset: rewind so each listing starts at the top.
            start = dup(fd)
            if start >= 0 { lseek(start, 0, SEEK_SET) }
        }
        guard start >= 0 else { throw SystemError.current(folder == nil ? "dup" : "open", path: path) }
        var listing = Listing()
        let prefix = folder.map { $0.bytes + [UInt8(ascii: "/")] } ?? []
        guard recursive else {
            let entries: [DirectoryEntry]
            do {
                entries = try DirectoryReader.readEntries(consuming: start)
            } catch {
                throw SystemError(errno: error.errno, operation: "readdir", path: path)
            }
            let sidecarNames = sidecars.sidecarNames(among: entries.map(\.name))
            listing.items = entries.lazy.filter { $0.name.first != UInt8(ascii: ".") && !sidecarNames.contains($0.name) }.map { ItemName(prefix + $0.name) }
            return listing
        }
        defer { close(start) }
        let depth = folder.map { $0.bytes.count { $0 == UInt8(ascii: "/") } + 1 } ?? 0
        do {
            try walk(folderFD: start, prefix: prefix, depth: depth, into: &listing)
        } catch {
            throw SystemError(errno: error.errno, operation: "readdir", path: path)
        }
        return listing
    }

    /// Lists the folder open at `folderFD` (kept open: the caller closes it).
    private func walk(folderFD: Int32, prefix: [UInt8], depth: Int, into listing: inout Listing) throws(SystemError) {
        let copy = dup(folderFD)
        guard copy >= 0 else { throw SystemError.current("dup") }
        let entries = try DirectoryReader.readEntries(consuming: copy)
        let sidecarNames = sidecars.sidecarNames(among: entries.map(\.name))
        for entry in entries where entry.name.first != UInt8(ascii: ".") && !sidecarNames.contains(entry.name) {
            let name = ItemName(prefix + entry.name)
            guard depth < Self.maximumFolderDepth, Self.isDirectory(entry, in: folderFD),
                  !Self.holdsPayload(entry.name, in: folderFD, names: payloadNames) else {
                listing.items.append(name)
                continue
            }
            let childFD = entry.name.withCString { DirectoryReader.openDirectory($0, in: folderFD) }
            guard childFD >= 0 else {
                listing.items.append(name)  // read as an item: its problem is reported against it
                continue
            }
            defer { close(childFD) }
            listing.folders.append(name)
            do {
                try walk(folderFD: childFD, prefix: name.bytes + [UInt8(ascii: "/")], depth: depth + 1, into: &listing)
            } catch {
                listing.folders.removeLast()
                listing.items.append(name)
            }
        }
    }

    /// Runs `body` with the descriptor of the folder item `name` lies in
    /// and its last component: BACKING itself for a name without `/`; else
    /// the folder opened beneath BACKING through no link (`openat2`), so a
    /// folder swapped for a link never sends a read or an edit outside.
    /// Fails as opening that folder failed.
    package func withParent<R>(of name: ItemName, _ body: (Int32, UnsafePointer<CChar>) throws(SystemError) -> R) throws(SystemError) -> R {
        try Self.withParent(of: name, in: fd, body)
    }

    /// `withParent` from BACKING's descriptor `rootFD`.
    package static func withParent<R>(of name: ItemName, in rootFD: Int32,
                                      _ body: (Int32, UnsafePointer<CChar>) throws(SystemError) -> R) throws(SystemError) -> R {
        guard let slash = name.bytes.lastIndex(of: UInt8(ascii: "/")) else {
            return try Self.call(body, rootFD, name.bytes)
        }
        let parentFD = Array(name.bytes[..<slash]).withCString { qfs_open_beneath(rootFD, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard parentFD >= 0 else { throw SystemError.current("open", path: String(decoding: name.bytes[..<slash], as: UTF8.self)) }
        defer { close(parentFD) }
        return try Self.call(body, parentFD, Array(name.bytes[(slash + 1)...]))
    }

    /// `body` with `name` as a C string, its typed error kept (`withCString` rethrows untyped).
    private static func call<R>(_ body: (Int32, UnsafePointer<CChar>) throws(SystemError) -> R, _ fd: Int32, _ name: [UInt8]) throws(SystemError) -> R {
        let result = (name + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { cName in
                Result { () throws(SystemError) in try body(fd, cName.baseAddress!) }
            }
        }
        return try result.get()
    }

    /// The files a sidecar-shaped item `name` belongs to, from one listing of
    /// its folder (empty: it is an item of its own). Live changes only: the
    /// scan leaves sidecars out as it lists.
    package func owners(ofSidecar name: ItemName) -> [ItemName] {
        guard sidecars.isSidecarShaped(Array(name.bytes[name.lastComponentStart...])) else { return [] }
        let start = name.lastComponentStart
        let folder = start == 0 ? nil : ItemName(Array(name.bytes[..<(start - 1)]))
        let folderFD = folder.map { $0.bytes.withCString { qfs_open_beneath(fd, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } } ?? dup(fd)
        guard folderFD >= 0 else { return [] }
        if folder == nil { lseek(folderFD, 0, SEEK_SET) }
        guard let entries = try? DirectoryReader.readEntries(consuming: folderFD) else { return [] }
        let prefix = Array(name.bytes[..<start])
        return sidecars.owners(of: Array(name.bytes[start...]), among: Set(entries.map(\.name))).map { ItemName(prefix + $0) }
    }

    /// Whether BACKING holds an entry at `name` (a link counts, not followed).
    package func hasEntry(_ name: ItemName) -> Bool {
        (try? withParent(of: name) { (folderFD, leaf) throws(SystemError) in faccessat(folderFD, leaf, F_OK, AT_SYMLINK_NOFOLLOW) == 0 }) ?? false
    }

    /// Whether the entry is a directory (not a link to one): `d_type`, else one stat.
    private static func isDirectory(_ entry: DirectoryEntry, in folderFD: Int32) -> Bool {
        if entry.type != UInt8(DT_UNKNOWN) { return entry.type == UInt8(DT_DIR) }
        return (entry.name.withCString { try? FileStatus($0, in: folderFD) })?.isDirectory ?? false
    }

    /// Whether the folder `name` in `folderFD` holds a payload file: a
    /// bundle, not a folder of items. One `faccessat` per payload name, no listing.
    package static func holdsPayload(_ name: [UInt8], in folderFD: Int32, names: [String]) -> Bool {
        names.contains { fileName in
            (name + [UInt8(ascii: "/")] + Array(fileName.utf8)).withCString {
                faccessat(folderFD, $0, F_OK, AT_SYMLINK_NOFOLLOW) == 0
            }
        }
    }
}
