#if canImport(Glibc)
import Glibc
#endif

/// Standard input, output and error, opened on /dev/null when the caller
/// closed them (`queryfs mount <&-`, some launchers): otherwise the first
/// files the program opens get descriptors 0–2, and what is later written
/// to "standard output" or passed to a child as its stdin lands in them
/// (found from outside: a mount started with a standard descriptor closed
/// answered every write with ENOTDIR, a folder's descriptor having become
/// fd 0, 1 or 2).
enum StandardDescriptors {
    /// Whether standard output was closed when the program started: what
    /// it writes there fails as `ls` fails (EBADF), not silently into /dev/null.
    /// Set once, before any thread starts.
    nonisolated(unsafe) private(set) static var outputWasClosed = false

    static func ensureOpen() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            if descriptor == 1 { outputWasClosed = true }
            // open() returns the lowest free descriptor: this one.
            let opened = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0, opened != descriptor { close(opened) }
        }
    }
}
