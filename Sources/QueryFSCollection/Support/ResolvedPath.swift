#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// `path` with every symlink and `..` resolved (realpath(3)), or nil with
/// errno set if it does not exist.
package func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// The working directory ("." if it cannot be told).
package func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
