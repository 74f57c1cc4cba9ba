import QueryFSMount

/// Stops the command with one line when `path` lies in a queryfs mount that
/// cannot answer it (`MountStatusFile.whyUnusable`): asked before anything
/// else reads the path, which would wait on a stopped daemon for good.
func requireUsableMount(_ path: String) throws {
    if let why = MountStatusFile.whyUnusable(containing: path) { throw Failure(why) }
}
