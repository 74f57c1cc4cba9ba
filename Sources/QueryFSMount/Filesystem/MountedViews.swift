#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine
import QueryFSCollection

/// `queryfs ls` and `views` given a mount point: answered by the running
/// daemon (reading its folders, which are already current), not by
/// scanning BACKING again as if it were one.
package enum MountedViews {
    /// The mount point `path` names, if it is a queryfs mount, whoever
    /// mounted it: the caller named that mount and is shown its folders, as
    /// `ls MOUNTPOINT/VIEW` would show them. (A backing directory names data,
    /// not a mount: `mountPoint(ofBacking:)` trusts only some mounts of it.)
    package static func mountPoint(_ path: String) -> String? {
        guard let resolved = resolvedPath(path) else { return nil }
        return MountTable.mounts().first { $0.type == "fuse.queryfs" && $0.mountPoint == resolved }?.mountPoint
    }

    /// The queryfs mount of the backing directory `path` (not a mount point)
    /// whose views are the ones `queryfs ls BACKING` would compute: its
    /// configuration file is BACKING's own (a mount given another `--config`
    /// shows other views), and it was made by the caller or by root: another
    /// user's mount could list what it likes (`MountStatusFile.read(ofBacking:)`).
    /// nil when there is none or it cannot be told; the caller then reads the
    /// index, which is slower, never wrong.
    package static func mountPoint(ofBacking path: String) -> String? {
        guard let resolved = resolvedPath(path), let (mountPoint, text) = MountStatusFile.read(ofBacking: resolved),
              mountPoint != resolved
        else { return nil }
        let ownConfiguration = JSON.string(resolved + "/" + Configuration.fileName)
        return MountStatusFile.has(MountStatusFile.configurationFileField, value: ownConfiguration, in: text) ? mountPoint : nil
    }

    /// The configuration file the mount at `mountPoint` was started with,
    /// when it is not its BACKING's own `.queryfs.toml` (`--config`): what a
    /// command asking BACKING in its place must read too (found from outside:
    /// it read BACKING's own, with other views and ignore patterns). nil for
    /// BACKING's own, none, or a status that cannot be read.
    package static func otherConfigurationFile(ofMountPoint mountPoint: String, backing: String) -> String? {
        guard let (_, text) = MountStatusFile.read(for: mountPoint),
              case .dictionary(let fields)? = try? JSONParser.parse(Array(text.utf8)),
              case .string(let file)? = fields[MountStatusFile.configurationFileField],
              file != (resolvedPath(backing) ?? backing) + "/" + Configuration.fileName
        else { return nil }
        return file
    }

    /// Waits until every running mount of `backing` this user may ask has
    /// applied the changes made there so far (`.queryfs/settled`), each for
    /// at most 2 s: an edit command returns with its edit shown in them.
    /// Returns the mount points that did not say so (a stopped daemon, one
    /// still busy after 2 s): the caller says so, as the edit is made all the
    /// same (found from outside: a stopped mount's command returned in
    /// silence, its promise unkept).
    package static func settle(backing path: String) -> [String] {
        guard let resolved = resolvedPath(path) else { return [] }
        return MountTable.trustedQueryfsMounts(ofBacking: resolved).compactMap { mount in
            let file = mount.mountPoint + "/" + QueryFilesystem.controlName + "/" + QueryFilesystem.settledName
            // Bounded: a stopped or stuck daemon must not hold the command.
            let answer = answerWithin(3) { () -> Result<String, SystemError> in Result { () throws(SystemError) in try readWholeFile(file) } }
            switch answer {
            case .success(let text)?: return text.hasPrefix("settled") ? nil : mount.mountPoint
            // A mount this user may not ask (root's, without allow_other) or
            // one from before `.queryfs/settled`: nothing to wait for, nothing to say.
            case .failure(let error)? where [EACCES, EPERM, ENOENT].contains(error.errno): return nil
            default: return mount.mountPoint  // no answer within 3 s, or busy
            }
        }
    }

    /// A view's entries (name, symlink target) in order, or nil if the mount
    /// has no such view; a name that is not a view is asked as a query.
    /// Targets are read only when asked for (`withTargets`): a readlink each
    /// is a round trip to the daemon (100,000 of them: 7 s).
    package static func entries(mountPoint: String, view: String, withTargets: Bool) -> [(name: [UInt8], target: [UInt8])]? {
        let reserved = ["", ".", "..", QueryFilesystem.bundlesName, QueryFilesystem.controlName]
        // `tag/../bundles` would list BACKING's names as if they were a view's.
        let walksOut = view.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." || $0 == "." }
        guard !reserved.contains(view), !view.hasPrefix("/"), !walksOut else { return nil }
        for path in [mountPoint + "/" + view, mountPoint + "/" + ViewDefinition.queryFolder + "/" + view] {
            let fd = DirectoryReader.openForReading(path)
            guard fd >= 0, let entries = try? DirectoryReader.readEntries(consuming: fd) else { continue }
            // A tag folder holds its nested tags' folders too: entries are the links.
            return entries.filter { $0.type != UInt8(DT_DIR) }.map { entry in
                guard withTargets else { return (entry.name, []) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let full = Array((path + "/").utf8) + entry.name + [0]
                let count = full.withUnsafeBufferPointer { name in
                    buffer.withUnsafeMutableBufferPointer { raw in
                        readlink(UnsafeRawPointer(name.baseAddress!).assumingMemoryBound(to: CChar.self),
                                 UnsafeMutableRawPointer(raw.baseAddress!).assumingMemoryBound(to: CChar.self), raw.count)
                    }
                }
                return (entry.name, count > 0 ? Array(buffer[0..<count]) : [])
            }
        }
        return nil
    }

    /// Every view folder of the mount with its entry count, as `queryfs views` prints them.
    package static func counts(mountPoint: String) -> [(path: String, count: Int)] {
        var result: [(String, Int)] = []
        func walk(_ relative: String, depth: Int) {
            let fd = DirectoryReader.openForReading(mountPoint + "/" + relative)
            guard fd >= 0, let entries = try? DirectoryReader.readEntries(consuming: fd) else { return }
            // A folder of folders (tag/, query/, a group) is walked; a view holds symlinks.
            // A tag's folder is a view, and holds the folders of the tags nested under it.
            if relative.hasPrefix(ViewDefinition.tagFolder + "/") {
                result.append((relative, entries.count { $0.type != UInt8(DT_DIR) }))
            }
            let container = depth == 0 || relative == ViewDefinition.tagFolder || relative == ViewDefinition.queryFolder
                || entries.contains { $0.type == UInt8(DT_DIR) }
            guard container else {
                if relative.hasPrefix(ViewDefinition.tagFolder + "/") { return }
                result.append((relative, entries.count))
                return
            }
            for entry in entries where entry.type == UInt8(DT_DIR) {
                let name = String(decoding: entry.name, as: UTF8.self)
                if depth == 0, name == QueryFilesystem.bundlesName || name == QueryFilesystem.controlName { continue }
                walk(relative.isEmpty ? name : relative + "/" + name, depth: depth + 1)
            }
        }
        walk("", depth: 0)
        return result
    }
}
