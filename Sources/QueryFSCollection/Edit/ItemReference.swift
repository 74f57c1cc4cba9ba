#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// How the edit commands (and Swift programs) name an item: its name in
/// BACKING (in a recursive collection, its path there), a path into BACKING
/// (or into the item), or a path into a mount of BACKING — `MOUNT/bundles/X`,
/// or a view's entry, a symlink that leads there.
package enum ItemReference {
    package static func resolve(_ text: String, backing: String, recursive: Bool = false,
                                payloadNames: [String] = FieldSources.defaultPayloadNames) throws(EditError) -> ItemName {
        guard let root = resolvedPath(backing) else { throw EditError(ENOENT, "backing directory \(backing) does not exist") }
        if !text.isEmpty, !text.hasPrefix("/"), ItemName(text).isItemPath, Self.exists(root + "/" + text),
           let name = item(at: text.split(separator: "/").map(String.init), in: root, recursive: recursive, payloadNames: payloadNames) {
            return name
        }
        guard let path = resolvedPath(text) else {
            if !text.hasPrefix("/"), Self.exists(root + "/" + text) { throw notAnItem(text, backing: backing) }
            throw EditError(ENOENT, "'\(text)' is neither an item of \(backing) nor a path that exists")
        }
        if let inside = components(of: path, below: root), let name = item(at: inside, in: root, recursive: recursive, payloadNames: payloadNames) { return name }
        if let (mount, rest) = MountTable.queryfsMount(containing: path), resolvedPath(mount.source) == root,
           let inside = components(of: "/" + rest, below: "/bundles"), let name = item(at: inside, in: root, recursive: recursive, payloadNames: payloadNames) {
            return name
        }
        throw notAnItem(text, backing: backing)
    }

    private static func notAnItem(_ text: String, backing: String) -> EditError {
        EditError(EINVAL, "'\(text)' is not an item of \(backing) (give its name, a path into \(backing), or into a mount of it)")
    }

    /// `resolve` for any bytes: a name or path that is not UTF-8 (a
    /// `String` would hold U+FFFD in place of its bytes, and no file has
    /// that name: found from outside, `queryfs tag B B/$'x\\xff.txt'` said
    /// the path did not exist). Such a name is resolved as an item of
    /// BACKING or a path into it; a path into a mount is named in UTF-8.
    package static func resolve(bytes: [UInt8], backing: String, recursive: Bool = false,
                                payloadNames: [String] = FieldSources.defaultPayloadNames) throws(EditError) -> ItemName {
        if let text = String(validating: bytes, as: UTF8.self) {
            return try resolve(text, backing: backing, recursive: recursive, payloadNames: payloadNames)
        }
        let shown = String(decoding: bytes, as: UTF8.self)
        guard let root = resolvedPath(backing) else { throw EditError(ENOENT, "backing directory \(backing) does not exist") }
        let rootBytes = Array(root.utf8)
        let slash = UInt8(ascii: "/")
        var inside: [[UInt8]]?
        if bytes.first != slash, exists(rootBytes + [slash] + bytes) {
            inside = bytes.split(separator: slash).map(Array.init)
        } else if let path = realPath(of: bytes) {
            let prefix = root == "/" ? [slash] : rootBytes + [slash]
            if path.starts(with: prefix) { inside = path.dropFirst(prefix.count).split(separator: slash).map(Array.init) }
        } else {
            throw EditError(ENOENT, "'\(shown)' is neither an item of \(backing) nor a path that exists")
        }
        guard let inside, let name = item(at: inside, in: rootBytes, recursive: recursive, payloadNames: payloadNames) else {
            throw EditError(EINVAL, "'\(shown)' is not an item of \(backing) (give its name or a path into \(backing))")
        }
        return name
    }

    /// `item(at:in:recursive:payloadNames:)` for components of any bytes.
    private static func item(at components: [[UInt8]], in root: [UInt8], recursive: Bool, payloadNames: [String]) -> ItemName? {
        var prefix: [UInt8] = []
        for (index, component) in components.enumerated() {
            guard component.first != UInt8(ascii: ".") else { return nil }
            prefix += (prefix.isEmpty ? [] : [UInt8(ascii: "/")]) + component
            let path = root + [UInt8(ascii: "/")] + prefix
            // A folder too deep to walk is one item, as the scan reads it (found from
            // outside: a note inside one was edited, journaled, and shown nowhere).
            guard recursive, index < BackingDirectory.maximumFolderDepth, isFolderOfItems(path, payloadNames: payloadNames) else {
                return index == components.count - 1 || isFolder(path) ? ItemName(prefix) : nil
            }
        }
        return nil
    }

    /// Whether `path` is a folder itself, not a link to one. A path that
    /// goes on past anything else names no item in it (found from outside:
    /// with `sub` swapped for a link meanwhile, `sub/n.md` named the link
    /// `sub`, and the tag went onto the folder `sub` once it was back).
    private static func isFolder(_ path: [UInt8]) -> Bool {
        var status = stat()
        return path.withCString { lstat($0, &status) } == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    private static func isFolderOfItems(_ path: [UInt8], payloadNames: [String]) -> Bool {
        var status = stat()
        guard path.withCString({ lstat($0, &status) }) == 0, status.st_mode & S_IFMT == S_IFDIR else { return false }
        return !payloadNames.contains { exists(path + [UInt8(ascii: "/")] + Array($0.utf8)) }
    }

    private static func exists(_ path: [UInt8]) -> Bool {
        var status = stat()
        return path.withCString { lstat($0, &status) } == 0
    }

    private static func realPath(of bytes: [UInt8]) -> [UInt8]? {
        guard let resolved = bytes.withCString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self), count: strlen(resolved)))
    }

    /// The item a path inside BACKING lies in: its first component; in a
    /// recursive collection, the first that is not a folder of items (a
    /// folder without a payload file, as `BackingDirectory.listing` walks).
    /// Nil for a hidden name, or a path that ends at a folder of items.
    static func item(at components: [String], in root: String, recursive: Bool, payloadNames: [String]) -> ItemName? {
        var prefix: [String] = []
        for (index, component) in components.enumerated() {
            guard !component.hasPrefix(".") else { return nil }
            prefix.append(component)
            let path = prefix.joined(separator: "/")
            guard recursive, index < BackingDirectory.maximumFolderDepth, isFolderOfItems(root + "/" + path, payloadNames: payloadNames) else {
                return index == components.count - 1 || isFolder(Array((root + "/" + path).utf8)) ? ItemName(path) : nil
            }
        }
        return nil
    }

    private static func isFolderOfItems(_ path: String, payloadNames: [String]) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return false }
        return !payloadNames.contains { exists(path + "/" + $0) }
    }

    private static func components(of path: String, below root: String) -> [String]? {
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix) else { return nil }
        return path.dropFirst(prefix.count).split(separator: "/").map(String.init)
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}
