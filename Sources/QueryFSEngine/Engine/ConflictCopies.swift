/// How an item is a conflict copy (the `conflict` field, the `conflicts/` folder).
package enum ConflictKind: UInt8, Sendable, Equatable {
    /// A sync tool's copy, known by a marker in its name: Syncthing's
    /// `.sync-conflict-DATE-TIME-DEVICE`, Dropbox's and Nextcloud's
    /// `(… conflicted copy …)`, ownCloud's `_conflict-DATE-TIME`.
    case syncCopy = 1
    /// `X 2.ext` or `X (1).ext` beside an item `X.ext` (a file manager's or sync tool's second copy).
    case numberedCopy = 2
    /// A payload holding git conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`).
    case gitMarkers = 3

    /// The `conflict` field's value.
    package var text: String {
        switch self {
        case .syncCopy: "sync copy"
        case .numberedCopy: "numbered copy"
        case .gitMarkers: "git markers"
        }
    }
}

/// Which items are conflict copies, and of what: configurable in
/// `.queryfs.toml` (`[conflicts]`). Cheap by design — substring searches
/// on names, one scan of payload bytes — since every item is tested at
/// every read.
package struct ConflictPatterns: Equatable, Sendable {
    /// Name infixes that mark a sync tool's copy. The original's name is
    /// the copy's without the marker and what follows it up to the
    /// extension; a marker inside parentheses takes the parenthesized part
    /// with it (`X (Jo's conflicted copy 2024-05-01).ext` → `X.ext`).
    package var markers: [String] = [".sync-conflict-", "conflicted copy", "_conflict-"]
    /// `X 2.ext` and `X (1).ext` are copies of `X.ext` when that exists.
    package var numberedCopies = true
    /// Payloads with git conflict markers are conflicts.
    package var gitMarkers = true

    package init() {}

    /// The original of a sync tool's copy named `name`, nil if the name carries no marker.
    package func originalOfSyncCopy(_ name: ItemName) -> ItemName? {
        let bytes = name.bytes
        for marker in markers where !marker.isEmpty {
            // The marker's own bytes, not a copy: every item of every scan
            // comes here (three arrays an item were 3 % of a notes scan's mallocs).
            let found = marker.utf8.withContiguousStorageIfAvailable { Self.firstIndex(of: $0, in: bytes) } ?? Self.firstIndex(of: Array(marker.utf8), in: bytes)
            guard let at = found, at > 0 else { continue }
            var start = at
            // Inside "( … )": the parenthesized part goes, with the space before it.
            if let open = bytes[..<at].lastIndex(of: UInt8(ascii: "(")), !bytes[open..<at].contains(UInt8(ascii: ")")) {
                start = open > 0 && bytes[open - 1] == UInt8(ascii: " ") ? open - 1 : open
            }
            let rest = bytes[(at + marker.utf8.count)...]
            let ext = rest.lastIndex(of: UInt8(ascii: ".")).map { Array(bytes[$0...]) } ?? []
            guard start > 0 else { continue }
            return ItemName(Array(bytes[..<start]) + ext)
        }
        return nil
    }

    /// The name `name` would be a numbered copy of (`X 2.ext`, `X (1).ext` → `X.ext`), nil if not shaped so.
    package func originalOfNumberedCopy(_ name: ItemName) -> ItemName? {
        guard numberedCopies else { return nil }
        // By index, copying nothing until the shape matches: every name of
        // a start goes through here twice (100,000 names: 40 ms when each
        // call copied the stem and extension first).
        let bytes = name.bytes
        let dot = name.extensionDot ?? bytes.count
        var end = dot  // the stem is bytes[..<end]
        let parenthesized = end > 0 && bytes[end - 1] == UInt8(ascii: ")")
        if parenthesized { end -= 1 }
        var digits = 0
        // One or two digits: "Taxes 2023.pdf" beside "Taxes.pdf" is no copy.
        while end > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end - 1]), digits < 3 {
            end -= 1
            digits += 1
        }
        guard digits > 0, digits <= 2 else { return nil }
        if parenthesized {
            guard end > 0, bytes[end - 1] == UInt8(ascii: "(") else { return nil }
            end -= 1
        }
        guard end > 1, bytes[end - 1] == UInt8(ascii: " ") else { return nil }
        end -= 1
        return ItemName(Array(bytes[..<end]) + bytes[dot...])
    }

    /// Whether payload bytes hold git conflict markers: a line starting
    /// `<<<<<<< `, and later ones `=======` and `>>>>>>> `.
    package func hasGitMarkers(_ payload: [UInt8]) -> Bool {
        guard gitMarkers else { return false }
        let open = Array("<<<<<<<".utf8), middle = Array("=======".utf8), close = Array(">>>>>>>".utf8)
        var seen = 0
        var lineStart = 0
        let count = payload.count
        while lineStart < count {
            let wanted = seen == 0 ? open : seen == 1 ? middle : close
            if count - lineStart >= wanted.count, payload[lineStart..<lineStart + wanted.count].elementsEqual(wanted) {
                seen += 1
                if seen == 3 { return true }
            }
            guard let newline = payload[lineStart...].firstIndex(of: 0x0A) else { break }
            lineStart = newline + 1
        }
        return false
    }

    /// Marks the numbered copies among `items` whose original is there too
    /// (and unmarks those whose original is not), in place.
    /// Returns whether any item's mark changed.
    @discardableResult
    package func markNumberedCopies(_ items: inout [Item]) -> Bool {
        markNumberedCopies(&items, shapes: numberedCopyShapes(items))
    }

    /// The items whose names are shaped as numbered copies, by index, with
    /// the original each would copy (a start needs them twice: for the
    /// marks, and for the table the watcher keeps).
    package func numberedCopyShapes(_ items: [Item]) -> [(index: Int, original: ItemName)] {
        numberedCopyShapes(items.map(\.name))
    }

    /// `numberedCopyShapes` of the items with these names.
    package func numberedCopyShapes(_ names: [ItemName]) -> [(index: Int, original: ItemName)] {
        guard numberedCopies else { return [] }
        return names.indices.compactMap { index in originalOfNumberedCopy(names[index]).map { (index, $0) } }
    }

    /// `markNumberedCopies(_:)` given `numberedCopyShapes(items)`.
    @discardableResult
    package func markNumberedCopies(_ items: inout [Item], shapes: [(index: Int, original: ItemName)]) -> Bool {
        let marks = numberedCopyMarks(shapes: shapes, names: items.map(\.name)) { (items[$0].conflict, items[$0].conflictOf) }
        for mark in marks { items[mark.index].setConflict(mark.kind, of: mark.original) }
        return !marks.isEmpty
    }

    /// The marks to change among items with these `names`, given their
    /// `numberedCopyShapes` and each one's mark now (`current`: its conflict
    /// kind and the item it clashes with): a shaped name is a numbered copy
    /// exactly when its original is among the names, unless it is another
    /// kind of conflict already.
    package func numberedCopyMarks(shapes: [(index: Int, original: ItemName)], names: [ItemName],
                                   current: (Int) -> (kind: ConflictKind?, of: ItemName?))
        -> [(index: Int, kind: ConflictKind?, original: ItemName)]
    {
        let candidates = shapes.filter { current($0.index).kind == nil || current($0.index).kind == .numberedCopy }
        guard !candidates.isEmpty else { return [] }
        let present = Set(names)
        return candidates.compactMap { index, original in
            let kind: ConflictKind? = present.contains(original) ? .numberedCopy : nil
            let now = current(index)
            // As `Item.setConflict` leaves it: the original only for a copy.
            return now.kind == kind && now.of == (kind == nil ? nil : original) ? nil : (index, kind, original)
        }
    }

    private static func firstIndex<Needle: RandomAccessCollection<UInt8>>(of needle: Needle, in haystack: [UInt8]) -> Int? where Needle.Index == Int {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return start }
        }
        return nil
    }
}
