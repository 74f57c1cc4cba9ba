#if canImport(Glibc)
import Glibc
#endif

/// The views whose entries are freedesktop link files instead of symlinks
/// (`desktop-entries` in `.queryfs.toml`): shell patterns (fnmatch(3), `*`
/// crossing `/`) over view paths as `queryfs views` spells them — `by-name`,
/// `reading/today`, `tag/*` for every tag folder, `query/*`, `*` for all.
/// Opt-in: a symlink is what every tool follows; a desktop file is what a
/// double-click in a file manager opens in the browser.
package struct DesktopEntryViews: Sendable, Equatable {
    package var patterns: [String]

    package init(_ patterns: [String] = []) {
        self.patterns = patterns
    }

    /// Whether the view folder at `path` shows desktop entries.
    package func matches(_ path: [String]) -> Bool {
        guard !patterns.isEmpty else { return false }
        let text = path.joined(separator: "/")
        return patterns.contains { fnmatch($0, text, 0) == 0 }
    }
}

extension ViewSet {
    /// How the entries of the folder at `path` are named and what they are.
    package func entryTitle(forPath path: [String]) -> ViewDefinition.EntryTitle {
        var naming = ViewDefinition.entryTitle(forPath: path)
        naming.desktopFile = desktopEntries.matches(path)
        return naming
    }

    /// `view` with the entries this set gives its path.
    package func styled(_ view: ViewDefinition) -> ViewDefinition {
        var styled = view
        styled.entryTitle = entryTitle(forPath: view.path)
        return styled
    }
}
