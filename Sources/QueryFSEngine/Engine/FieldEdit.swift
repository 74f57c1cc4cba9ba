#if canImport(Glibc)
import Glibc
#endif

/// One change to an item's fields, as a view operation or a command asks
/// for it. `ItemEditor` turns it into a payload edit (or, for a plain file's
/// tags, an extended attribute edit).
package enum FieldEdit: Equatable, Sendable, CustomStringConvertible {
    case addTag(String)
    case removeTag(String)
    /// Removes every tag whose folder name (sanitized) is this: what leaving
    /// `tag/<folder>/` means when tags that sanitize alike share the folder.
    case removeTagFolder(String)
    /// Renames, in place, every tag whose folder is `folder` to `to`.
    case renameTagFolder(String, to: String)
    case setArchived(Bool)
    case setTitle(String)
    /// `payload.KEY.PATH = value`.
    case setPayload(String, PayloadValue)
    case removePayload(String)

    package var description: String {
        switch self {
        case .addTag(let tag): "add tag '\(tag)'"
        case .removeTag(let tag): "remove tag '\(tag)'"
        case .removeTagFolder(let folder): "remove the tags of folder '\(folder)'"
        case .renameTagFolder(let folder, let to): "rename tag '\(folder)' to '\(to)'"
        case .setArchived(let flag): flag ? "archive" : "unarchive"
        case .setTitle(let title): "set title '\(title)'"
        case .setPayload(let path, let value): "set payload.\(path) = \(value)"
        case .removePayload(let path): "remove payload.\(path)"
        }
    }

    /// What `mv tag/FOLDER tag/TO` makes of `tag`: TO for a tag in that
    /// folder, TO/REST for one in a folder nested in it (`a/b` under `a`
    /// renamed `z` is `z/b`: its entries were in `tag/a` too, found from
    /// outside: they stayed `a/b` while the view showed them under `z`);
    /// nil for a tag elsewhere.
    package static func renamedTag(_ tag: String, folder: String, to: String) -> String? {
        guard let own = EntryNaming.tagFolderName(tag) else { return nil }
        if own == folder { return to }
        guard own.hasPrefix(folder + "/") else { return nil }
        return to + own.dropFirst(folder.count)
    }

    /// The item as it would read after this edit (for checking, before any
    /// write, that an edit does what the view needs).
    package func applied(to item: Item) -> Item {
        var item = item
        switch self {
        case .addTag(let tag): if !item.tags.contains(tag) { item.tags.append(tag) }
        case .removeTag(let tag): item.tags.removeAll { $0 == tag }
        case .removeTagFolder(let folder): item.tags.removeAll { EntryNaming.tagFolderNames($0).contains(folder) }
        case .renameTagFolder(let folder, let to):
            var seen = Set<String>()
            item.tags = item.tags.map { Self.renamedTag($0, folder: folder, to: to) ?? $0 }.filter { seen.insert($0).inserted }
        case .setArchived(let flag): item.archived = flag
        case .setTitle(let title): item.setTitle(title)
        case .setPayload(let path, let value): item.payloadValues[path] = value
        case .removePayload(let path): item.payloadValues[path] = nil
        }
        return item
    }
}

/// How an operation on a view entry becomes edits (SPEC §6): joining a view
/// sets the terms of its filter; leaving one undoes its one term. A filter
/// that is not a conjunction of settable terms (`tag:x`, `-tag:x`,
/// `archived`, `-archived`, `payload.KEY=VALUE`) cannot be joined by an
/// edit; one of more than one term cannot be left (which term to undo?).
package enum ViewMembership {
    package enum Answer: Equatable, Sendable {
        /// These edits make the item join (or leave) the view.
        case edits([FieldEdit])
        /// Every item is in the view already (`by-*`).
        case alreadyMember
        /// No edit does it; why, for the log.
        case refused(String)
    }

    /// `tagNamed(folder)`: the tag to add for `tag/<folder>/` (the folder
    /// name is the tag sanitized; an existing tag that sanitizes to it is
    /// the better choice).
    package static func join(_ filter: Predicate, tagNamed: (String) -> String) -> Answer {
        if case .all = filter { return .alreadyMember }
        let refusal = Answer.refused("its filter is not a conjunction of tag:X, -tag:X, archived, -archived and payload.KEY=VALUE terms")
        guard let terms = terms(of: filter) else { return refusal }
        var edits: [FieldEdit] = []
        for term in terms {
            guard let edit = setting(term, tagNamed: tagNamed) else { return refusal }
            edits.append(edit)
        }
        return .edits(edits)
    }

    package static func leave(_ filter: Predicate) -> Answer {
        if case .all = filter { return .refused("it shows every item; delete items in bundles/") }
        guard let terms = terms(of: filter), terms.count == 1, let edit = undoing(terms[0]) else {
            return .refused("only a view of one tag:X, -tag:X, archived, -archived or payload.KEY=VALUE term can be left")
        }
        return .edits([edit])
    }

    /// The terms of a conjunction (a lone term is one), nil for anything else.
    private static func terms(of filter: Predicate) -> [Predicate]? {
        if case .and(let list) = filter {
            var terms: [Predicate] = []
            for term in list {
                guard let inner = Self.terms(of: term) else { return nil }
                terms += inner
            }
            return terms
        }
        if case .or = filter { return nil }
        return [filter]
    }

    private static func setting(_ term: Predicate, tagNamed: (String) -> String) -> FieldEdit? {
        switch term {
        case .contains(.tags, .text(let tag)): return .addTag(tag)
        case .hasTagFolder(let folder): return .addTag(tagNamed(folder))
        case .not(.contains(.tags, .text(let tag))): return .removeTag(tag)
        case .not(.hasTagFolder(let folder)): return .removeTagFolder(folder)
        case .compare(.archived, .equal, .bool(let flag)): return .setArchived(flag)
        case .compare(.archived, .notEqual, .bool(let flag)): return .setArchived(!flag)
        case .not(.compare(.archived, .equal, .bool(let flag))): return .setArchived(!flag)
        case .compare(.payload(let path), .equal, let value): return payloadValue(value).map { .setPayload(path, $0) }
        default: return nil
        }
    }

    private static func undoing(_ term: Predicate) -> FieldEdit? {
        switch term {
        case .contains(.tags, .text(let tag)): return .removeTag(tag)
        case .hasTagFolder(let folder): return .removeTagFolder(folder)
        case .not(.contains(.tags, .text(let tag))): return .addTag(tag)
        case .compare(.archived, .equal, .bool(let flag)): return .setArchived(!flag)
        case .compare(.archived, .notEqual, .bool(let flag)): return .setArchived(flag)
        case .not(.compare(.archived, .equal, .bool(let flag))): return .setArchived(flag)
        case .compare(.payload(let path), .equal, let value): return payloadValue(value) == nil ? nil : .removePayload(path)
        default: return nil
        }
    }

    /// Text, numbers (whole ones as integers) and booleans can be written.
    private static func payloadValue(_ value: FieldValue) -> PayloadValue? {
        switch value {
        case .text(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .number(let number):
            guard number.isFinite else { return nil }
            if number.rounded() == number, let whole = Int64(exactly: number) { return .integer(whole) }
            return .real(number)
        default: return nil
        }
    }
}
