import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// Shell completion of a VIEW argument: the view paths of the BACKING named
/// earlier on the command line (fixed, configured and tag views), and its
/// saved queries. Runs inside the shell's TAB: an unreadable BACKING offers
/// nothing rather than an error.
enum ViewCompletion {
    static func candidates(_ words: [String], prefix: String) -> [String] {
        // The first word after the subcommand that names a directory is BACKING.
        guard let backing = words.dropFirst(2).first(where: { !$0.hasPrefix("-") }),
              let catalog = try? CatalogLoader.load(expandingTilde(backing), index: resolvedPath(expandingTilde(backing))
                  .flatMap(IndexLocation.standard(for:)).map { IndexSettings(location: $0) })
        else { return [] }
        var names = catalog.views.map(\.pathString)
        if let configuration = try? CatalogLoader.configurationFor(expandingTilde(backing), configFile: nil) {
            names += configuration.savedQueries
        }
        return names.filter { $0.hasPrefix(prefix) }
    }

    private static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~/"), let home = getenv("HOME") else { return path }
        return String(cString: home) + path.dropFirst()
    }
}
