#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// A pipe one thread writes a byte to so that another, waiting in poll(2)
/// (on it and on other descriptors), wakes at once.
package final class WakeSignal: @unchecked Sendable {
    private var ends: [Int32] = [-1, -1]

    package init() throws(SystemError) {
        guard pipe(&ends) == 0 else { throw SystemError.current("pipe") }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        close(ends[0])
        close(ends[1])
    }

    /// The descriptor to poll for reading.
    var fd: Int32 { ends[0] }

    package func wake() {
        var byte: UInt8 = 1
        _ = write(ends[1], &byte, 1)  // a full pipe already wakes the reader
    }

    /// Empties the pipe (after waking).
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(ends[0], &buffer, buffer.count) > 0 {}
    }

    /// Waits up to `milliseconds` (-1: forever) for a wake; true if woken.
    package func wait(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }
}
