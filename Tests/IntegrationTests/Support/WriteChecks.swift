import Foundation
// sys/xattr.h, which Swift's Glibc module leaves out, comes with the libfuse module.
import CFuse
#if canImport(Glibc)
import Glibc
#endif

/// Independent readers and writers for the fault and crash tests: payloads
/// read by Foundation's own plist parser, the journal by its JSON parser,
/// and a save done the careful way, step by step.
enum WriteChecks {
    /// A payload's keys as Foundation reads them, or nil if it does not parse.
    static func plist(_ bytes: [UInt8]?) -> [String: Any]? {
        bytes.flatMap { try? PropertyListSerialization.propertyList(from: Data($0), format: nil) as? [String: Any] }
    }

    /// Lines of `BACKING/.queryfs-journal` that do not read as an entry
    /// (a JSON object with id, time, item, changes and files), and an
    /// unended last line. Empty when there is no journal.
    static func journalProblems(in backing: String) -> [String] {
        guard let bytes = RawFiles.read(backing + "/.queryfs-journal") else { return [] }
        var problems: [String] = []
        for (number, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            if object == nil || object?["id"] is String == false || object?["time"] is NSNumber == false
                || object?["item"] is String == false || object?["changes"] is [Any] == false || object?["files"] is [Any] == false
            {
                problems.append("journal line \(number + 1) does not parse: \(String(decoding: line.prefix(120), as: UTF8.self))")
            }
        }
        if bytes.last.map({ $0 != 0x0A }) == true { problems.append("the journal's last line is not ended") }
        return problems
    }

    /// The `user.xdg.tags` attribute of a path (not following a symlink), or nil.
    static func tagAttribute(_ path: String) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = lgetxattr(path, "user.xdg.tags", &buffer, buffer.count)
        return count < 0 ? nil : Array(buffer[0..<count])
    }

    /// What a careful program does to replace a file: a new file beside it,
    /// written, fsync'ed, closed, renamed over, and the folder fsync'ed. The
    /// step that failed and its errno, or nil. A step failing before the
    /// rename removes the new file.
    static func save(_ bytes: [UInt8], as path: String, temporary: String) -> (step: String, errno: Int32)? {
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { return ("create", errno) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written != bytes.count {
            let code = written < 0 ? errno : 0
            close(fd)
            unlink(temporary)
            return ("write", code)
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            unlink(temporary)
            return ("fsync", code)
        }
        if close(fd) != 0 {
            let code = errno
            unlink(temporary)
            return ("close", code)
        }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            return ("rename", code)
        }
        let folder = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY)
        guard folder >= 0 else { return ("open folder", errno) }
        defer { close(folder) }
        if fsync(folder) != 0 { return ("fsync folder", errno) }
        return nil
    }
}
