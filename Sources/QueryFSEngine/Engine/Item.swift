/// One item of the backing directory (SPEC §1): a bundle or a plain file,
/// with the fields views filter and sort on.
package struct Item: Sendable, Equatable {
    package enum Kind: Sendable, Equatable { case bundle, file }

    package var name: ItemName
    package var kind: Kind
    /// Payload `title`, else `webTitle`, else the name without `.ext`.
    package var title: String
    /// `NaturalOrder.sortKey(title)`, computed once.
    package var titleSortKey: [UInt8]
    package var archived: Bool
    package var tags: [String]
    package var url: String?
    package var modified: Timestamp
    package var created: Timestamp
    package var size: UInt64
    /// Payload values at the key paths the views ask for (`payload.KEY.PATH`),
    /// extracted at scan time so the whole payload need not be kept.
    package var payloadValues: [String: PayloadValue]
    /// What was wrong with the payload, if anything (SPEC §1: reported, never hiding the item).
    package var problems: [String]
    /// How the item is a conflict copy, if it is one (`conflicts/`)…
    package var conflict: ConflictKind?
    /// …and the item it clashes with (itself for git markers).
    package var conflictOf: ItemName?

    package init(
        name: ItemName, kind: Kind, title: String? = nil, archived: Bool = false, tags: [String] = [],
        url: String? = nil, modified: Timestamp = .distantPast, created: Timestamp = .distantPast,
        size: UInt64 = 0, payloadValues: [String: PayloadValue] = [:], problems: [String] = [],
        conflict: ConflictKind? = nil, conflictOf: ItemName? = nil
    ) {
        self.name = name
        self.kind = kind
        let resolvedTitle = title ?? name.stem
        self.title = resolvedTitle
        self.titleSortKey = NaturalOrder.sortKey(resolvedTitle)
        self.archived = archived
        self.tags = tags
        self.url = url
        self.modified = modified
        self.created = created
        self.size = size
        self.payloadValues = payloadValues
        self.problems = problems
        self.conflict = conflict
        self.conflictOf = conflict == nil ? nil : conflictOf ?? name
    }

    /// Marks the item a conflict copy of `original` (nil: not one).
    package mutating func setConflict(_ kind: ConflictKind?, of original: ItemName?) {
        conflict = kind
        conflictOf = kind == nil ? nil : original
    }

    package mutating func setTitle(_ newTitle: String) {
        title = newTitle
        titleSortKey = NaturalOrder.sortKey(newTitle)
    }
}
