#if canImport(Glibc)
import Glibc
#endif
import CFuse
import QueryFSEngine
import QueryFSCollection

/// What the request handlers answer the event replay thread while it makes
/// one operation: which names exist in the folder it works in (with the
/// entry each stands for), and what a `symlink`/`mkdir` there creates.
/// Everything else the thread asks (the folders on its path) is answered
/// as anyone's request.
final class ReplayAnswers: @unchecked Sendable {
    struct Expected: @unchecked Sendable {
        /// The folder the operation is in (0: none; every lookup answered as usual).
        var parent: UInt64
        var present: [[UInt8]: fuse_entry_param]
        var made: fuse_entry_param?
        /// A `mkdir` in bundles/ for a bundle BACKING already has: answered with its real entry.
        var madePassthrough = false
    }

    private let lock = PlainLock()
    private var current: Expected?

    func expect(_ expected: Expected?) { lock.withLock { current = expected } }

    var expected: Expected? { lock.withLock { current } }
}

/// The handlers' side of the event replay: every request of the replay
/// thread is a confirmation of the state already published. Nothing in
/// BACKING changes, no item lock is taken, nothing is journaled.
extension QueryFilesystem {
    /// The replay's expectations if `request` came from the replay thread.
    private func replayExpectation(_ request: fuse_req_t?) -> ReplayAnswers.Expected? {
        guard let replayer = eventReplayer, replayer.isReplay(request) else { return nil }
        return replayer.answers.expected ?? ReplayAnswers.Expected(parent: 0, present: [:])
    }

    /// A lookup by the replay in the folder it works in; false if not one.
    func answeredReplayLookup(_ request: fuse_req_t?, parent: UInt64, name: UnsafePointer<CChar>) -> Bool {
        guard let expected = replayExpectation(request), expected.parent == parent, parent != 0 else { return false }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
        guard var entry = expected.present[bytes] else {
            fuse_reply_err(request, ENOENT)
            return true
        }
        fuse_reply_entry(request, &entry)
        return true
    }

    /// A `symlink`/`mkdir`/`mknod` by the replay; false if not one.
    func answeredReplayMake(_ request: fuse_req_t?, parent: UInt64, name: UnsafePointer<CChar>) -> Bool {
        guard let expected = replayExpectation(request) else { return false }
        if expected.madePassthrough, let node = passthrough.node(parent) {
            replyPassthroughEntry(request, parent: node, name: name)
        } else if var entry = expected.made {
            fuse_reply_entry(request, &entry)
        } else {
            fuse_reply_err(request, EIO)
        }
        return true
    }

    /// An `unlink`/`rmdir`/`rename` by the replay; false if not one.
    func answeredReplayRemoval(_ request: fuse_req_t?) -> Bool {
        guard replayExpectation(request) != nil else { return false }
        fuse_reply_err(request, 0)
        return true
    }

    /// A `utimensat` by the replay: the attributes as they are; false if not one.
    func answeredReplaySetattr(_ request: fuse_req_t?, id: UInt64) -> Bool {
        guard replayExpectation(request) != nil else { return false }
        if let node = passthrough.node(id) { passthroughGetattr(request, node); return true }
        guard var attributes = viewAttributes(of: id) else { fuse_reply_err(request, ENOENT); return true }
        fuse_reply_attr(request, &attributes, 0)
        return true
    }
}
