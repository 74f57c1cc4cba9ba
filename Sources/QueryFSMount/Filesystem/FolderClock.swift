#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSEngine
import QueryFSCollection

// Locks: `lock` guards the time alone, held for a read or a tick; nothing is called under it.

/// The time the listing of a folder without a `ViewFolder` of its own (the
/// root, `tag/`, `query/`) last changed.
final class FolderClock: @unchecked Sendable {
    private let lock = PlainLock()
    private var time: Timestamp

    init(_ time: Timestamp) { self.time = time }

    var changed: Timestamp { lock.withLock { time } }

    func tick(_ now: Timestamp = .now) { lock.withLock { time = time.advanced(to: now) } }
}
