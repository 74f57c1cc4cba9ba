#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import QueryFSCollection
import QueryFSEngine

/// The items processes opened to write, or linked into a view, lately
/// through the mount. A text editor that
/// opened a note from a view looks that name up again before each save; its
/// own save gave the note another rank, and a stale name is not found by a
/// mere look (`ViewOperations`, for file managers' ghosts), so its second
/// save failed: "No such file or directory" (found from outside, mousepad
/// with a note opened from `tag/work/`); Nautilus looks up the name it
/// pasted, and said "Error while copying". Such a process still finds the
/// item by a name of it whose rank moved; others do not (a file manager's
/// late look at a name gone must fail, or it keeps a ghost).
final class OpenedItems: Sendable {
    private struct Opened {
        let process: pid_t
        let item: ItemName
        let time: Double
    }

    /// An editing session: a note kept open in an editor for an hour is saved again.
    private static let seconds = 3600.0
    private static let kept = 256
    private let opened = Mutex<[Opened]>([])

    /// `thread` opened a file of `item` (the thread group is read now: the thread may be gone by the next look).
    func note(_ item: ItemName, openedBy thread: pid_t) {
        guard let process = Self.process(of: thread) else { return }
        let now = monotonicSeconds()
        opened.withLock { opened in
            opened.removeAll { $0.process == process && $0.item == item }
            if opened.count >= Self.kept { opened.removeFirst() }
            opened.append(Opened(process: process, item: item, time: now))
        }
    }

    /// The process of `thread`, if it opened anything lately (cheap: no listing search for the rest).
    func openingProcess(of thread: pid_t) -> pid_t? {
        guard let process = Self.process(of: thread) else { return nil }
        let now = monotonicSeconds()
        return opened.withLock { $0.contains { $0.process == process && now - $0.time < Self.seconds } } ? process : nil
    }

    /// Whether `process` opened `item` lately.
    func wasOpened(_ item: ItemName, by process: pid_t) -> Bool {
        let now = monotonicSeconds()
        return opened.withLock { $0.contains { $0.process == process && $0.item == item && now - $0.time < Self.seconds } }
    }

    /// `wasOpened` for the process of `thread` (read only when asked: an entry's title shared by several).
    func wasOpened(_ item: ItemName, byProcessOf thread: pid_t) -> Bool {
        guard let process = Self.process(of: thread) else { return false }
        return wasOpened(item, by: process)
    }

    /// The thread group (process) of a thread, from `/proc/<tid>/status`.
    static func process(of thread: pid_t) -> pid_t? {
        guard thread > 0 else { return nil }
        let fd = open("/proc/\(thread)/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Tgid:") }) else { return nil }
        return pid_t(String(line.dropFirst("Tgid:".count).filter { $0 != " " && $0 != "\t" }))
    }
}
