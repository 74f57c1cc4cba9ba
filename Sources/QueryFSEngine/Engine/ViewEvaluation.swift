/// One entry of a view as the mount shows it: a symlink named so that `ls`
/// lists the view in order.
package struct ViewEntry: Equatable, Sendable {
    package var name: [UInt8]
    package var target: [UInt8]
    /// Index of the item in the catalog it was computed from.
    package var itemIndex: Int
    /// The item's `modified`, shown as the symlink's mtime.
    package var modified: Timestamp

    package var nameString: String { String(decoding: name, as: UTF8.self) }
    package var targetString: String { String(decoding: target, as: UTF8.self) }
}

extension ViewDefinition {
    /// Indexes of the items in the view, in the view's order.
    /// `columns`, when given, must be over these same items: many views over
    /// one array share its sort columns.
    package func select(_ items: [Item], columns: SortColumns? = nil) -> [Int] {
        // A loop over the array itself: through a closure, or through an
        // unsafe buffer (memory the compiler cannot prove unchanged during
        // the call), each test copied the item first (a dozen retains).
        var selected: [Int] = []
        let filter = filter
        for index in items.indices where filter.matches(items[index]) { selected.append(index) }
        if let columns, columns.sort(&selected, order: order) { return selected }
        return items.withUnsafeBufferPointer { items in
            ViewSorter.sort(&selected, items: items, order: order)
            return selected
        }
    }

    /// The view's entries over `items`.
    package func entries(of items: [Item], linkStyle: LinkStyle = .relative) -> [ViewEntry] {
        let selected = select(items)
        var entries: [ViewEntry] = []
        entries.reserveCapacity(selected.count)
        let shape = EntryShape(view: self, count: selected.count, linkStyle: linkStyle)
        for (offset, index) in selected.enumerated() {
            entries.append(shape.entry(rank: offset + 1, of: items, at: index, index: index))
        }
        return entries
    }

    /// The view's entries when `members` are already its items in its order
    /// (a stored order); `itemIndex` is the position in `members`.
    package func entries(ordered members: [Item], linkStyle: LinkStyle = .relative) -> [ViewEntry] {
        var entries: [ViewEntry] = []
        entries.reserveCapacity(members.count)
        let shape = EntryShape(view: self, count: members.count, linkStyle: linkStyle)
        for index in members.indices {
            entries.append(shape.entry(rank: index + 1, of: members, at: index, index: index))
        }
        return entries
    }
}

/// What every entry of one listing shares, worked out once per listing
/// rather than once per entry: the rank's width, the folder's depth (from
/// the view's path, split per call) and how entries are named and point.
private struct EntryShape {
    let width: Int
    let depth: Int
    let naming: ViewDefinition.EntryTitle
    let linkStyle: LinkStyle

    init(view: ViewDefinition, count: Int, linkStyle: LinkStyle) {
        width = EntryNaming.rankWidth(count: count)
        depth = view.depth
        naming = view.entryTitle
        self.linkStyle = linkStyle
    }

    /// The entry of `items[position]`. Its fields are read from the array
    /// one by one: an `Item` passed whole was copied first (a dozen retains
    /// per entry, a sixth of `queryfs ls` of 100,000 items).
    func entry(rank: Int, of items: [Item], at position: Int, index: Int) -> ViewEntry {
        let name = items[position].name
        let (title, ext) = EntryNaming.entryTitle(title: items[position].title, name: name,
                                                  conflictOf: items[position].conflictOf, naming: naming)
        return ViewEntry(
            name: EntryNaming.entryName(rank: rank, width: width, title: title, ext: ext),
            target: linkStyle.target(for: name, depth: depth),
            itemIndex: index,
            modified: items[position].modified)
    }
}

/// Every view over a set of items: the built-ins, one per tag in use, and
/// any configured views.
package struct ViewSet: Sendable, Equatable {
    package var fixed: [ViewDefinition]
    package var desktopEntries: DesktopEntryViews

    package init(fixed: [ViewDefinition] = ViewDefinition.builtIn, desktopEntries: DesktopEntryViews = DesktopEntryViews()) {
        self.desktopEntries = desktopEntries
        self.fixed = []
        self.fixed = fixed.map(styled)
    }

    /// Tag folder names in use, sorted bytewise.
    package static func tagFolders(of items: [Item]) -> [String] {
        var folders = Set<String>()
        for item in items {
            for tag in item.tags {
                folders.formUnion(EntryNaming.tagFolderNames(tag))
            }
        }
        return folders.sorted { compareBytes(Array($0.utf8), Array($1.utf8)) < 0 }
    }

    /// All views over `items`, fixed views first, then `tag/<tag>/` folders.
    package func views(over items: [Item]) -> [ViewDefinition] {
        fixed + Self.tagFolders(of: items).map { styled(.tag(folder: $0)) }
    }

    /// The view at a path as typed by a user (`unarchived`, `tag/rock∕metal`,
    /// with or without a trailing slash), or nil.
    package func view(at path: String, over items: [Item]) -> ViewDefinition? {
        let components = path.split(separator: "/").map(String.init)
        if let view = fixed.first(where: { $0.path == components }) { return view }
        // `tag/a/b`: the folder of the nested tag `a/b`.
        if components.count >= 2, components[0] == ViewDefinition.tagFolder {
            let folder = components.dropFirst().joined(separator: "/")
            // The first item in the folder answers: not every folder of every item named first.
            if items.contains(where: { $0.tags.contains { EntryNaming.tagFolderNames($0).contains(folder) } }) {
                return styled(.tag(folder: folder))
            }
        }
        return nil
    }

    package var payloadKeyPaths: Set<String> { fixed.reduce(into: []) { $0.formUnion($1.payloadKeyPaths) } }
}
