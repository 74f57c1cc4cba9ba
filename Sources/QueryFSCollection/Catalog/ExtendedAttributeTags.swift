#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// Tags kept in the `user.xdg.tags` extended attribute: the freedesktop
/// convention (KDE's file manager writes it), comma-separated. An item's
/// tags are its payload's, then these (SPEC §1 is silent on the order; the
/// payload's own come first, a tag in both counts once).
enum ExtendedAttributeTags {
    static let attributeName = "user.xdg.tags"

    /// The tags of the open file or folder `fd`, or of `name` inside the
    /// folder `fd`, and why they could not be read (no attribute, or a file
    /// system without them, is no problem: no tags).
    static func read(fd: Int32, name: UnsafePointer<CChar>? = nil) -> (tags: [String], problem: String?) {
        // First into the stack: every item of a scan comes here, and most have
        // no attribute at all (a zeroed 1 KiB array each was 1 % of a notes scan's mallocs).
        let (length, code, tags): (Int, Int32, [String]) = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { raw in
            let length = qfs_getxattrat(fd, name, attributeName, raw.baseAddress, UInt(raw.count))
            return length >= 0 ? (length, 0, parse(UnsafeBufferPointer(rebasing: raw[..<length]))) : (length, errno, [])
        }
        if length >= 0 { return (tags, nil) }
        switch code {
        case ENODATA, ENOTSUP, EOPNOTSUPP: return ([], nil)
        case ERANGE: break  // larger: read below into a buffer its size
        case let code: return ([], problem(code))
        }
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let length = buffer.withUnsafeMutableBytes { raw in
                qfs_getxattrat(fd, name, attributeName, raw.baseAddress, UInt(raw.count))
            }
            if length >= 0 { return (parse(buffer[..<length]), nil) }
            let code = errno
            switch code {
            case ENODATA, ENOTSUP, EOPNOTSUPP: return ([], nil)
            case ERANGE:
                // Larger than the buffer: ask for the size, then read again.
                let needed = qfs_getxattrat(fd, name, attributeName, nil, 0)
                if needed < 0 { return ([], problem(errno)) }
                guard needed <= maximumSize else { return ([], "\(attributeName) is larger than \(maximumSize) bytes; ignored") }
                buffer = [UInt8](repeating: 0, count: max(needed, buffer.count + 1))
            default:
                return ([], problem(code))
            }
        }
    }

    /// The largest attribute read (the kernel allows 64 KiB).
    static let maximumSize = 1 << 16

    private static func problem(_ code: Int32) -> String {
        "cannot read \(attributeName): \(String(cString: strerror(code)))"
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
