import ArgumentParser
import Logging
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

    @Argument(help: "MOUNTPOINT/VIEW, or BACKING when VIEW follows.", completion: .directory) var target: String
    @Argument(help: "The view or a query (tag:swift -archived), when the first argument is the backing directory.",
              completion: .custom { words, _, prefix in ViewCompletion.candidates(words, prefix: prefix) })
    var view: String?

    func run() throws {
        try reportingFailures {
            let (backing, viewPath) = try resolve()
            var components = viewPath.split(separator: "/").map(String.init)
            let isTagPath = components.count == 2 && components[0] == ViewDefinition.tagFolder
            let isBuiltIn = ViewDefinition.builtIn.contains { $0.path == components }
            // Anything else is a query, watched as a view of its own.
            var viewSet = ViewSet()
            var sources = FieldSources()
            if !isTagPath && !isBuiltIn {
                // MOUNTPOINT/query/<query> names its query after the folder.
                let text = components.count == 2 && components[0] == ViewDefinition.queryFolder ? components[1] : viewPath
                let query: Query
                do {
                    query = try Query(parsing: text, now: .now)
                } catch {
                    throw Failure("no view '\(viewPath)' in \(backing), nor a query: \(error) (`queryfs views \(backing)` lists the views)")
                }
                components = [ViewDefinition.queryFolder, text]
                viewSet.fixed.append(query.view(at: components))
                sources.extraKeyPaths = query.payloadKeyPaths
            }
            let catalog: LiveCatalog
            do {
                // Every line to stderr (or the journal, under systemd), "warning: " and all.
                let logger = Logger(label: "queryfs.watch") { _ in MountLogHandler(log: MountLog(path: nil)) }
                catalog = try LiveCatalog(backingPath: backing, viewSet: viewSet, sources: sources, logger: logger)
            } catch let error as SystemError {
                throw Failure("cannot watch \(backing): \(error.message)")
            }
            let watched = components
            catalog.subscribe { update in
                for change in update.changes where change.path == watched {
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

    /// Removes `.`, empty components and a trailing slash (`..` is kept literal).
    private func normalized(_ path: String) -> String {
        "/" + path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }
}
