import QueryFSEngine
import QueryFSCollection
/// How FUSE node ids are laid out. View entries get ids computed from the
/// view folder and the item (no table per entry), passthrough nodes from
/// the backing inode number: both are stable for the life of the mount.
///
///     1                       the mount root
///     2                       bundles/ (the backing directory)
///     3                       tag/
///     4                       query/
///     5                       .queryfs/ (what the daemon tells about itself)
///     6                       .queryfs/status
///     7                       .queryfs/settled (opened: once BACKING's changes so far are applied)
///     1<<61 | folder<<32 | item   a view entry (folder and item serial numbers)
///     1<<60 | folder              a view folder
///     1<<62 | backing st_ino      anything under bundles/
enum NodeID {
    static let root: UInt64 = 1
    static let bundles: UInt64 = 2
    static let tagRoot: UInt64 = 3
    static let queryRoot: UInt64 = 4
    static let control: UInt64 = 5
    static let status: UInt64 = 6
    static let settled: UInt64 = 7

    private static let folderTag: UInt64 = 1 << 60
    private static let entryTag: UInt64 = 1 << 61
    private static let passthroughTag: UInt64 = 1 << 62

    static func folder(_ serial: UInt32) -> UInt64 { folderTag | UInt64(serial) }
    static func entry(folder: UInt32, item: UInt32) -> UInt64 { entryTag | UInt64(folder) << 32 | UInt64(item) }
    static func passthrough(backingInode: UInt64) -> UInt64 { passthroughTag | (backingInode & (passthroughTag - 1)) }

    enum Kind: Equatable {
        case root, bundles, tagRoot, queryRoot, control, status, settled
        case folder(UInt32)
        case entry(folder: UInt32, item: UInt32)
        case passthrough
        case unknown
    }

    static func kind(of id: UInt64) -> Kind {
        switch id {
        case root: return .root
        case bundles: return .bundles
        case tagRoot: return .tagRoot
        case queryRoot: return .queryRoot
        case control: return .control
        case status: return .status
        case settled: return .settled
        case _ where id & passthroughTag != 0: return .passthrough
        case _ where id & entryTag != 0: return .entry(folder: UInt32(truncatingIfNeeded: (id >> 32) & 0x0FFF_FFFF), item: UInt32(truncatingIfNeeded: id))
        case _ where id & folderTag != 0: return .folder(UInt32(truncatingIfNeeded: id))
        default: return .unknown
        }
    }
}
