#if canImport(Glibc)
import Glibc
#endif

/// `path` with every symlink and `..` resolved (realpath(3)), or nil with
/// errno set if it does not exist.
public func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
