import ArgumentParser

/// `queryfs`: live, queryable folders over a directory of document bundles.
struct QueryFSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queryfs",
        abstract: "Sorted, filtered, live views of a directory of document bundles.",
        subcommands: [
            MountCommand.self, UnmountCommand.self, ListCommand.self, ViewsCommand.self, StatusCommand.self,
            WatchCommand.self,
        ]
    )
}

CrashLine.install()
QueryFSCommand.main()
