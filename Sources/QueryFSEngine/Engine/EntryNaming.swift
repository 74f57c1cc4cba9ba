/// How a view's entries are named and where they point (SPEC §3 "Entries of
/// a view"): `<rank> <title>.<ext>`, at most 255 bytes, symlinking into
/// `bundles/`.
package enum EntryNaming {
    package static let maximumNameLength = 255

    /// Sanitizes a title or tag for use in a file name: `/` → `∕` (U+2215),
    /// control characters → space, invalid UTF-8 already U+FFFD (Swift
    /// strings hold valid Unicode), leading and trailing white space trimmed.
    package static func sanitize(_ text: String) -> String {
        if isAlreadySafe(text) { return text }
        return trimWhitespace(replacingUnsafeCharacters(in: text))
    }

    /// Fast path: printable ASCII without `/`, not starting or ending with a
    /// space — most titles — needs no change.
    private static func isAlreadySafe(_ text: String) -> Bool { isAlreadySafe(utf8: text.utf8) }

    private static func isAlreadySafe(utf8: some BidirectionalCollection<UInt8>) -> Bool {
        guard let first = utf8.first, first != 0x20, utf8.last != 0x20 else { return false }
        return utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x2F || $0 == 0x20 }
    }

    /// Whether a title of these UTF-8 bytes is its own display title
    /// (`displayTitle`): a record made from the index file's bytes asks
    /// this before making a String of them.
    package static func isShownAsIs(title utf8: UnsafeBufferPointer<UInt8>) -> Bool { isAlreadySafe(utf8: utf8) }

    /// `/` → `∕` and control characters → space, without trimming.
    static func replacingUnsafeCharacters(in text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x2F: scalars.append("\u{2215}")
            case 0x00...0x1F, 0x7F: scalars.append(" ")
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    static func trimWhitespace(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }

    /// The title as it appears in entry names: sanitized, falling back to the
    /// item's name without `.ext` when nothing is left. (If even that is only
    /// white space, it is kept untrimmed so the entry still has a title.)
    package static func displayTitle(of item: Item) -> String { displayTitle(title: item.title, name: item.name) }

    /// `displayTitle(of:)` of an item with this title and name.
    package static func displayTitle(title: String, name: ItemName) -> String {
        let sanitized = sanitize(title)
        if !sanitized.isEmpty { return sanitized }
        let stem = sanitize(name.stem)
        return stem.isEmpty ? replacingUnsafeCharacters(in: name.stem) : stem
    }

    /// The title and extension an entry shows under `naming`: the item's
    /// own, or (`clashingItem`) the name of the item it clashes with, split
    /// and sanitized as a name without a title is.
    package static func entryTitle(of item: Item, naming: ViewDefinition.EntryTitle) -> (title: String, ext: String) {
        entryTitle(title: item.title, name: item.name, conflictOf: item.conflictOf, naming: naming)
    }

    /// `entryTitle(of:naming:)` of an item with these fields.
    package static func entryTitle(title: String, name: ItemName, conflictOf: ItemName?,
                                   naming: ViewDefinition.EntryTitle) -> (title: String, ext: String) {
        var shown = (title: displayTitle(title: title, name: name), ext: displayExtension(of: name))
        if naming.source == .clashingItem, let original = conflictOf { shown = clashingTitle(of: original) }
        if naming.desktopFile { shown.ext = ViewDefinition.EntryTitle.desktopExtension }
        return shown
    }

    /// What a `conflicts/` entry shows: the name of the item a copy clashes
    /// with, split and sanitized as a name without a title is.
    package static func clashingTitle(of original: ItemName) -> (title: String, ext: String) {
        let stem = sanitize(original.stem)
        let ext = original.ext
        return (stem.isEmpty ? replacingUnsafeCharacters(in: original.stem) : stem,
                isAlreadySafe(ext) ? ext : replacingUnsafeCharacters(in: ext))
    }

    /// Width of the zero-padded rank: max(4, digits of the view's count).
    package static func rankWidth(count: Int) -> Int {
        max(4, digitCount(count))
    }

    /// The entry name of the item at 1-based `rank` in a view of `count` entries.
    package static func entryName(rank: Int, count: Int, item: Item, naming: ViewDefinition.EntryTitle = .title) -> [UInt8] {
        let (title, ext) = entryTitle(of: item, naming: naming)
        return entryName(rank: rank, width: rankWidth(count: count), title: title, ext: ext)
    }

    /// The extension as it appears in entry names (sanitized, not trimmed).
    package static func displayExtension(of item: Item) -> String { displayExtension(of: item.name) }

    package static func displayExtension(of name: ItemName) -> String {
        let ext = name.ext
        return isAlreadySafe(ext) ? ext : replacingUnsafeCharacters(in: ext)
    }

    /// The entry name from an already sanitized title and extension.
    /// Written into one array sized up front: a listing makes one per entry
    /// (100,000 for `queryfs ls` of a whole collection), and the rank, the
    /// title and the extension as arrays of their own were most of its cost.
    package static func entryName(rank: Int, width: Int, title: String, ext: String) -> [UInt8] {
        let rankDigits = max(width, digitCount(rank))
        let dotAndExt = ext.isEmpty ? 0 : 1 + ext.utf8.count
        var name: [UInt8] = []
        name.reserveCapacity(min(rankDigits + 1 + title.utf8.count + dotAndExt, maximumNameLength))
        appendRank(rank, width: width, to: &name)
        name.append(UInt8(ascii: " "))
        // The extension is cut only when even an empty title cannot fit.
        let suffixRoom = maximumNameLength - name.count
        let suffixLength = dotAndExt <= suffixRoom ? dotAndExt : wholeScalarPrefixLength(of: [UInt8(ascii: ".")] + Array(ext.utf8), fitting: suffixRoom)
        let room = maximumNameLength - name.count - suffixLength
        if title.utf8.count <= room {
            name.append(contentsOf: title.utf8)
        } else {
            name += prefixOfWholeScalars(Array(title.utf8), fitting: room)
        }
        if suffixLength > 0 {
            name.append(UInt8(ascii: "."))
            name.append(contentsOf: ext.utf8.prefix(suffixLength - 1))
        }
        return name
    }

    /// Decimal digits of a non-negative `value`.
    static func digitCount(_ value: Int) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 { count += 1; rest /= 10 }
        return count
    }

    /// Appends `rank` zero-padded to `width` digits.
    static func appendRank(_ rank: Int, width: Int, to name: inout [UInt8]) {
        let digits = digitCount(rank)
        for _ in digits..<max(width, digits) { name.append(UInt8(ascii: "0")) }
        let end = name.count + digits
        name.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var value = rank
        for position in stride(from: end - 1, through: end - digits, by: -1) {
            name[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
    }

    /// The longest prefix of valid UTF-8 `bytes` made of whole scalars that fits in `limit` bytes.
    static func prefixOfWholeScalars(_ bytes: [UInt8], fitting limit: Int) -> [UInt8] {
        guard bytes.count > limit else { return bytes }
        return Array(bytes[..<wholeScalarPrefixLength(of: bytes, fitting: limit)])
    }

    /// The length of `prefixOfWholeScalars(bytes, fitting: limit)`.
    static func wholeScalarPrefixLength(of bytes: [UInt8], fitting limit: Int) -> Int {
        guard bytes.count > limit else { return bytes.count }
        guard limit > 0 else { return 0 }
        var end = limit
        // Back up over continuation bytes (10xxxxxx) to a scalar boundary.
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    /// The folder of a tag under `tag/`, or nil when the tag has no folder
    /// (empty, `.` or `..` once sanitized). A nested tag `a/b` (Obsidian's,
    /// digiKam's hierarchies) is the folder `a/b`: `tag/a/b/`, each part
    /// sanitized as a name (empty parts dropped: `a//b/` is `a/b`).
    /// `tag` as its folder under `tag/` names it, but for what the folder
    /// name sanitizes: no empty parts (`a//b` → `a/b`, `/x/` → `x`) and no
    /// blanks around a part (`q/ r` → `q/r`, ` sp ` → `sp`). The same tag:
    /// written so, and compared so. Unchanged when it is that already.
    package static func canonicalTag(_ tag: String) -> String {
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        let parts = tag.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.contains(where: { $0.isEmpty || $0.first.map(isBlank) == true || $0.last.map(isBlank) == true }) else { return tag }
        let trimmed = parts.map { part in String(part.drop(while: isBlank).reversed().drop(while: isBlank).reversed()) }
        return trimmed.filter { !$0.isEmpty }.joined(separator: "/")
    }

    package static func tagFolderName(_ tag: String) -> String? {
        isOwnFolderName(tag) ? tag : sanitizedFolderName(tag)
    }

    /// `tagFolderName` the general way: split, each part sanitized and cut, joined.
    package static func sanitizedFolderName(_ tag: String) -> String? {
        var parts: [String] = []
        for part in tag.split(separator: "/", omittingEmptySubsequences: true) {
            let sanitized = sanitize(String(part))
            let cut = String(decoding: prefixOfWholeScalars(Array(sanitized.utf8), fitting: maximumNameLength), as: UTF8.self)
            if cut.isEmpty || cut == "." || cut == ".." { return nil }
            parts.append(cut)
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    /// Whether `tag` is its own folder name, as most tags are: parts of
    /// printable ASCII that `sanitize` keeps (no space at either end), none
    /// empty, `.`, `..` or longer than a name. Said in one pass over the
    /// bytes: the general way (split, sanitize, cut, join) made five
    /// strings per tag, and every item's tags are named at every start
    /// that groups them (a fifth of a command writing its index back).
    private static func isOwnFolderName(_ tag: String) -> Bool {
        var partLength = 0
        var onlyDots = true
        var previous = UInt8(ascii: "/")
        func partIsAName() -> Bool { partLength > 0 && previous != 0x20 && !(onlyDots && partLength <= 2) }
        for byte in tag.utf8 {
            if byte == UInt8(ascii: "/") {
                guard partIsAName() else { return false }
                partLength = 0
                onlyDots = true
            } else {
                guard byte >= 0x20, byte < 0x7F, partLength > 0 || byte != 0x20, partLength < maximumNameLength else { return false }
                partLength += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
            previous = byte
        }
        return partIsAName()
    }

    /// Every tag folder an item with `tag` is in: the tag's own and, for a
    /// nested tag, each folder above it (an item of `a/b` is in `tag/a/` too).
    package static func tagFolderNames(_ tag: String) -> [String] {
        guard let folder = tagFolderName(tag) else { return [] }
        var names = [folder]
        var path = Substring(folder)
        while let slash = path.lastIndex(of: "/") {
            path = path[..<slash]
            names.append(String(path))
        }
        return names
    }
}

/// Where entries point: relative into `bundles/` (the default), or absolute
/// under the mount point (`--absolute-links`).
package enum LinkStyle: Equatable, Sendable {
    case relative
    case absolute(mountPoint: String)

    /// The symlink target for an item, from a view folder `depth` levels
    /// below the mount root (1 for `by-name/`, 2 for `tag/<tag>/`).
    package func target(for name: ItemName, depth: Int) -> [UInt8] {
        switch self {
        case .relative:
            // One array sized up front: one is made per entry listed.
            var target: [UInt8] = []
            target.reserveCapacity(depth * 3 + 8 + name.bytes.count)
            for _ in 0..<depth { target.append(contentsOf: "../".utf8) }
            target.append(contentsOf: "bundles/".utf8)
            target.append(contentsOf: name.bytes)
            return target
        case .absolute(let mountPoint):
            let root = mountPoint.hasSuffix("/") ? String(mountPoint.dropLast()) : mountPoint
            return Array("\(root)/bundles/".utf8) + name.bytes
        }
    }
}
