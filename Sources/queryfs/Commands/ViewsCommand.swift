import ArgumentParser
import QueryFSEngine
import QueryFSCollection
import QueryFSMount

/// `queryfs views BACKING`: every view path with its count.
struct ViewsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "views", abstract: "List every view path with its number of entries.")

    @Argument(help: "The backing directory.", completion: .directory) var backing: String
    @Option(name: .customLong("config"), help: "The configuration file (default: BACKING/.queryfs.toml when there is one).")
    var configFile: String?
    @OptionGroup var index: IndexOptions

    func run() throws {
        try reportingFailures { try requireUsableMount(backing) }
        if configFile == nil, let mountPoint = MountedViews.mountPoint(backing) {
            var output = StandardOutput()
            for (path, count) in MountedViews.counts(mountPoint: mountPoint) { output.line("\(path)\t\(count)") }
            output.flush()
            return
        }
        try reportingFailures {
            // Saved queries are views too, as `query/Q` (found from outside: a mount
            // listed them and `views BACKING` did not); their payload keys are read.
            let configuration = try CatalogLoader.configurationFor(backing, configFile: configFile)
            let saved = configuration.savedQueries.compactMap { text in (try? Query(parsing: text, now: .now)).map { (text, $0) } }
            var sources = FieldSources()
            for (_, query) in saved { sources.extraKeyPaths.formUnion(query.payloadKeyPaths) }
            let catalog = try CatalogLoader.load(backing, configFile: configFile, sources: sources, index: index.settings(for: backing))
            var output = StandardOutput()
            for view in catalog.views {
                output.line("\(view.pathString)\t\(view.select(catalog.items).count)")
            }
            for (text, query) in saved {
                let view = query.view(at: [ViewDefinition.queryFolder, text])
                output.line("\(view.pathString)\t\(view.select(catalog.items).count)")
            }
            output.finish()
        }
    }
}

/// `queryfs status BACKING`: a summary and every payload problem; of a
/// mount (MOUNTPOINT, or a BACKING that the caller or root mounted), what its
/// daemon says.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Summarize the items and list payload problems.",
        discussion: "Given a mount point (or a backing directory mounted by the same user or by root), the running daemon answers "
            + "(MOUNTPOINT/.queryfs/status, JSON), without scanning anything.")

    @Argument(help: "The backing directory, or a mount point.", completion: .directory) var backing: String
    @Option(name: .customLong("config"), help: "The configuration file (default: BACKING/.queryfs.toml when there is one).")
    var configFile: String?
    @OptionGroup var index: IndexOptions

    func run() throws {
        try reportingFailures { try requireUsableMount(backing) }
        // Index options ask about the index file: answered as if nothing were mounted.
        if configFile == nil, !index.isGiven, let (mountPoint, text) = MountStatusFile.read(for: backing) {
            var output = StandardOutput()
            output.line("mounted at: \(mountPoint)")
            output.write(Array(text.utf8))
            output.flush()
            return
        }
        try reportingFailures {
            let (catalog, use) = try CatalogLoader.loadReporting(backing, configFile: configFile, index: index.settings(for: backing))
            var output = StandardOutput()
            for line in CatalogSummary(catalog).lines { output.line(line) }
            if let use {
                output.line("index: \(use.path): \(use.how)\(use.itemsRead > 0 ? ", \(use.itemsRead) items read" : "")")
            } else {
                output.line("index: none used")
            }
            for (item, problem) in catalog.problems {
                // Escaped: a name or a payload's text must not forge a line or reach the terminal as a sequence.
                output.write(Array("  ".utf8) + TerminalText.escaped(item.bytes) + Array(": \(TerminalText.escaped(problem))\n".utf8))
            }
            output.finish()
        }
    }
}
