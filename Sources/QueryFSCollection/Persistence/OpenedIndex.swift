#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Whether and how a mount keeps an index file (`queryfs mount --index`,
/// `--no-index`, `--trust-index`).
package struct IndexSettings: Sendable {
    package var location: IndexLocation
    /// Live at once from the index, reconciled with BACKING in the background
    /// (otherwise the mount reconciles before it is live: SPEC §3).
    package var trust: Bool
    /// The configuration's ignore patterns (the file names them).
    package var ignorePatterns: [String] = []

    package init(location: IndexLocation, trust: Bool = false) {
        self.location = location
        self.trust = trust
    }
}

/// A mount's index as the mount starts: its lock taken (so no other mount
/// writes it), and its items when the file could be used. A file that could
/// not be used is removed at once, so no reader trusts it meanwhile.
struct OpenedIndex {
    let settings: IndexSettings
    let lock: IndexLock
    let identity: IndexFile.Identity
    /// The items, nil when there was no usable index.
    let contents: IndexFile.Contents?

    /// Nil when the mount keeps no index. What to tell the user goes to
    /// `notes`: logged once the mount is live, so that a mount that fails
    /// still says one line, its failure.
    static func open(_ settings: IndexSettings, root: BackingDirectory, sources: FieldSources, payloadLimit: Int,
                     notes: inout [LogNote]) -> OpenedIndex?
    {
        let location = settings.location
        if let refusal = location.refusal(backing: root.path) {
            notes.append(LogNote(.warning, "index not kept: " + refusal))
            return nil
        }
        if let refusal = IndexFile.refusalToReplace(location.path) {
            notes.append(LogNote(.warning, "index \(location.path) \(refusal), so this mount leaves it alone and keeps none"))
            return nil
        }
        let lock: IndexLock
        // A live mount keeps the lock for as long as it runs: asked once, not waited for
        // (a second mount of one directory waited 2 s for nothing).
        let keptByAMount = IndexLock.holder(location)?.hasPrefix("mount ") == true
        var outcome = IndexLock.take(location, owner: "starting \(getpid())", waiting: keptByAMount ? 0 : 2)
        // The mount before this one is still folding its journal into the file (at 1,000,000 items, seconds).
        if case .held = outcome, IndexLock.holder(location)?.hasPrefix("closing ") == true {
            outcome = IndexLock.take(location, owner: "starting \(getpid())", waiting: 120)
        }
        switch outcome {
        case .acquired(let taken): lock = taken
        case .held:
            notes.append(LogNote(.warning, "index \(location.path) is kept by another mount of this directory: this mount keeps none"))
            return nil
        case .failed(let error):
            notes.append(LogNote(.warning, "index \(location.path): \(error.operation): \(error.message); this mount keeps none"))
            return nil
        }
        let identity: IndexFile.Identity
        do {
            identity = try IndexFile.Identity(backing: root, sources: sources, payloadLimit: payloadLimit,
                                              ignorePatterns: settings.ignorePatterns)
        } catch {
            notes.append(LogNote(.warning, "index \(location.path): \(error.operation) \(root.path): \(error.message); this mount keeps none"))
            return nil
        }
        switch IndexFile.read(path: location.path, wanted: identity) {
        case .success(let contents):
            if contents.tornJournal { notes.append(LogNote(.warning, "index \(location.path): its last change was cut short (a crash?); the rest is used")) }
            return OpenedIndex(settings: settings, lock: lock, identity: identity, contents: contents)
        case .failure(.missing):
            return OpenedIndex(settings: settings, lock: lock, identity: identity, contents: nil)
        case .failure(let rejection):
            notes.append(LogNote(.warning, "index \(location.path) not used: \(rejection); every item is read, and a new index written"))
            if unlink(location.path) != 0, errno != ENOENT {
                notes.append(LogNote(.warning, "index \(location.path): unlink: \(String(cString: strerror(errno))); this mount keeps none"))
                return nil
            }
            return OpenedIndex(settings: settings, lock: lock, identity: identity, contents: nil)
        }
    }
}
