import ArgumentParser
import QueryFSEngine
import QueryFSCollection
import QueryFSMount

/// `queryfs connection-guard --daemon PID`: started by a mounted daemon, never
/// by hand (see `ConnectionGuard`): aborts the mount's FUSE connection once
/// that daemon dies, so a killed daemon never leaves a mount that hangs.
struct ConnectionGuardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ConnectionGuard.commandName,
        abstract: "Abort a mount's FUSE connection when its daemon dies (started by the daemon).",
        shouldDisplay: false
    )

    @Option(help: "The daemon's process id: it must be this process's parent.") var daemon: Int32

    func validate() throws {
        guard daemon > 1 else { throw ValidationError("--daemon must be a process id") }
    }

    func run() throws {
        let status = ConnectionGuard.watch(daemon: daemon)
        if status != 0 { throw ExitCode(status) }
    }
}
