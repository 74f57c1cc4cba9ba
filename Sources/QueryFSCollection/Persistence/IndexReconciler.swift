import QueryFSEngine
/// Which items of an index still describe BACKING, found by stats alone:
/// an item whose stamp (`ItemStamp`: inode, size, mode, mtime and ctime of
/// each of its files and folders) is the one it was read at has not changed,
/// and is taken from the index without reading its payload. Anything else —
/// a new name, another stamp, a stamp the index could not vouch for (0) —
/// is read again. Names the index holds that BACKING no longer lists are
/// simply not asked about.
enum IndexReconciler {
    /// For each of `names`, its indexed item if unchanged, else nil.
    static func unchanged(_ names: [ItemName], in index: [ItemName: ItemRecord], root: BackingDirectory,
                          threads: Int = Scanner.readingThreads) -> [ItemRecord?]
    {
        let stamper = stamper(for: root)
        // Folder by folder: a nested name is stamped from its folder's
        // descriptor, not by opening that folder again for every item.
        return Scanner.mapByFolder(names, in: root.fd, threads: threads) { name, leaf, folderFD -> ItemRecord? in
            guard let indexed = index[name], indexed.stamp != 0, let folderFD else { return nil }
            return stamper.hasStamp(indexed.stamp, leaf, in: folderFD) ? indexed : nil
        }
    }

    /// Whether `names` (BACKING's listing) are exactly the items of
    /// `stamps`, each with the stamp it was indexed at: stats alone, as above.
    static func allUnchanged(_ names: [ItemName], stamps: [ItemName: UInt64], root: BackingDirectory,
                             threads: Int = Scanner.readingThreads) -> Bool
    {
        // Names are unique: as many, each found, is the same set.
        guard names.count == stamps.count else { return false }
        let stamper = stamper(for: root)
        return !Scanner.mapByFolder(names, in: root.fd, threads: threads) { name, leaf, folderFD -> Bool in
            guard let indexed = stamps[name], indexed != 0, let folderFD else { return false }
            return stamper.hasStamp(indexed, leaf, in: folderFD)
        }.contains(false)
    }

    /// A scanner stamping as the scan did: a file's sidecar (`IMG.jpg.xmp`)
    /// is part of its stamp, so a stamper without the collection's sidecar
    /// kinds found every photo with one changed, and read it again.
    private static func stamper(for root: BackingDirectory) -> Scanner {
        var sources = FieldSources()
        sources.sidecars = root.sidecars
        return Scanner(sources: sources)
    }
}
