#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// `BACKING/.queryfs.toml`: views defined by the user (path → query), field
/// aliases (which payload keys feed `title`, `archived`, `tags`, `url`) and
/// ignore patterns (item names that are not items). Every error names the
/// file, line and column.
///
///     format = "obsidian"                  # a preset (CollectionFormat): the settings below it implies
///     ignore = ["*.tmp", "Drafts*"]
///     recursive = true                      # items at any depth of subfolders
///     payload = ["index.json"]              # the files that make a folder a bundle
///     sidecars = ["xmp", "json"]            # X.jpg.xmp / X.xmp, X.info.json / X.json beside a file
///     inline-tags = true                    # notes' #tags in their text are tags too
///     queries = ["tag:swift -archived"]     # saved query/ folders (mkdir/rmdir there)
///     desktop-entries = ["by-modified", "tag/*"]  # these views' entries are .desktop links (DesktopEntryViews)
///
///     [fields]
///     title = ["title", "webTitle"]
///     tags = ["tags", "keywords"]
///
///     [views]
///     "reading/today" = "tag:today -archived"
///     swift = "tag:swift sort:title"
///
///     [conflicts]                          # what conflicts/ lists (ConflictPatterns)
///     markers = [".sync-conflict-", "conflicted copy", "_conflict-"]
///     numbered-copies = true               # X 2.ext, X (1).ext beside X.ext
///     git-markers = true
package struct Configuration: Equatable, Sendable {
    package static let fileName = ".queryfs.toml"

    package struct View: Equatable, Sendable {
        package let path: [String]
        package var query: Query
        /// As written, to be read again with a later now (relative ages).
        package let text: String
    }

    /// The same configuration with its relative ages counted from `now`
    /// (the texts parsed when it was loaded parse again).
    package func countingAges(from now: Timestamp) -> Configuration {
        var copy = self
        for index in copy.views.indices where copy.views[index].query.shortestAge != nil {
            if let query = try? Query(parsing: copy.views[index].text, now: now) { copy.views[index].query = query }
        }
        return copy
    }

    package var views: [View] = []
    package var sources = FieldSources()
    package var ignore: [String] = []
    /// The preset `format = "…"` named, if any.
    package var format: CollectionFormat?
    /// Queries saved as `query/<query>/` folders (`mkdir` there adds one).
    package var savedQueries: [String] = []
    /// The views whose entries are freedesktop link files.
    package var desktopEntries = DesktopEntryViews()

    package init() {}

    /// Folder names a configured view may not take: the mount's own.
    package static let reservedNames: Set<String> = Set(ViewDefinition.builtIn.map { $0.path[0] })
        .union(["bundles", ViewDefinition.tagFolder, ViewDefinition.queryFolder])

    package init(parsing text: String, file: String, now: Timestamp) throws(ConfigurationError) {
        let (table, layout) = try Self.parseTOML(text, file: file)
        func fail(_ message: String, at path: [String], column: Int? = nil) -> ConfigurationError {
            let place = layout.place(of: path)
            return ConfigurationError(file: file, line: place?.line ?? 1, column: column ?? place?.column ?? 1, message: message)
        }
        /// Where the value of `path` starts (for errors inside a string).
        func valueColumn(of path: [String]) -> Int { layout.key(path)?.valuePlace.column ?? 1 }
        // A preset first, whatever its place: every other setting is taken over it.
        if let value = table["format"] {
            guard let name = value.tomlString, let format = CollectionFormat(rawValue: name) else {
                throw fail("'format' is one of \(CollectionFormat.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))",
                           at: ["format"], column: valueColumn(of: ["format"]))
            }
            self.format = format
            format.apply(to: &self)
        }
        // In the order written, so the first mistake is the one reported.
        let topLevel = table.keys.sorted { layout.order(of: [$0]) < layout.order(of: [$1]) }
        for key in topLevel {
            let value = table[key]
            switch key {
            case "format":
                break
            case "payload":
                let names = try Self.strings(value, named: key) { fail($0, at: [key]) }
                if let bad = names.first(where: { $0.isEmpty || $0.hasPrefix(".") || $0.contains("/") || $0.utf8.count > 255 }) {
                    throw fail("'\(bad)' cannot name a payload file (a name in the bundle, not hidden, no '/')", at: [key], column: valueColumn(of: [key]))
                }
                guard !names.isEmpty else { throw fail("'payload' names at least one file", at: [key], column: valueColumn(of: [key])) }
                sources.payloadNames = names
            case "inline-tags":
                guard let flag = value?.tomlBool else { throw fail("'inline-tags' is true or false", at: [key], column: valueColumn(of: [key])) }
                sources.inlineTags = flag
            case "sidecars":
                let names = try Self.strings(value, named: key) { fail($0, at: [key]) }
                var kinds: [SidecarKind] = []
                for name in names {
                    guard let kind = SidecarKind(rawValue: name) else {
                        throw fail("'\(name)' is no sidecar kind (\(SidecarKind.allCases.map(\.rawValue).joined(separator: ", ")))",
                                   at: [key], column: valueColumn(of: [key]))
                    }
                    if !kinds.contains(kind) { kinds.append(kind) }
                }
                sources.sidecars = Sidecars(kinds)
            case "ignore":
                ignore = try Self.strings(value, named: key) { fail($0, at: [key]) }
            case "recursive":
                guard let flag = value?.tomlBool else { throw fail("'recursive' is true or false", at: [key], column: valueColumn(of: [key])) }
                sources.recursive = flag
            case "queries":
                savedQueries = try Self.strings(value, named: key) { fail($0, at: [key]) }
                for text in savedQueries {
                    do {
                        _ = try Query(parsing: text, now: now)
                    } catch {
                        throw fail("saved query '\(text)': \(error.message)", at: [key], column: valueColumn(of: [key]))
                    }
                }
            case "desktop-entries":
                let patterns = try Self.strings(value, named: key) { fail($0, at: [key]) }
                if let bad = patterns.first(where: { $0.isEmpty || $0.hasPrefix("/") }) {
                    throw fail("'\(bad)' is no view path pattern (by-name, reading/today, tag/*, query/*, *)",
                               at: [key], column: valueColumn(of: [key]))
                }
                desktopEntries = DesktopEntryViews(patterns)
            case "views", "fields", "conflicts":
                guard value?.tomlTable != nil else { throw fail("'\(key)' is a table: [\(key)]", at: [key]) }
            default:
                if value?.tomlTable != nil, layout.header([key]) != nil {
                    throw fail("unknown table [\(key)] (tables: [views], [fields], [conflicts])", at: [key], column: 1)
                }
                throw fail("unknown setting '\(key)' (settings: format, ignore, recursive, payload, sidecars, inline-tags, queries, desktop-entries, [views], [fields], [conflicts])", at: [key], column: 1)
            }
        }
        if let fields = table["fields"]?.tomlTable {
            for key in fields.keys.sorted(by: { layout.order(of: ["fields", $0]) < layout.order(of: ["fields", $1]) }) {
                let keys = try Self.strings(fields[key], named: key) { fail($0, at: ["fields", key]) }
                switch key {
                case "title": sources.title = keys
                case "archived": sources.archived = keys
                case "tags": sources.tags = keys
                case "url": sources.url = keys
                case "created": sources.created = keys
                default: throw fail("unknown field '\(key)' in [fields] (title, archived, tags, url, created)", at: ["fields", key], column: 1)
                }
            }
        }
        if let conflicts = table["conflicts"]?.tomlTable {
            for key in conflicts.keys.sorted(by: { layout.order(of: ["conflicts", $0]) < layout.order(of: ["conflicts", $1]) }) {
                let place = ["conflicts", key]
                switch key {
                case "markers":
                    let markers = try Self.strings(conflicts[key], named: key) { fail($0, at: place) }
                    if let bad = markers.first(where: { $0.isEmpty || $0.contains("/") }) {
                        throw fail("'\(bad)' cannot mark a name (an empty text or one with '/')", at: place, column: valueColumn(of: place))
                    }
                    sources.conflicts.markers = markers
                case "numbered-copies", "git-markers":
                    guard let flag = conflicts[key]?.tomlBool else { throw fail("'\(key)' is true or false", at: place, column: valueColumn(of: place)) }
                    if key == "numbered-copies" { sources.conflicts.numberedCopies = flag } else { sources.conflicts.gitMarkers = flag }
                default:
                    throw fail("unknown setting '\(key)' in [conflicts] (markers, numbered-copies, git-markers)", at: place, column: 1)
                }
            }
        }
        if let viewTable = table["views"]?.tomlTable {
            // Each key's place found once: asked in the sort's every comparison (a
            // search of the whole layout each), 10,000 views took 9 s to load (found from outside).
            let order = layout.orders()
            let place = { (key: String) in order[["views", key]] ?? Int.max }
            for key in viewTable.keys.sorted(by: { place($0) < place($1) }) {
                let place = ["views", key]
                let path = key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                if let bad = path.first(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.utf8.count > 255 }) {
                    throw fail("'\(key)' is not a view path ('\(bad)' cannot be a folder name)", at: place, column: 1)
                }
                // A NUL ended the folder's name early (shadowing another view), a
                // newline split `queryfs views`'s lines (found from outside).
                if key.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) || key.unicodeScalars.contains(where: TerminalText.isWideControl) {
                    throw fail("view '\(key)' holds a control character; a folder name cannot", at: place, column: 1)
                }
                if Self.reservedNames.contains(path[0]) {
                    throw fail("'\(path[0])' is the mount's own folder; a view cannot take it", at: place, column: 1)
                }
                // Hidden names at the top are the mount's too (`.queryfs/status`, the trash's
                // `.Trash-UID`): a view named so was listed twice and could not be reached.
                if path[0].hasPrefix(".") {
                    throw fail("'\(path[0])' is hidden: hidden names at the top of the mount are its own (.queryfs, .Trash-UID)", at: place, column: 1)
                }
                guard let text = viewTable[key]?.tomlString else { throw fail("a view is a query in quotes", at: place, column: valueColumn(of: place)) }
                do {
                    views.append(View(path: path, query: try Query(parsing: text, now: now), text: text))
                } catch {
                    // The query's column inside the quotes (exact unless it uses escapes).
                    throw fail("view '\(key)': \(error.message)", at: place, column: valueColumn(of: place) + 1 + error.position)
                }
            }
        }
        // A folder is either a view or holds views, not both. Each view's
        // folders above it looked up, not every pair compared (quadratic).
        var holders: [[String]: [String]] = [:]
        for other in views where other.path.count > 1 {
            for length in 1..<other.path.count where holders[Array(other.path.prefix(length))] == nil {
                holders[Array(other.path.prefix(length))] = other.path
            }
        }
        for view in views {
            if let other = holders[view.path] {
                throw fail("'\(view.path.joined(separator: "/"))' is a view and also holds '\(other.joined(separator: "/"))'",
                           at: ["views", view.path.joined(separator: "/")], column: 1)
            }
        }
    }

    /// The document as toml++ reads it (TOML 1.0; `TOMLDocument`), after
    /// the checks of `checkTOML`, each refused with its place.
    static func parseTOML(_ text: String, file: String) throws(ConfigurationError) -> ([String: PayloadValue], TOMLLayout) {
        let layout = try checkTOML(text, file: file)
        do {
            return (try TOMLDocument.read(text), layout)
        } catch {
            throw ConfigurationError(file: file, line: error.line, column: error.column, message: error.message)
        }
    }

    /// Two checks of our own before toml++ may see a document: no control
    /// characters (TOML allows none but tab and line breaks; toml++ is handed
    /// a C string, so a NUL would silently end the document there), and none
    /// of the inputs toml++'s parser assumes away (`TOMLLayout.problem`).
    /// Returns the document's layout.
    static func checkTOML(_ text: String, file: String) throws(ConfigurationError) -> TOMLLayout {
        var line = 1, column = 1
        var previous: Unicode.Scalar = "\n"
        for scalar in text.unicodeScalars {
            if previous == "\r", scalar != "\n" {
                throw ConfigurationError(file: file, line: line, column: column - 1, message: "a carriage return is allowed only before a line feed")
            }
            if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" || scalar.value == 0x7F {
                let code = String(scalar.value, radix: 16, uppercase: true)
                throw ConfigurationError(file: file, line: line, column: column,
                                         message: "the control character U+\(String(repeating: "0", count: 4 - code.count))\(code) is not allowed in TOML")
            }
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            previous = scalar
        }
        if previous == "\r" {
            throw ConfigurationError(file: file, line: line, column: column - 1, message: "a carriage return is allowed only before a line feed")
        }
        if let (line, column) = nulEscapePlace(text) {
            throw ConfigurationError(file: file, line: line, column: column,
                                     message: "a NUL character (\\u0000) cannot be part of a setting: it would end the text there")
        }
        let layout = TOMLLayout(text)
        if let problem = layout.problem {
            throw ConfigurationError(file: file, line: problem.place.line, column: problem.place.column, message: problem.message)
        }
        return layout
    }

    /// Where an escaped NUL (`\u0000`, `\U00000000`) is: toml++ hands strings
    /// over as C strings, so the text ended there — a view `"x\u0000y"` became
    /// `x` and took the place of the view `x` (found from outside). An escape
    /// is a backslash preceded by an even number of backslashes (in a literal
    /// string it is no escape; refusing one there too is the rare cost of one scan).
    static func nulEscapePlace(_ text: String) -> (line: Int, column: Int)? {
        let bytes = Array(text.utf8)
        let backslash = UInt8(ascii: "\\")
        var line = 1, lineStart = 0, run = 0
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "\n") { line += 1; lineStart = index + 1 }
            defer { run = byte == backslash ? run + 1 : 0 }
            guard byte == backslash, run % 2 == 0, index + 1 < bytes.count else { continue }
            let rest = bytes[(index + 1)...]
            if rest.starts(with: Array("u0000".utf8)) || rest.starts(with: Array("U00000000".utf8)) {
                return (line, String(decoding: bytes[lineStart..<index], as: UTF8.self).count + 1)
            }
        }
        return nil
    }

    private static func strings(_ value: PayloadValue?, named key: String,
                                _ fail: (String) -> ConfigurationError) throws(ConfigurationError) -> [String] {
        if let text = value?.tomlString { return [text] }
        guard let array = value?.tomlArray else { throw fail("'\(key)' takes a string or a list of strings") }
        var result: [String] = []
        for element in array {
            guard let text = element.tomlString else { throw fail("'\(key)' takes strings") }
            result.append(text)
        }
        return result
    }

    /// `FILE`, or `BACKING/.queryfs.toml` when there is one (else the defaults).
    package static func load(backing: String, file: String? = nil, now: Timestamp = .now) throws(ConfigurationError) -> Configuration {
        let path = file ?? backing + "/" + fileName
        let bytes: [UInt8]
        do {
            bytes = try file == nil ? readBackingsOwnFile(path, backing: backing) : readWholeFile(path)
        } catch {
            // No configuration file of its own: the defaults. Any other failure is the user's to know.
            if file == nil, error.errno == ENOENT { return Configuration() }
            throw ConfigurationError(file: path, line: 0, column: 0, message: "cannot read the configuration: \(error.message)")
        }
        return try Configuration(bytes: bytes, file: path, now: now)
    }

    /// A configuration from the bytes of its file (UTF-8 checked first).
    package init(bytes: [UInt8], file: String, now: Timestamp) throws(ConfigurationError) {
        try self.init(parsing: try Self.text(of: bytes, file: file), file: file, now: now)
    }

    /// The file's text; TOML is UTF-8, and a byte that is not is refused
    /// with its place rather than read as U+FFFD.
    static func text(of bytes: [UInt8], file: String) throws(ConfigurationError) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var line = 1, column = 1, offset = 0
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            case .emptyInput: break decoding
            case .error: break decoding
            }
        }
        throw ConfigurationError(file: file, line: line, column: column, message: "not UTF-8 (byte \(offset + 1))")
    }

    /// BACKING's own configuration file, read as BACKING's owner when the
    /// daemon is root: whoever owns BACKING writes `.queryfs.toml`, and a
    /// symbolic link there to a file they may not read (/etc/shadow, a
    /// root-only TOML file of views) must be refused as it would be for
    /// them, not read with root's rights into views and error lines. A
    /// configuration given with `--config` is the administrator's: read as
    /// the daemon.
    static func readBackingsOwnFile(_ path: String, backing: String) throws(SystemError) -> [UInt8] {
        try asPlacer(of: path, backing: backing) { () throws(SystemError) in try readWholeFile(path) }
    }

    /// Runs `body` with the rights of whoever placed the configuration
    /// `path` in `backing` (`placer`), as the daemon itself when that is
    /// root or the daemon cannot switch.
    static func asPlacer<R>(of path: String, backing: String, _ body: () throws(SystemError) -> R) throws(SystemError) -> R {
        guard ThreadCredentials.canSwitch, let (uid, gid) = placer(of: path, backing: backing) else { return try body() }
        return try ThreadCredentials.run(as: uid, gid) { Result { () throws(SystemError) in try body() } }.get().get()
    }

    /// Who put the configuration there: the owner of its entry (the file, or
    /// the link to it), else BACKING's owner; nil for root. A link another
    /// user plants in a shared BACKING is followed with that user's rights,
    /// never the daemon's (found from outside: root's daemon read a
    /// root-only file through such a link, showed its views to the planter,
    /// and rewrote it when a query was saved).
    static func placer(of path: String, backing: String) -> (uid_t, gid_t)? {
        var status = stat()
        if lstat(path, &status) == 0, status.st_uid != 0 { return (status.st_uid, status.st_gid) }
        guard stat(backing, &status) == 0, status.st_uid != 0 else { return nil }
        return (status.st_uid, status.st_gid)
    }

    /// The whole file, which must be a regular file: opened without
    /// waiting (a FIFO or a device named `.queryfs.toml` would otherwise
    /// hang `mount` and `views` forever), then checked before it is read.
    static func readWholeFile(_ path: String) throws(SystemError) -> [UInt8] {
        let read = path.withCString { name in
            Result { () throws(SystemError) in
                try DirectoryReader.readFile(name, in: AT_FDCWD, expectedSize: 4096, limit: 4 << 20, followingLinks: true)
            }
        }
        // The reader knows the file by descriptor; the error names the path.
        return try read.mapError { SystemError(errno: $0.errno, operation: $0.operation, path: path, detail: $0.detail) }.get()
    }

    /// Whether an item name matches an ignore pattern (shell globs, as fnmatch(3)).
    package func ignores(_ name: String) -> Bool {
        ignore.contains { fnmatch($0, name, 0) == 0 }
    }

    /// The same for an item's name, made a String only when there are
    /// patterns (a start asks for each of 100,000 names, nearly always of
    /// a configuration with none).
    package func ignores(_ name: ItemName) -> Bool {
        !ignore.isEmpty && ignores(name.description)
    }

    /// The views as definitions, for a `ViewSet`.
    package var viewDefinitions: [ViewDefinition] { views.map { $0.query.view(at: $0.path) } }
}

package struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    package let file: String
    package let line: Int
    package let column: Int
    package let message: String
    /// `FILE:LINE:COLUMN: message`, or `FILE: message` when no place in it is at fault.
    package var description: String { line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)" }
}
