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
            throw EditError(ENOENT, "'\(text)' is neither an item of \(backing) nor a path that exists")
        }
        if let inside = components(of: path, below: root), let name = item(at: inside, in: root, recursive: recursive, payloadNames: payloadNames) { return name }
        if let (mount, rest) = MountTable.queryfsMount(containing: path), resolvedPath(mount.source) == root,
           let inside = components(of: "/" + rest, below: "/bundles"), let name = item(at: inside, in: root, recursive: recursive, payloadNames: payloadNames) {
            return name
        }
        throw EditError(EINVAL, "'\(text)' is not an item of \(backing) (give its name, a path into \(backing), or into a mount of it)")
    }

    /// The item a path inside BACKING lies in: its first component; in a
    /// recursive collection, the first that is not a folder of items (a
    /// folder without a payload file, as `BackingDirectory.listing` walks).
    /// Nil for a hidden name, or a path that ends at a folder of items.
    static func item(at components: [String], in root: String, recursive: Bool, payloadNames: [String]) -> ItemName? {
        var prefix: [String] = []
        for component in components {
            guard !component.hasPrefix(".") else { return nil }
            prefix.append(component)
            let path = prefix.joined(separator: "/")
            guard recursive, isFolderOfItems(root + "/" + path, payloadNames: payloadNames) else { return ItemName(path) }
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
