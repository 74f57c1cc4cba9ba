#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine
import QueryFSCollection

// Locks, outer before inner (ARCHITECTURE.md, "Locks, and their order"):
//   `replyLock` → `lock`. `replyLock` is held while a readdir reply is built
//   and sent, and while the watcher swaps the listing, so a reply made from
//   the old listing reaches the kernel before the invalidation, never after.
//   `lock` guards the fields alone and is held for a read or a write; no
//   other lock is taken under it. Replies (fuse_reply_*) are sent under
//   `replyLock`, never a notify call: the watcher notifies after the swap.

/// A view folder of the mount: its path, its current listing, and the time
/// it last changed (its mtime, so file managers notice).
final class ViewFolder: @unchecked Sendable {
    let serial: UInt32
    let path: [String]
    private let lock = PlainLock()
    private var listingStorage: ViewListing
    private var changedStorage: Timestamp

    /// A group folder (a configured path such as `reading/` of
    /// `reading/today`) holds these folders instead of entries; set at mount
    /// and when the configuration is reloaded.
    private var groupChildrenStorage: [String]?
    var groupChildren: [String]? { lock.withLock { groupChildrenStorage } }

    var isGroup: Bool { groupChildren != nil }

    /// Makes this folder a group of `children`.
    func makeGroup(of children: [String]) { lock.withLock { groupChildrenStorage = children } }

    init(serial: UInt32, path: [String], listing: ViewListing, changed: Timestamp) {
        self.serial = serial
        self.path = path
        listingStorage = listing
        changedStorage = changed
    }

    var id: UInt64 { NodeID.folder(serial) }
    /// Levels below the mount's root: a nested tag's folder `a/b` is `tag/a/b/`, three.
    var depth: Int { path.reduce(0) { $0 + $1.split(separator: "/").count } }

    /// For a tag folder, its tag folder name (`a/b` for `tag/a/b/`); nil for any other folder.
    var tagFolderName: String? { path.count == 2 && path[0] == ViewDefinition.tagFolder ? path[1] : nil }

    /// When the folder was last looked up or listed, and last listed
    /// (monotonic seconds): ad-hoc `query/` folders unused the longest are
    /// dropped first, and none listed in the last `busySeconds` (a listing
    /// may be under way: there is no opendir to count readers by).
    private var lastUsedStorage = monotonicSeconds()
    private var lastListedStorage = -Double.infinity
    var lastUsed: Double { lock.withLock { lastUsedStorage } }
    var lastListed: Double { lock.withLock { lastListedStorage } }
    func touch() { lock.withLock { lastUsedStorage = monotonicSeconds() } }
    func listed() { lock.withLock { lastUsedStorage = monotonicSeconds(); lastListedStorage = lastUsedStorage } }
    static let busySeconds = 2.0

    var listing: ViewListing { lock.withLock { listingStorage } }

    /// How many entries of the current listing readdirplus replies have
    /// given the kernel (their dentries exist: `LinkWarmer` reads only those).
    private var listedStorage = 0

    /// Entries `indices` of the current listing were given to the kernel by readdirplus.
    func noteListed(_ indices: Range<Int>) {
        lock.withLock {
            listedStorage = max(listedStorage, indices.upperBound)
            listingStorage.noteShown(indices)
        }
    }

    /// How many entries of `listing` the kernel was given; nil once the folder holds another listing.
    func listedCount(of listing: ViewListing) -> Int? {
        lock.withLock { listingStorage === listing ? listedStorage : nil }
    }
    var changed: Timestamp { lock.withLock { changedStorage } }

    /// Counts the listings this folder has held (bumped by `replace`): read
    /// without a lock by `LinkWarmer` on every readlink answered.
    let generation = Atomic<UInt64>(0)
    /// The generation whose links `LinkWarmer` has read (or is reading).
    let linksWarmedGeneration = Atomic<UInt64>(.max)

    /// Held while a readdir reply is built and sent, and while the listing
    /// is swapped: so a reply made from the old listing always reaches the
    /// kernel before the watcher's invalidation, never after it (which would
    /// leave a stale listing in the kernel's readdir cache).
    let replyLock = PlainLock()

    func replace(_ listing: ViewListing, at time: Timestamp) {
        replyLock.withLock {
            lock.withLock {
                listingStorage = listing
                listedStorage = 0
                changedStorage = changedStorage.advanced(to: time)
                generation.add(1, ordering: .releasing)
            }
        }
    }
}

extension Timestamp {
    /// `time`, or a nanosecond past self if `time` is not later: a folder's
    /// mtime moves forward with every change of its listing, so programs
    /// that poll folder times (lf, Plex, backup tools) always see it move.
    func advanced(to time: Timestamp) -> Timestamp {
        if time > self { return time }
        return nanoseconds < 999_999_999 ? Timestamp(seconds: seconds, nanoseconds: nanoseconds + 1)
            : Timestamp(seconds: seconds &+ 1, nanoseconds: 0)
    }
}
