#if canImport(Glibc)
import Glibc
#endif
import QueryFSMount

/// Stops the command with one line when `path` lies in a queryfs mount that
/// cannot answer it (`MountStatusFile.whyUnusable`): asked before anything
/// else reads the path, which would wait on a stopped daemon for good. A
/// path that is a file, not a folder, is said to be one (found from outside:
/// the message blamed `PATH/.queryfs.toml`, or the journal).
func requireUsableMount(_ path: String) throws {
    if let why = MountStatusFile.whyUnusable(containing: path) { throw Failure(why) }
    var status = stat()
    if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
        throw Failure("backing directory \(path) is not a directory")
    }
}
