#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// Entries of the views `desktop-entries` names: read-only regular files
/// holding a freedesktop link (`DesktopEntryText`), made from the record in
/// memory when asked for. Every edit (`rm`, `mv`, `ln -s` into the view)
/// works on them as on symlinks: those handlers go by name and item.
extension QueryFilesystem {
    /// Images a bundle may hold that show as its icon, first found first
    /// (Hipstapaper's `image.jpg`, ArchiveBox's screenshot and favicon).
    static let bundleIconNames = ["image.jpg", "image.png", "screenshot.png", "favicon.ico"]
    /// Extensions of items that are images themselves: their own icon.
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "gif", "webp", "tif", "tiff", "heic", "avif", "bmp", "svg"]

    /// The text of `record`'s desktop entry.
    func desktopEntryText(of record: ItemRecord) -> [UInt8] {
        let itemPath = Array((mountPoint + "/" + Self.bundlesName + "/").utf8) + record.name.bytes
        let title = record.title.isEmpty ? record.displayTitle : record.title
        return DesktopEntryText.make(title: title, url: record.url, itemPath: itemPath, icon: icon(of: record))
    }

    /// An image of the item to show as the entry's icon, by its path on the
    /// mount; else `text-html` for a web page; else none. One `openat2` and
    /// an `fstatat` per candidate in BACKING, asked once per entry per
    /// listing the kernel keeps.
    private func icon(of record: ItemRecord) -> String? {
        guard let name = String(validating: record.name.bytes, as: UTF8.self) else { return record.url == nil ? nil : "text-html" }
        let onMount = mountPoint + "/" + Self.bundlesName + "/" + name
        switch record.kind {
        case .file where Self.imageExtensions.contains(record.name.ext.lowercased()):
            return onMount
        case .bundle:
            // The bundle opened beneath BACKING through no link (the daemon
            // may be root: a bundle swapped for a link must not tell whether
            // some image exists elsewhere), then each candidate in it.
            let bundle = qfs_open_beneath(passthrough.rootFD, name, QFS_O_PATH | O_DIRECTORY | O_CLOEXEC)
            guard bundle >= 0 else { break }
            defer { close(bundle) }
            for candidate in Self.bundleIconNames {
                var status = stat()
                if fstatat(bundle, candidate, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFREG {
                    return onMount + "/" + candidate
                }
            }
        case .file:
            break
        }
        return record.url == nil ? nil : "text-html"
    }

    /// A desktop entry as the kernel sees it: a read-only file of its text's size.
    func desktopEntryAttributes(id: UInt64, record: ItemRecord) -> stat {
        var attributes = viewNodeAttributes(id: id, mode: S_IFREG | 0o444, size: desktopEntryText(of: record).count, time: record.modified)
        attributes.st_blocks = (attributes.st_size + 511) / 512
        return attributes
    }

    /// open of a view entry: a desktop entry opens for reading, from a
    /// memory file holding its text as of now. A symlink entry is never
    /// opened (the kernel follows it).
    func viewOpen(_ request: fuse_req_t?, id: UInt64, info: UnsafeMutablePointer<fuse_file_info>) {
        guard case .entry(let folderSerial, let itemSerial) = NodeID.kind(of: id) else { return fail(request, EISDIR) }
        guard let (folder, record) = entryRecord(folder: folderSerial, item: itemSerial) else { return fail(request, ESTALE) }
        guard folder.listing.naming.desktopFile else { return fail(request, EISDIR) }
        guard info.pointee.flags & O_ACCMODE == O_RDONLY, info.pointee.flags & O_TRUNC == 0 else {
            return refuse(request, EACCES, "writing a desktop entry: it is made from its item (rename it to retitle)")
        }
        replyOpenReadOnly(request, info: info, memoryFileNamed: "queryfs-desktop-entry", holding: desktopEntryText(of: record))
    }
}
