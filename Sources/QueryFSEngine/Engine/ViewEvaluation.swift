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
        return selected.enumerated().map { offset, index in
            entry(rank: offset + 1, count: selected.count, item: items[index], index: index, linkStyle: linkStyle)
        }
    }

    /// The view's entries when `members` are already its items in its order
    /// (a stored order); `itemIndex` is the position in `members`.
    package func entries(ordered members: [Item], linkStyle: LinkStyle = .relative) -> [ViewEntry] {
        members.enumerated().map { offset, item in
            entry(rank: offset + 1, count: members.count, item: item, index: offset, linkStyle: linkStyle)
        }
    }

    private func entry(rank: Int, count: Int, item: Item, index: Int, linkStyle: LinkStyle) -> ViewEntry {
        ViewEntry(
            name: EntryNaming.entryName(rank: rank, count: count, item: item, naming: entryTitle),
            target: linkStyle.target(for: item.name, depth: depth),
            itemIndex: index,
            modified: item.modified)
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
            if Self.tagFolders(of: items).contains(folder) { return styled(.tag(folder: folder)) }
        }
        return nil
    }

    package var payloadKeyPaths: Set<String> { fixed.reduce(into: []) { $0.formUnion($1.payloadKeyPaths) } }
}
