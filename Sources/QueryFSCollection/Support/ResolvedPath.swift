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

/// `path` from the working directory, with `.`, `..` and repeated or
/// trailing slashes taken out by their text alone: nothing is asked of the
/// filesystem (a stale or hung mount on the way would answer an error, or never).
package func lexicallyAbsolute(_ path: String) -> String {
    var parts: [Substring] = []
    for part in ((path.hasPrefix("/") ? "" : currentDirectory() + "/") + path).split(separator: "/") {
        if part == "." { continue }
        if part == ".." { _ = parts.popLast() } else { parts.append(part) }
    }
    return "/" + parts.joined(separator: "/")
}
