import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `inotifywait -m` (package inotify-tools) on folders of a mount, as a
/// file manager watches them: the events it printed, parsed. Only changes
/// (not opens and reads: the test's own listings would show).
final class EventWatch {
    struct Event: Equatable, CustomStringConvertible {
        var folder: String
        var kinds: Set<String>
        var name: String
        var description: String { "\(folder)|\(kinds.sorted().joined(separator: ","))|\(name)" }
    }

    private let pid: pid_t
    private let output: String
    private let scratch: String

    /// Starts watching `folders` and returns once the watches are set (or fails the test).
    init(_ folders: [String], file: StaticString = #filePath, line: UInt = #line) {
        scratch = makeTemporaryDirectory(prefix: "queryfs-events")
        output = scratch + "/events"
        let errors = scratch + "/errors"
        pid = Program.spawn(["inotifywait", "-m", "--format", "%w|%e|%f", "-e", "create,delete,moved_from,moved_to,attrib,modify,delete_self,move_self"] + folders, stdout: output, stderr: errors)
        let established = eventually(timeout: 10) {
            (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("Watches established") == true
        }
        XCTAssertTrue(established, "inotifywait did not start: \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")", file: file, line: line)
    }

    deinit { stop() }

    func stop() {
        if pid > 0 {
            kill(pid, SIGTERM)
            _ = Program.wait(pid, timeout: 5)
        }
        try? FileManager.default.removeItem(atPath: scratch)
    }

    var events: [Event] {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            var folder = String(fields[0])
            if folder.hasSuffix("/") { folder.removeLast() }
            return Event(folder: folder, kinds: Set(fields[1].split(separator: ",").map(String.init)), name: String(fields[2]))
        }
    }

    func events(in folder: String) -> [Event] { events.filter { $0.folder == folder } }

    /// Waits until an event in `folder` satisfies `condition`.
    func waitFor(in folder: String, timeout: Double = 5, _ condition: (Event) -> Bool) -> Bool {
        eventually(timeout: timeout) { events(in: folder).contains(where: condition) }
    }

    /// The names of `old` after the events in `folder`, applied in order as
    /// a file manager applies them.
    func applied(to old: [String], in folder: String) -> Set<String> {
        var names = Set(old)
        for event in events(in: folder) {
            if event.kinds.contains("DELETE") || event.kinds.contains("MOVED_FROM") { names.remove(event.name) }
            if event.kinds.contains("CREATE") || event.kinds.contains("MOVED_TO") { names.insert(event.name) }
        }
        return names
    }

    /// Names that events in `folder` delete or move away though, applied in
    /// order to `old`, no earlier event or `old` had them: a watcher's copy
    /// that went wrong (GIO drops such events, and the entry it did hear of stays).
    func unannouncedNames(from old: [String], in folder: String) -> [String] {
        var names = Set(old)
        var unheard: [String] = []
        for event in events(in: folder) {
            if event.kinds.contains("DELETE") || event.kinds.contains("MOVED_FROM") {
                if names.remove(event.name) == nil { unheard.append(event.name) }
            }
            if event.kinds.contains("CREATE") || event.kinds.contains("MOVED_TO") { names.insert(event.name) }
        }
        return unheard
    }
}
