// queryfs-live-list: a terminal list of one view of a collection, kept
// current as the folder changes — the queryfs library's sample program.
//
//   queryfs-live-list BACKING [VIEW]     VIEW: by-name (default), tag/swift, a query
//
// In a terminal: rows that come flash green, rows that move yellow, rows
// that change cyan, rows that go red before they leave. j/k or the arrows
// select, `a` archives or unarchives the selected item, `t` tags it, `q` quits.
// With stdin not a terminal (scripts, tests): each change is printed as
// lines, and commands are read from stdin: `archive N`, `unarchive N`,
// `tag N TAG`, `quit`.
#if canImport(Glibc)
import Glibc
#endif
import QueryFS

let arguments = CommandLine.arguments.dropFirst()
let usage = """
    usage: queryfs-live-list BACKING [VIEW]
      A list of one view of BACKING, kept current as the folder changes.
      VIEW: by-name (default), a built-in or configured view, tag/NAME, or a query ('tag:swift -archived').
      In a terminal: j/k or the arrows select, a archives or unarchives, t tags, q quits.
      Otherwise each change is printed, and stdin takes: archive N, unarchive N, tag N TAG, quit.

    """
if arguments.first == "--help" || arguments.first == "-h" {
    emit(usage, to: STDOUT_FILENO)
    exit(0)
}
guard let directory = arguments.first, arguments.count <= 2 else {
    emit(usage, to: STDERR_FILENO)
    exit(2)
}
let collection: ItemCollection
do {
    collection = try ItemCollection(at: directory, view: arguments.dropFirst().first ?? "by-name")
} catch {
    emit("queryfs-live-list: \(error)\n", to: STDERR_FILENO)
    exit(1)
}

let screen: any ListScreen = isatty(STDIN_FILENO) == 1 ? TerminalScreen(title: "\(directory) — \(collection.view)") : PrintedScreen()
// Commands edit the collection; the edits come back as changes like any other.
Task.detached { await screen.readCommands(for: collection) }
for await change in collection.changes {  // ends when a command closes the collection
    await screen.show(change)
}
await screen.finish()
