#if canImport(Glibc)
import Glibc
#endif

/// `BACKING/.queryfs.toml`: views defined by the user (path → query), field
/// aliases (which payload keys feed `title`, `archived`, `tags`, `url`) and
/// ignore patterns (item names that are not items). Every error names the
/// file, line and column.
///
///     ignore = ["*.tmp", "Drafts*"]
///     queries = ["tag:swift -archived"]     # saved query/ folders (mkdir/rmdir there)
///
///     [fields]
///     title = ["title", "webTitle"]
///     tags = ["tags", "keywords"]
///
///     [views]
///     "reading/today" = "tag:today -archived"
///     swift = "tag:swift sort:title"
public struct Configuration: Equatable, Sendable {
    public static let fileName = ".queryfs.toml"

    public struct View: Equatable, Sendable {
        public let path: [String]
        public var query: Query
        /// As written, to be read again with a later now (relative ages).
        public let text: String
    }

    /// The same configuration with its relative ages counted from `now`
    /// (the texts parsed when it was loaded parse again).
    public func countingAges(from now: Timestamp) -> Configuration {
        var copy = self
        for index in copy.views.indices where copy.views[index].query.shortestAge != nil {
            if let query = try? Query(parsing: copy.views[index].text, now: now) { copy.views[index].query = query }
        }
        return copy
    }

    public var views: [View] = []
    public var sources = FieldSources()
    public var ignore: [String] = []
    /// Queries saved as `query/<query>/` folders (`mkdir` there adds one).
    public var savedQueries: [String] = []

    public init() {}

    /// Folder names a configured view may not take: the mount's own.
    public static let reservedNames: Set<String> = Set(ViewDefinition.builtIn.map { $0.path[0] })
        .union(["bundles", ViewDefinition.tagFolder, ViewDefinition.queryFolder])

    public init(parsing text: String, file: String, now: Timestamp) throws(ConfigurationError) {
        let document: TOMLDocument
        do {
            document = try TOMLDocument(parsing: text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, column: error.column, message: error.message)
        }
        func fail(_ message: String, _ line: Int, _ column: Int) -> ConfigurationError {
            ConfigurationError(file: file, line: line, column: column, message: message)
        }
        for (table, line) in document.tableLines where !["views", "fields"].contains(table) {
            throw fail("unknown table [\(table)] (tables: [views], [fields])", line, 1)
        }
        for (key, entry) in document.tables[""] ?? [:] {
            switch key {
            case "ignore":
                ignore = try Self.strings(entry, named: key, fail)
            case "queries":
                savedQueries = try Self.strings(entry, named: key, fail)
                for text in savedQueries {
                    do {
                        _ = try Query(parsing: text, now: now)
                    } catch {
                        throw fail("saved query '\(text)': \(error.message)", entry.line, entry.column)
                    }
                }
            default:
                throw fail("unknown setting '\(key)' (settings: ignore, queries, [views], [fields])", entry.line, 1)
            }
        }
        for (key, entry) in (document.tables["fields"] ?? [:]).sorted(by: { $0.value.line < $1.value.line }) {
            let keys = try Self.strings(entry, named: key, fail)
            switch key {
            case "title": sources.title = keys
            case "archived": sources.archived = keys
            case "tags": sources.tags = keys
            case "url": sources.url = keys
            default: throw fail("unknown field '\(key)' in [fields] (title, archived, tags, url)", entry.line, 1)
            }
        }
        for (key, entry) in (document.tables["views"] ?? [:]).sorted(by: { $0.value.line < $1.value.line }) {
            let path = key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if let bad = path.first(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.utf8.count > 255 }) {
                throw fail("'\(key)' is not a view path ('\(bad)' cannot be a folder name)", entry.line, 1)
            }
            if Self.reservedNames.contains(path[0]) {
                throw fail("'\(path[0])' is the mount's own folder; a view cannot take it", entry.line, 1)
            }
            guard case .string(let text) = entry.value else { throw fail("a view is a query in quotes", entry.line, entry.column) }
            do {
                views.append(View(path: path, query: try Query(parsing: text, now: now), text: text))
            } catch {
                // The query's column inside the quotes (exact unless it uses escapes).
                throw fail("view '\(key)': \(error.message)", entry.line, entry.column + 1 + error.position)
            }
        }
        // A folder is either a view or holds views, not both.
        for view in views {
            for other in views where other.path.count > view.path.count && Array(other.path.prefix(view.path.count)) == view.path {
                let line = document.tables["views"]?[view.path.joined(separator: "/")]?.line ?? 1
                throw fail("'\(view.path.joined(separator: "/"))' is a view and also holds '\(other.path.joined(separator: "/"))'", line, 1)
            }
        }
    }

    private static func strings(_ entry: TOMLEntry, named key: String,
                                _ fail: (String, Int, Int) -> ConfigurationError) throws(ConfigurationError) -> [String] {
        switch entry.value {
        case .string(let text): return [text]
        case .array(let elements):
            var result: [String] = []
            for element in elements {
                guard case .string(let text) = element else { throw fail("'\(key)' takes strings", entry.line, entry.column) }
                result.append(text)
            }
            return result
        default:
            throw fail("'\(key)' takes a string or a list of strings", entry.line, entry.column)
        }
    }

    /// `FILE`, or `BACKING/.queryfs.toml` when there is one (else the defaults).
    public static func load(backing: String, file: String? = nil, now: Timestamp = .now) throws(ConfigurationError) -> Configuration {
        let path = file ?? backing + "/" + fileName
        let bytes: [UInt8]
        do {
            bytes = try readWholeFile(path)
        } catch {
            // No configuration file of its own: the defaults. Any other failure is the user's to know.
            if file == nil, error.errno == ENOENT { return Configuration() }
            throw ConfigurationError(file: path, line: 0, column: 0, message: "cannot read the configuration: \(error.message)")
        }
        return try Configuration(parsing: String(decoding: bytes, as: UTF8.self), file: path, now: now)
    }

    static func readWholeFile(_ path: String) throws(SystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 { throw SystemError.current("read", path: path) }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            if bytes.count > 4 << 20 { throw SystemError(errno: EFBIG, operation: "read", path: path) }
        }
    }

    /// Whether an item name matches an ignore pattern (shell globs, as fnmatch(3)).
    public func ignores(_ name: String) -> Bool {
        ignore.contains { fnmatch($0, name, 0) == 0 }
    }

    /// The views as definitions, for a `ViewSet`.
    public var viewDefinitions: [ViewDefinition] { views.map { $0.query.view(at: $0.path) } }
}

public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int
    public let message: String
    /// `FILE:LINE:COLUMN: message`, or `FILE: message` when no place in it is at fault.
    public var description: String { line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)" }
}
