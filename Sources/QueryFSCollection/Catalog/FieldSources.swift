import QueryFSEngine
/// Which payload keys feed the item fields (SPEC §1), in order of preference.
/// Configurable (field aliases), with the Hipstapaper keys as the fallbacks.
package struct FieldSources: Equatable, Sendable {
    package var title: [String] = ["title", "webTitle"]
    package var archived: [String] = ["archived", "isArchived"]
    package var tags: [String] = ["tags"]
    package var url: [String] = ["url", "webLocation.relative"]
    /// Where `created` comes from (else the file's birth time): a date, an
    /// ISO 8601 text, or seconds since 1970 as a number or text (ArchiveBox's `timestamp`).
    package var created: [String] = ["created"]
    /// The payload files a bundle may hold, in order of preference (`payload = [...]`).
    package var payloadNames = FieldSources.defaultPayloadNames
    /// Sidecars that hold a file's metadata (`sidecars = ["xmp"]`).
    package var sidecars = Sidecars()
    /// Tags may be one string of comma-separated tags (ArchiveBox's, set by
    /// its preset); otherwise a string where the list belongs is reported (SPEC §1).
    package var tagsMayBeText = false
    /// Notes' `#tags` in their text are tags too (`inline-tags = true`, Obsidian's way).
    package var inlineTags = false
    /// Further `payload.KEY.PATH` values to keep for views that filter or sort on them.
    package var extraKeyPaths: Set<String> = []
    /// Which items are conflict copies (`[conflicts]`).
    package var conflicts = ConflictPatterns()
    /// Items at any depth (`recursive = true`): a folder without a payload
    /// file is a folder of items, not a bundle (`BackingDirectory.listing`).
    package var recursive = false

    package init() {}

    /// The key paths split once (the scan looks them up for every item).
    struct SplitPaths: Sendable {
        var title, archived, tags, url, created, extra: [PayloadValue.KeyPath]
        var tagsMayBeText = false
    }

    var splitPaths: SplitPaths {
        SplitPaths(
            title: title.map(PayloadValue.KeyPath.init), archived: archived.map(PayloadValue.KeyPath.init),
            tags: tags.map(PayloadValue.KeyPath.init), url: url.map(PayloadValue.KeyPath.init),
            created: created.map(PayloadValue.KeyPath.init),
            extra: extraKeyPaths.sorted().map(PayloadValue.KeyPath.init), tagsMayBeText: tagsMayBeText)
    }

    /// Hipstapaper's payload files, in order of preference.
    package static let defaultPayloadNames = ["payload.plist", "payload.json"]
}

/// The fields that come from a parsed payload, and what was odd about it.
struct PayloadFields {
    var title: String?
    var archived = false
    var tags: [String] = []
    var url: String?
    var created: Timestamp?
    var payloadValues: [String: PayloadValue] = [:]
    var problems: [String] = []

    init() {}

    /// A key whose value is null (JSON's `null`, YAML's `~`) is a field
    /// not given, as ArchiveBox writes an untagged or untitled snapshot's:
    /// no value and no problem.
    init(payload: PayloadValue, paths: FieldSources.SplitPaths) {
        guard case .dictionary = payload else {
            problems.append("payload's top level is a \(payload.typeName), not a dictionary")
            return
        }
        title = firstString(in: payload, at: paths.title, field: "title")
        url = firstString(in: payload, at: paths.url, field: "url")
        for path in paths.archived {
            guard let value = payload.value(atKeyPath: path), value != .null else { continue }
            if case .bool(let flag) = value {
                archived = flag
                break
            }
            problems.append("\(path.string): expected a boolean, found \(value.typeName); ignored")
        }
        for path in paths.tags {
            guard let value = payload.value(atKeyPath: path), value != .null else { continue }
            if paths.tagsMayBeText, case .string(let text) = value {
                // One string of tags separated by commas (ArchiveBox's `tags`).
                var seen = Set<String>()
                tags = text.split(separator: ",").map { String($0).trimming(" \t") }.filter { !$0.isEmpty && seen.insert($0).inserted }
                break
            }
            guard case .array(let elements) = value else {
                problems.append("\(path.string): expected an array of strings, found \(value.typeName); ignored")
                continue
            }
            // A few tags are told apart by looking (no set to build for every item); many, by a set.
            var seen = Set<String>()
            let few = elements.count <= 16
            tags.reserveCapacity(elements.count)
            var nonStrings = 0
            for element in elements {
                if case .string(let tag) = element {
                    if few ? !tags.contains(tag) : seen.insert(tag).inserted { tags.append(tag) }
                } else {
                    nonStrings += 1
                }
            }
            if nonStrings > 0 {
                problems.append("\(path.string): \(nonStrings == 1 ? "a tag is not a string" : "\(nonStrings) tags are not strings"); ignored")
            }
            break
        }
        for path in paths.created {
            guard let value = payload.value(atKeyPath: path), value != .null else { continue }
            if let time = Self.time(value) {
                created = time
                break
            }
            // The value itself for a scalar; a list or map by its kind alone ("found dictionary dictionary", found from outside).
            let found = value.scalarText == value.typeName ? value.typeName : "\(value.typeName) \(value.scalarText)"
            problems.append("\(path.string): expected a date, found \(found); ignored")
        }
        for path in paths.extra {
            if let value = payload.value(atKeyPath: path) { payloadValues[path.string] = value }
        }
    }

    /// A time as payloads write one: a date, ISO 8601 text, or seconds since 1970 (a number, or its text).
    static func time(_ value: PayloadValue) -> Timestamp? {
        switch value {
        case .date(let seconds): return Timestamp(clampingSecondsSince1970: seconds)
        case .integer(let seconds): return Timestamp(clampingSecondsSince1970: Double(seconds))
        case .real(let seconds): return Timestamp(clampingSecondsSince1970: seconds)
        case .string(let text):
            let trimmed = text.trimming(" ")
            // `20240305` (yt-dlp's upload_date) is a day, not 20 million seconds.
            if trimmed.utf8.count == 8, trimmed.utf8.allSatisfy({ (48...57).contains($0) }),
               let seconds = ISO8601.parse(String(trimmed.prefix(4)) + "-" + String(trimmed.dropFirst(4).prefix(2)) + "-" + String(trimmed.suffix(2))) {
                return Timestamp(clampingSecondsSince1970: seconds)
            }
            if let seconds = ISO8601.parse(trimmed) { return Timestamp(clampingSecondsSince1970: seconds) }
            if let seconds = Double(trimmed), seconds.isFinite { return Timestamp(clampingSecondsSince1970: seconds) }
            return nil
        default: return nil
        }
    }

    private mutating func firstString(in payload: PayloadValue, at paths: [PayloadValue.KeyPath], field: String) -> String? {
        for path in paths {
            guard let value = payload.value(atKeyPath: path), value != .null else { continue }
            if case .string(let text) = value { return text }
            problems.append("\(path.string): expected a string for \(field), found \(value.typeName); ignored")
        }
        return nil
    }
}

/// Parses payload bytes by file name: binary or XML plist, or JSON.
enum PayloadDecoder {
    static func decode(_ bytes: [UInt8], fileName: String) throws(PayloadParseError) -> PayloadValue {
        if fileName.hasSuffix(".json") { return try JSONParser.parse(bytes) }
        if bytes.starts(with: Array("bplist".utf8)) { return try BinaryPropertyListParser.parse(bytes) }
        return try XMLPropertyListParser.parse(bytes)
    }
}

/// How many tags one item may carry. Every tag is a folder the item
/// appears in, and each change to the item is checked against each of its
/// folders: 20,000 tags on one item made a mount take 20 s. Tags past the
/// limit are ignored and reported against the item.
enum TagLimit {
    static let maximum = 1_024

    static func capped(_ tags: [String]) -> (tags: [String], problem: String?) {
        guard tags.count > maximum else { return (tags, nil) }
        return (Array(tags.prefix(maximum)), "\(tags.count) tags; only the first \(maximum) are used")
    }
}
