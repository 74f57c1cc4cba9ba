import QueryFSCollection

/// What one batch of changes in the backing directory did to a view, as a
/// list view applies it (the batch updates of a table or collection view,
/// IGListKit's diffs): index sets against the list before and after.
///
/// To animate a list showing ``before``: remove the rows at ``deletions``
/// and at each move's `from` (old indexes, highest first), then insert the
/// rows at ``insertions`` and at each move's `to` (new indexes, lowest
/// first), and redraw the rows at ``updates`` (old indexes of items that
/// changed but kept their place). The result is ``items``, always.
public struct CollectionChange: Sendable {
    /// One item that changed its place: from an index before to one after.
    public struct Move: Sendable, Equatable {
        public let from: Int
        public let to: Int
    }

    /// Indexes in ``before`` of the items that left the view.
    public let deletions: RangeSet<Int>
    /// Indexes in ``items`` of the items that came.
    public let insertions: RangeSet<Int>
    /// Items that moved, from their index in ``before`` to their index in ``items``, by `from`.
    public let moves: [Move]
    /// Indexes in ``before`` of items that changed but kept their place.
    public let updates: RangeSet<Int>
    /// The view before this change.
    public let before: CollectionItems
    /// The view after this change.
    public let items: CollectionItems

    /// Whether this is the first change of a sequence: the whole view, inserted.
    public let isInitial: Bool
    private let diff: ListDiff
    /// The change as the live index made it, with entry names (`queryfs watch` prints it); nil for the initial one.
    package let viewChange: ViewChange?

    init(initial items: CollectionItems) {
        self.init(ListDiff(insertions: Array(items.indices)), before: CollectionItems(RecordList()), after: items, isInitial: true)
    }

    init(_ change: ViewChange, before: CollectionItems, after: CollectionItems) {
        self.init(change.diff, before: before, after: after, viewChange: change)
    }

    private init(_ diff: ListDiff, before: CollectionItems, after: CollectionItems, isInitial: Bool = false,
                 viewChange: ViewChange? = nil) {
        deletions = RangeSet(diff.deletions, within: before.indices)
        insertions = RangeSet(diff.insertions, within: after.indices)
        moves = diff.moves.map { Move(from: $0.from, to: $0.to) }
        updates = RangeSet(diff.updates, within: before.indices)
        self.before = before
        items = after
        self.isInitial = isInitial
        self.diff = diff
        self.viewChange = viewChange
    }

    /// `old`, a list that mirrors ``before`` element for element, changed as
    /// the view did: an item that stayed in place unchanged keeps its
    /// element, `make` makes the element of every item that came, moved or
    /// changed. Nil if `old` is not as long as ``before``.
    public func applied<Element>(to old: [Element], make: (CollectionItem) -> Element) -> [Element]? {
        guard old.count == before.count else { return nil }
        guard var list = diff.apply(to: old, newCount: items.count, inserted: { make(items[$0]) }) else { return nil }
        // A moved or updated item keeps its old element in the diff: its state changed.
        for move in moves { list[move.to] = make(items[move.to]) }
        for (_, to) in viewChange?.updatedTo ?? [:] { list[to] = make(items[to]) }
        return list
    }
}
