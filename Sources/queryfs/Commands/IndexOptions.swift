import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine
import QueryFSCollection
import QueryFSMount

/// Where BACKING's index file is and how far to trust it: shared by
/// `mount`, `ls`, `views` and `status`.
struct IndexOptions: ParsableArguments {
    @Option(name: .customLong("index"), help: ArgumentHelp(
        "The index file (default: one per directory under $XDG_CACHE_HOME/queryfs, else ~/.cache/queryfs).",
        valueName: "path"))
    var path: String?
    @Flag(name: .customLong("no-index"), help: "Keep and use no index file: read every item.")
    var noIndex = false
    @Flag(name: .customLong("trust-index"), help: "Answer from the index at once: a command does not compare it with BACKING, so edits made while nothing was mounted are not seen; a mount compares in the background (`queryfs status` says when it is done).")
    var trustIndex = false

    func validate() throws {
        if noIndex, path != nil || trustIndex { throw ValidationError("--no-index cannot be given with --index or --trust-index") }
        if let path, path.isEmpty { throw ValidationError("--index takes a file path") }
        // Only the index's own folder is made (`IndexLocation.makesParentFolders`): a mistyped path is said at once.
        if let path {
            let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
            let above = absolute.split(separator: "/").dropLast(2).joined(separator: "/")
            guard access("/" + above, F_OK) == 0 else { throw ValidationError("--index \(path): there is no folder /\(above) to keep it in") }
        }
    }

    /// Whether any of the options was given.
    var isGiven: Bool { path != nil || noIndex || trustIndex }

    /// The settings for the backing directory at `backing`; nil: no index
    /// (asked for, or no cache directory to keep it in).
    func settings(for backing: String) -> IndexSettings? {
        guard !noIndex else { return nil }
        let location: IndexLocation?
        if let path {
            location = IndexLocation(path: path.hasPrefix("/") ? path : currentDirectory() + "/" + path, makesParentFolders: false)
        } else {
            location = resolvedPath(backing).flatMap(IndexLocation.standard(for:))
        }
        return location.map { IndexSettings(location: $0, trust: trustIndex) }
    }
}
