import ArgumentParser
import QueryFS

/// `queryfs ls BACKING VIEW`: the entries a mount would show, in order.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "Print a view's entry names, one a line, in order.",
        discussion: "VIEW is a view's path as the mount shows it: by-name, by-modified, by-created, "
            + "unarchived, archived, tag/<tag> (the sanitized folder name)."
    )

    @Argument(help: "The backing directory.") var backing: String
    @Argument(help: "The view, e.g. unarchived or tag/swift.") var view: String
    @Flag(name: .long, help: "Print each name, a tab and the symlink target.") var long = false
    @Option(name: .customLong("absolute-links"), help: "Show targets as absolute links under this mount point.")
    var absoluteLinksMountPoint: String?

    func run() throws {
        try reportingFailures {
            let catalog = try CatalogLoader.load(backing)
            guard let definition = catalog.view(at: view) else {
                throw Failure("no view '\(view)' in \(backing) (`queryfs views \(backing)` lists them)")
            }
            let style: LinkStyle = absoluteLinksMountPoint.map { .absolute(mountPoint: $0) } ?? .relative
            var output = StandardOutput()
            for entry in catalog.entries(of: definition, linkStyle: style) {
                output.write(entry.name)
                if long {
                    output.write([0x09])
                    output.write(entry.target)
                }
                output.write([0x0A])
            }
            output.flush()
        }
    }
}

/// Loads a catalog, turning system errors into the user's one line.
enum CatalogLoader {
    static func load(_ backing: String) throws -> Catalog {
        do {
            return try Catalog.load(backing: backing)
        } catch {
            throw Failure("cannot read backing directory \(backing): \(error.message)")
        }
    }
}
