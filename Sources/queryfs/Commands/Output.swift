#if canImport(Glibc)
import Glibc
#endif

/// Buffered writes of raw bytes to stdout: entry names and targets are
/// bytes (item names need not be UTF-8), and 100,000 lines must be quick.
struct StandardOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    mutating func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func write(_ text: String) { write(Array(text.utf8)) }

    mutating func line(_ text: String) { write(Array(text.utf8) + [0x0A]) }

    mutating func flush() {
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(1, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // stdout closed (e.g. `| head`): nothing more to say
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
