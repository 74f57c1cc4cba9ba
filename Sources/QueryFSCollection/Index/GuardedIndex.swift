import QueryFSEngine
/// The live index and the scanner that feeds it, behind one lock. These are
/// all of the live catalog's locking rules:
///
/// - Only the watcher thread changes the index or the scanner's settings,
///   and only under this lock. It reads `scanner` without the lock (no one
///   else writes it).
/// - Request handlers take the lock only to make, find or forget a `query/`
///   view; every listing they answer from is a snapshot that needs no lock.
///   A lookup under `bundles/` only tries it (`withLockIfFree`), never waits.
/// - No I/O under it: the watcher reads items first and applies what it read
///   under the lock afterwards, so even a full rescan of 100,000 items holds
///   it only as long as applying one batch (`CatalogUpdater`).
/// - Nothing that can wait on the kernel runs under it: subscribers (who
///   send the kernel's cache invalidations) are called after it is released.
/// - Item locks (`flock`) are never taken or waited for under it; threads of
///   `ReleaseWaiters` wait for them, and the watcher lets go of those it was
///   handed as soon as it has read the item.
final class GuardedIndex: @unchecked Sendable {
    private let lock = PlainLock()
    private let index: LiveIndex
    /// Reads items. Changed under the lock by the watcher thread only.
    private(set) var scanner: Scanner
    /// Names the configuration says are not items (ignore patterns).
    private(set) var ignored: @Sendable (ItemName) -> Bool

    /// Names shaped as numbered copies (`X 2.ext`), by the original they
    /// would copy: when an original comes or goes, its copies are marked
    /// again. Changed under the lock by the watcher thread only.
    private(set) var numberedCopies = NumberedCopies()

    /// `numberedCopies`: the index's names shaped as copies, when the caller
    /// has them (a start does; else they are found among the index's records).
    init(index: LiveIndex, scanner: Scanner, ignored: @escaping @Sendable (ItemName) -> Bool, numberedCopies: NumberedCopies? = nil) {
        self.index = index
        self.scanner = scanner
        self.ignored = ignored
        if let numberedCopies {
            self.numberedCopies = numberedCopies
        } else {
            self.numberedCopies.rebuild(names: index.records.keys, patterns: scanner.sources.conflicts)
        }
    }

    /// Marks numbered copies in a batch about to be applied (under `withLock`,
    /// on the watcher thread): those read in it, and the existing copies of
    /// every name it makes or removes.
    func markNumberedCopies(in batch: inout [ItemName: Item?], stamps: inout [ItemName: UInt64], index: LiveIndex) {
        numberedCopies.mark(&batch, stamps: &stamps, records: index.records, patterns: scanner.sources.conflicts)
    }

    /// After a rescan with new patterns.
    func rebuildNumberedCopies(index: LiveIndex) {
        numberedCopies.rebuild(names: index.records.keys, patterns: scanner.sources.conflicts)
    }

    func withLock<R>(_ body: (LiveIndex) throws -> R) rethrows -> R {
        try lock.withLock { try body(index) }
    }

    /// `body` under the lock if no one holds it now; nil, without waiting, if someone does.
    func withLockIfFree<R>(_ body: (LiveIndex) throws -> R) rethrows -> R? {
        try lock.withLockIfFree { try body(index) }
    }

    /// New field sources and ignore patterns (the configuration was
    /// reloaded); call under `withLock`, on the watcher thread.
    func setReading(sources: FieldSources, ignored: @escaping @Sendable (ItemName) -> Bool) {
        scanner.sources = sources
        self.ignored = ignored
    }
}
