import ArgumentParser

/// Words that start with one dash but are no option. ArgumentParser reads
/// `-archived` as the short flags `-a -r -c -h -i -v -e -d`, finds `-h`
/// among them and prints the help with status 0: a script's query that
/// starts with `-` got a page of help as its entries (found from outside).
/// The only short options are `-h`, `-0` (`ls`), `-f` and `-o` (`mount`),
/// so any longer single-dash word before `--` is refused here instead,
/// unless it is a number (`--last -3`) or an `-o` with its options attached.
enum DashedWords {
    static func check(_ arguments: [String]) throws {
        let command = arguments.first.map { $0.hasPrefix("-") ? "ls" : $0 } ?? "ls"
        let words = Array(arguments.prefix(while: { $0 != "--" }))
        for (index, word) in words.enumerated() {
            // A tag that starts with '-' (`--add -x`, `--add -1`): ArgumentParser
            // said "Missing value"; given with `=`, it is taken as it is.
            if index > 0, ["--add", "--remove"].contains(words[index - 1]), word.count >= 2, word.hasPrefix("-") {
                throw ValidationError("\(word) is not an option; as the value of \(words[index - 1]), give it as \(words[index - 1])=\(word)")
            }
            // The value of an option that takes any word (`--since -5m`, `--last -1`): its own check says what is wrong with it.
            if index > 0, Self.optionsTakingAnyValue.contains(words[index - 1]) { continue }
            guard isUnknownShortGroup(word) else { continue }
            throw ValidationError("\(word) is not an option; an argument that starts with '-' goes after '--' (queryfs \(command) BACKING -- \(word))")
        }
    }

    /// The options declared with `parsing: .unconditional`.
    private static let optionsTakingAnyValue: Set<String> = ["--since", "--last", "--lock-timeout", "--poll", "--poll-share",
                                                             "--age-recount", "--query-folders"]

    private static func isUnknownShortGroup(_ word: String) -> Bool {
        guard word.count > 2, word.hasPrefix("-"), !word.hasPrefix("--"), !word.hasPrefix("-o") else { return false }
        return Double(word) == nil
    }
}
