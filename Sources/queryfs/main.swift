import ArgumentParser
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// `queryfs`: live, queryable folders over a directory of document bundles.
struct QueryFSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queryfs",
        abstract: "Sorted, filtered, live views of a directory of document bundles.",
        discussion: """
            `queryfs mount BACKING MOUNTPOINT` shows BACKING's items as live folders of symlinks (by-name/, tag/TAG/, \
            query/QUERY/); `ls`, `views`, `status` and `watch` answer the same views without a mount; `tag`, `archive`, \
            `unarchive` and `set` edit items, `history` and `undo` list and take back edits. Every command exits 0 on \
            success and 2 on an error, said in one line on stderr. The configuration file is described in queryfs(5). \
            As a mount(8) helper (fstab type fuse.queryfs): queryfs BACKING MOUNTPOINT -o OPTIONS.
            """,
        version: QueryFSVersion.string,
        subcommands: [
            MountCommand.self, UnmountCommand.self, ListCommand.self, ViewsCommand.self, StatusCommand.self,
            WatchCommand.self, TagCommand.self, ArchiveCommand.self, UnarchiveCommand.self, SetCommand.self,
            HistoryCommand.self, UndoCommand.self, ConnectionGuardCommand.self,
        ]
    )
}

StandardDescriptors.ensureOpen()
MemoryTrim.fitAddressSpaceLimit()
CrashLine.install()
do {
    // mount(8), mount.fuse3 and fstab call `queryfs BACKING MOUNTPOINT -o OPTIONS`.
    let arguments = try MountHelper.commandLine(from: CommandLine.arguments)
    try DashedWords.check(arguments)
    var command = try QueryFSCommand.parseAsRoot(arguments)  // the same as ParsedCommandLine.arguments
    try command.run()
} catch {
    // --help and the like print their text and succeed; a command that chose its status keeps it.
    if QueryFSCommand.exitCode(for: error) == .success || error is ExitCode { QueryFSCommand.exit(withError: error) }
    // A mistake on the command line: one line (the usage is one `--help` away), exit 2.
    let subcommand = CommandLine.arguments.dropFirst().first { !$0.hasPrefix("-") }
        .flatMap { name in QueryFSCommand.configuration.subcommands.first { $0.configuration.commandName == name } }
    let help = subcommand.map { "queryfs \($0.configuration.commandName ?? "") --help" } ?? "queryfs --help"
    var message = QueryFSCommand.message(for: error)
    // An option after `--` is a word, not an option (found from outside: `ls B -- -archived --long`
    // said only "Unexpected argument '--long'").
    if let separator = CommandLine.arguments.firstIndex(of: "--"),
       let late = CommandLine.arguments[(separator + 1)...].first(where: { $0.hasPrefix("--") && message.contains("'\($0)'") }) {
        message += ": \(late) comes after `--`, which ends the options; put it before"
    }
    printError("\(message) (see `\(help)`)")
    exit(2)
}
