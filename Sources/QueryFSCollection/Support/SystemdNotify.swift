#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// systemd's readiness protocol (sd_notify(3)): one datagram of
/// `KEY=VALUE` lines to the socket named by `NOTIFY_SOCKET`. Spoken
/// directly — a socket and a sendto — rather than linking libsystemd.
/// Does nothing when not run by systemd with `Type=notify`.
package enum SystemdNotify {
    package enum Outcome: Equatable, Sendable {
        /// Not run by systemd with `Type=notify` (no `NOTIFY_SOCKET`).
        case notRequested
        case sent
        /// systemd asked, and the message did not reach it (why).
        case failed(String)
    }

    /// Sends `fields` (e.g. `READY=1`).
    @discardableResult
    package static func send(_ fields: [String]) -> Outcome {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return .notRequested }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // "@name" is an abstract socket: its name starts with a NUL byte.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return .failed("NOTIFY_SOCKET \(path): name too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failed("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let message = Array((fields.joined(separator: "\n") + "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, target, length) }
            }
        }
        return sent == message.count ? .sent : .failed("NOTIFY_SOCKET \(path): \(String(cString: strerror(errno)))")
    }
}
