import ArgumentParser
import Dispatch
import QueryFS
import Logging
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
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

    func validate() throws {
        // As for `ls`: an empty view from an unset variable would watch every item.
        if let view, view.allSatisfy(\.isWhitespace) {
            throw ValidationError("the view is empty: name a view (`queryfs views BACKING` lists them) or give a query")
        }
    }

    func run() throws {
        try reportingFailures {
            let (backing, viewPath) = try resolve()
            let collection: ItemCollection
            do {
                // Every line to stderr (or the journal, under systemd), "warning: " and all.
                let logger = Logger(label: "queryfs.watch") { _ in MountLogHandler(log: MountLog(path: nil)) }
                collection = try ItemCollection(at: backing, view: viewPath, logger: logger)
            } catch CollectionError.invalidView(let why) {
                throw Failure("\(why) in \(backing) (`queryfs views \(backing)` lists the views)")
            } catch {
                throw Failure("cannot watch \(backing): \(error)")
            }
            // The library's change sequence, printed as it comes; the first
            // change (the view as it is) is not a change to print.
            let ended = DispatchSemaphore(value: 0)
            Task {
                for await change in collection.changes {
                    guard let change = change.viewChange else { continue }
                    var output = StandardOutput()
                    output.line(change.jsonLine)
                    output.flush()
                }
                ended.signal()
            }
            ended.wait()
            if collection.isViewGone {
                throw Failure("the view \(viewPath) is gone: \(backing)'s configuration no longer has it; the watch ends")
            }
        }
    }

    /// The backing directory and view path the arguments name.
    private func resolve() throws -> (String, String) {
        let absolute = target.hasPrefix("/") ? target : currentDirectory() + "/" + target
        let mount = MountTable.queryfsMount(containing: normalized(absolute))
        // Refused as `ls` refuses a mount the caller may not enter (found from
        // outside: the watch went on quietly, from BACKING instead).
        try requireUsableMount(mount.map { $0.0.mountPoint } ?? target)
        if let view {
            // `watch MOUNTPOINT VIEW`: the mount's view (it read the mount as a
            // BACKING, polled it and heard nothing; found from outside).
            if let (mount, rest) = mount, rest.isEmpty { return (mount.source, view) }
            return (target, view)
        }
        guard let (mount, rest) = mount, !rest.isEmpty else {
            throw Failure("\(target) is not a view of a queryfs mount (or name BACKING and VIEW)")
        }
        return (mount.source, rest)
    }

    /// Removes `.`, empty components and a trailing slash (`..` is kept literal).
    private func normalized(_ path: String) -> String {
        "/" + path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }
}
