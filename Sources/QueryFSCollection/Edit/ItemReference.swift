#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// How the edit commands (and Swift programs) name an item: its name in
/// BACKING, a path into BACKING (or into the item), or a path into a mount of
/// BACKING — `MOUNT/bundles/X`, or a view's entry, a symlink that leads there.
package enum ItemReference {
    package static func resolve(_ text: String, backing: String) throws(EditError) -> ItemName {
        guard let root = resolvedPath(backing) else { throw EditError(ENOENT, "backing directory \(backing) does not exist") }
        if !text.contains("/"), !text.isEmpty, Self.exists(root + "/" + text) { return ItemName(text) }
        guard let path = resolvedPath(text) else {
            throw EditError(ENOENT, "'\(text)' is neither an item of \(backing) nor a path that exists")
        }
        if let name = firstComponent(of: path, below: root) { return ItemName(name) }
        if let (mount, rest) = MountTable.queryfsMount(containing: path), resolvedPath(mount.source) == root,
           let name = firstComponent(of: "/" + rest, below: "/bundles") {
            return ItemName(name)
        }
        throw EditError(EINVAL, "'\(text)' is not an item of \(backing) (give its name, a path into \(backing), or into a mount of it)")
    }

    private static func firstComponent(of path: String, below root: String) -> String? {
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix) else { return nil }
        let name = path.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        return name.flatMap { $0.hasPrefix(".") ? nil : $0 }
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}
