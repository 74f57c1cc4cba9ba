/// A view: a folder path under the mount, a filter and an order (SPEC §2).
/// Built-in views, tag views and configured views are all just values of this.
package struct ViewDefinition: Equatable, Sendable {
    /// Path components under the mount root, e.g. `["by-name"]`, `["tag", "rock∕metal"]`.
    package var path: [String]
    package var filter: Predicate
    package var order: Ordering
    /// The shortest relative age in its query (seconds), if any: such a view
    /// selects differently as time passes and is evaluated again now and then.
    package var shortestAge: Double?
    /// What its entries are named after (SPEC §3: the item's title).
    package var entryTitle = EntryTitle.title

    /// What a view's entries are named after, behind their rank, and what
    /// they are on the mount.
    package struct EntryTitle: Sendable, Equatable, Hashable {
        package enum Source: Sendable, Equatable, Hashable {
            /// The item's title (every view but one).
            case title
            /// The name of the item the entry's item clashes with (`conflicts/`), exactly.
            case clashingItem
        }

        package var source: Source
        /// Entries are freedesktop link files (`0001 Title.desktop`, opened in
        /// the browser by a double-click) instead of symlinks: the views the
        /// configuration's `desktop-entries` names.
        package var desktopFile = false

        package init(source: Source, desktopFile: Bool = false) {
            self.source = source
            self.desktopFile = desktopFile
        }

        package static let title = EntryTitle(source: .title)
        package static let clashingItem = EntryTitle(source: .clashingItem)

        /// The extension a desktop entry's name ends with, in place of its item's.
        package static let desktopExtension = "desktop"
    }

    package init(path: [String], filter: Predicate, order: Ordering, shortestAge: Double? = nil) {
        self.path = path
        self.filter = filter
        self.order = order
        self.shortestAge = shortestAge
    }

    /// How the entries of the folder at `path` are named (only `conflicts/`
    /// differs), symlinks; `ViewSet.entryTitle(forPath:)` adds the desktop form.
    package static func entryTitle(forPath path: [String]) -> EntryTitle {
        path == conflicts.path ? conflicts.entryTitle : .title
    }

    /// The path as `queryfs ls` and `queryfs views` spell it (`tag/rock∕metal`).
    package var pathString: String { path.joined(separator: "/") }

    /// How many folders below the mount root the view's entries live.
    /// Levels below the mount's root (a nested tag's folder `a/b` is `tag/a/b/`: three).
    package var depth: Int { path.reduce(0) { $0 + $1.split(separator: "/").count } }

    package static let byName = ViewDefinition(path: ["by-name"], filter: .all, order: .titleNatural)
    package static let byModified = ViewDefinition(path: ["by-modified"], filter: .all, order: .newestModifiedFirst)
    package static let byCreated = ViewDefinition(path: ["by-created"], filter: .all, order: .newestCreatedFirst)
    package static let unarchived = ViewDefinition(
        path: ["unarchived"], filter: .compare(.archived, .equal, .bool(false)), order: .newestModifiedFirst)
    package static let archived = ViewDefinition(
        path: ["archived"], filter: .compare(.archived, .equal, .bool(true)), order: .newestModifiedFirst)

    /// The views every mount has, whatever the data.
    /// `conflicts/`: items a sync tool doubled (`ConflictPatterns`), by name, so that
    /// the copies of one item sit together.
    /// Its entries are named after the item each copy clashes with.
    package static let conflicts: ViewDefinition = {
        var view = ViewDefinition(path: ["conflicts"], filter: .glob(.conflict, "*"), order: Ordering([Ordering.Key(.name, ascending: true)]))
        view.entryTitle = .clashingItem
        return view
    }()

    package static let builtIn: [ViewDefinition] = [.byName, .byModified, .byCreated, .unarchived, .archived, .conflicts]

    /// The folder that holds one view per tag.
    package static let tagFolder = "tag"
    /// The folder of ad-hoc query views in a mount: `query/<query>/`.
    package static let queryFolder = "query"

    /// `tag/<folder>/`: items carrying a tag that sanitizes to `folder`, newest first.
    package static func tag(folder: String) -> ViewDefinition {
        ViewDefinition(path: [tagFolder, folder], filter: .hasTagFolder(folder), order: .newestModifiedFirst)
    }

    package var payloadKeyPaths: Set<String> { filter.payloadKeyPaths.union(order.payloadKeyPaths) }
}
