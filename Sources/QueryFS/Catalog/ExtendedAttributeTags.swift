#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// Tags kept in the `user.xdg.tags` extended attribute: the freedesktop
/// convention (KDE's file manager writes it), comma-separated. An item's
/// tags are its payload's, then these (SPEC §1 is silent on the order; the
/// payload's own come first, a tag in both counts once).
enum ExtendedAttributeTags {
    static let attributeName = "user.xdg.tags"

    /// The tags of the open file or folder `fd`, or of `name` inside the folder `fd`.
    static func read(fd: Int32, name: UnsafePointer<CChar>? = nil) -> [String] {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let length = buffer.withUnsafeMutableBytes { raw in
                qfs_getxattrat(fd, name, attributeName, raw.baseAddress, UInt(raw.count))
            }
            if length >= 0 { return parse(buffer[..<length]) }
            // Larger than the buffer: ask for the size, then read again.
            guard errno == ERANGE else { return [] }
            let needed = qfs_getxattrat(fd, name, attributeName, nil, 0)
            guard needed > buffer.count, needed <= 1 << 20 else { return [] }
            buffer = [UInt8](repeating: 0, count: needed)
        }
    }

    static func parse(_ bytes: some Collection<UInt8>) -> [String] {
        String(decoding: bytes, as: UTF8.self)
            .split(separator: ",")
            .map { $0.trimmingCharacters(in: " \t\n\0") }
            .filter { !$0.isEmpty }
    }

    /// Payload tags first, then the attribute's that are not among them.
    static func merge(payload: [String], attribute: [String]) -> [String] {
        guard !attribute.isEmpty else { return payload }
        var seen = Set(payload)
        return payload + attribute.filter { seen.insert($0).inserted }
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        return String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
