import Synchronization
import QueryFSEngine

/// The background half of a trusted start: the stamps of every item
/// compared with the index on a thread of its own while the mount is
/// already live; what differs goes to the watcher as ordinary changes, and
/// once those are applied the index is current.
final class BackgroundReconciliation: @unchecked Sendable {
    private let found = Mutex<(names: Set<ItemName>, finished: Bool, taken: Bool, failure: String?)>(([], false, false, nil))
    private let started = monotonicSeconds()

    /// Lists BACKING and compares it with the index; `wake` tells the
    /// watcher there is something to take.
    init(index contents: IndexFile.Contents, root: BackingDirectory, ignored: @escaping @Sendable (ItemName) -> Bool,
         wake: @escaping @Sendable () -> Void)
    {
        startThread(named: "queryfs-reconc") { [self] in
            let outcome = Self.changedNames(against: contents, root: root, ignored: ignored)
            found.withLock {
                switch outcome {
                case .success(let changed): $0 = (changed, true, false, nil)
                // Not an empty listing: that would read every indexed item as gone.
                case .failure(let error): $0 = ([], true, false, "\(error.operation) \(root.path): \(error.message)")
                }
            }
            // The listing, the table by name and the stamps are gone by
            // now (freed when `changedNames` returned, not whenever their
            // last use was): give their pages back.
            MemoryTrim.returnFreedMemory()
            wake()
        }
    }

    /// BACKING's items that differ from the index: listed but changed or
    /// new, and indexed but no longer listed (loaded all the same: reading
    /// them finds them gone).
    private static func changedNames(against contents: IndexFile.Contents, root: BackingDirectory,
                                     ignored: (ItemName) -> Bool) -> Result<Set<ItemName>, SystemError>
    {
        let names: [ItemName]
        do throws(SystemError) {
            names = try root.itemNames().filter { !ignored($0) }
        } catch {
            return .failure(error)
        }
        let index = contents.byName()
        let kept = IndexReconciler.unchanged(names, in: index, root: root)
        var changed = Set<ItemName>()
        for (name, indexed) in zip(names, kept) where indexed == nil { changed.insert(name) }
        let listed = Set(names)
        for name in index.keys where !listed.contains(name) { changed.insert(name) }
        return .success(changed)
    }

    /// What was found, once, when the comparison is over: the names to read
    /// as changed, the seconds it took, and why it could not be made (nil
    /// when it was); nil before (and after).
    func take() -> (names: Set<ItemName>, seconds: Double, failure: String?)? {
        found.withLock { state -> (Set<ItemName>, Double, String?)? in
            guard state.finished, !state.taken else { return nil }
            state.taken = true
            defer { state.names = [] }
            return (state.names, monotonicSeconds() - started, state.failure)
        }
    }
}
