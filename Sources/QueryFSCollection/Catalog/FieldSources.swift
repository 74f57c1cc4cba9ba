import QueryFSEngine
/// Which payload keys feed the item fields (SPEC §1), in order of preference.
/// Configurable (field aliases), with the Hipstapaper keys as the fallbacks.
package struct FieldSources: Equatable, Sendable {
    package var title: [String] = ["title", "webTitle"]
    package var archived: [String] = ["archived", "isArchived"]
    package var tags: [String] = ["tags"]
    package var url: [String] = ["url", "webLocation.relative"]
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
        var title, archived, tags, url, extra: [PayloadValue.KeyPath]
    }

    var splitPaths: SplitPaths {
        SplitPaths(
            title: title.map(PayloadValue.KeyPath.init), archived: archived.map(PayloadValue.KeyPath.init),
            tags: tags.map(PayloadValue.KeyPath.init), url: url.map(PayloadValue.KeyPath.init),
            extra: extraKeyPaths.sorted().map(PayloadValue.KeyPath.init))
    }

    /// The payload files a bundle may hold, in order of preference.
    package static let payloadFileNames = ["payload.plist", "payload.json"]
}

/// The fields that come from a parsed payload, and what was odd about it.
struct PayloadFields {
    var title: String?
    var archived = false
    var tags: [String] = []
    var url: String?
    var payloadValues: [String: PayloadValue] = [:]
    var problems: [String] = []

    init() {}

    init(payload: PayloadValue, paths: FieldSources.SplitPaths) {
        guard case .dictionary = payload else {
            problems.append("payload's top level is a \(payload.typeName), not a dictionary")
            return
        }
        title = firstString(in: payload, at: paths.title, field: "title")
        url = firstString(in: payload, at: paths.url, field: "url")
        for path in paths.archived {
            guard let value = payload.value(atKeyPath: path) else { continue }
            if case .bool(let flag) = value {
                archived = flag
                break
            }
            problems.append("\(path.string): expected a boolean, found \(value.typeName); ignored")
        }
        for path in paths.tags {
            guard let value = payload.value(atKeyPath: path) else { continue }
            guard case .array(let elements) = value else {
                problems.append("\(path.string): expected an array of strings, found \(value.typeName); ignored")
                continue
            }
            var seen = Set<String>()
            var nonStrings = 0
            for element in elements {
                if case .string(let tag) = element {
                    if seen.insert(tag).inserted { tags.append(tag) }
                } else {
                    nonStrings += 1
                }
            }
            if nonStrings > 0 {
                problems.append("\(path.string): \(nonStrings == 1 ? "a tag is not a string" : "\(nonStrings) tags are not strings"); ignored")
            }
            break
        }
        for path in paths.extra {
            if let value = payload.value(atKeyPath: path) { payloadValues[path.string] = value }
        }
    }

    private mutating func firstString(in payload: PayloadValue, at paths: [PayloadValue.KeyPath], field: String) -> String? {
        for path in paths {
            guard let value = payload.value(atKeyPath: path) else { continue }
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
