import ArgumentParser
import QueryFS
#if canImport(Glibc)
import Glibc
#endif

/// `queryfs watch MOUNTPOINT/VIEW` or `queryfs watch BACKING VIEW`: one JSON
/// line per change to the view, until interrupted.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each change to a view as a JSON line (deletions, insertions, moves, updates).")

    @Argument(help: "MOUNTPOINT/VIEW, or BACKING when VIEW follows.") var target: String
    @Argument(help: "The view, when the first argument is the backing directory.") var view: String?

    func run() throws {
        try reportingFailures {
            let (backing, viewPath) = try resolve()
            let catalog: LiveCatalog
            do {
                catalog = try LiveCatalog(backingPath: backing, log: { printError($0) })
            } catch let error as SystemError {
                throw Failure("cannot watch \(backing): \(error.message)")
            }
            let components = viewPath.split(separator: "/").map(String.init)
            let isTagPath = components.count == 2 && components[0] == ViewDefinition.tagFolder
            guard catalog.withIndex({ $0.view(at: components) != nil }) || isTagPath else {
                throw Failure("no view '\(viewPath)' in \(backing) (`queryfs views \(backing)` lists them)")
            }
            catalog.subscribe { update in
                for change in update.changes where change.path == components {
                    var output = StandardOutput()
                    output.line(change.jsonLine)
                    output.flush()
                }
            }
            catalog.start()
            while true { pause() }
        }
    }

    /// The backing directory and view path the arguments name.
    private func resolve() throws -> (String, String) {
        if let view { return (target, view) }
        let absolute = target.hasPrefix("/") ? target : currentDirectory() + "/" + target
        guard let (mount, rest) = MountTable.queryfsMount(containing: normalized(absolute)), !rest.isEmpty else {
            throw Failure("\(target) is not a view of a queryfs mount (or name BACKING and VIEW)")
        }
        return (mount.source, rest)
    }

    private func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes `.`, empty components and a trailing slash (`..` is kept literal).
    private func normalized(_ path: String) -> String {
        "/" + path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }
}
