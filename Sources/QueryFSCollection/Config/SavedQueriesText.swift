import QueryFSEngine
/// Rewrites the `queries = [...]` setting of a configuration file's text
/// and keeps everything else as the user wrote it (comments, order, layout):
/// `mkdir`/`rmdir` under `query/` edit a file people also edit by hand.
enum SavedQueriesText {
    /// `text` with its top-level `queries` set to `queries`: the old setting
    /// (one line, or an array over several) replaced in place, or a new one
    /// put first, where top-level settings must be.
    static func replacing(in text: String, with queries: [String]) -> String {
        let line = "queries = [" + queries.map(quoted).joined(separator: ", ") + "]"
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = settingLine(in: lines) else {
            return line + "\n" + text
        }
        let end = closingLine(from: start, in: lines)
        lines.replaceSubrange(start...end, with: [line])
        return lines.joined(separator: "\n")
    }

    /// A TOML basic string: a JSON string literal is one (same escapes),
    /// except that TOML also forbids DEL (U+007F) unescaped.
    static func quoted(_ value: String) -> String {
        let json = JSON.string(value)
        return json.contains("\u{7F}") ? json.replacingDeletes() : json
    }

    /// The line of the top-level `queries` setting (before any [table]).
    private static func settingLine(in lines: [String]) -> Int? {
        for (number, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("[") { return nil }
            for key in ["queries", "\"queries\"", "'queries'"] where trimmed.hasPrefix(key) {
                if trimmed.dropFirst(key.count).drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("=") { return number }
            }
        }
        return nil
    }

    /// The line where the array opened on `start` closes (strings skipped).
    private static func closingLine(from start: Int, in lines: [String]) -> Int {
        var depth = 0
        var opened = false
        for number in start..<lines.count {
            var quote: Character?
            var escaped = false
            for character in lines[number] {
                if let open = quote {
                    if escaped { escaped = false } else if open == "\"", character == "\\" { escaped = true } else if character == open { quote = nil }
                    continue
                }
                switch character {
                case "\"", "'": quote = character
                case "[": depth += 1; opened = true
                case "]": depth -= 1
                case "#": break
                default: continue
                }
                if character == "#" { break }
                if opened, depth == 0 { return number }
            }
            if !opened { return number }  // not an array: one line
        }
        return start
    }
}

private extension String {
    func replacingDeletes() -> String {
        var result = ""
        for scalar in unicodeScalars {
            if scalar == "\u{7F}" { result += "\\u007F" } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}
