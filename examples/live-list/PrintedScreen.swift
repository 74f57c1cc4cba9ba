#if canImport(Glibc)
import Glibc
#endif
import QueryFS

/// Each change as lines (`insert 0 Alpha`, `move 2 → 0 Zulu`, …), then the
/// list as it now is; commands from stdin, one per line.
struct PrintedScreen: ListScreen {
    func show(_ change: CollectionChange) async {
        var lines: [String] = []
        for index in change.deletions.ranges.joined() { lines.append("delete \(index) \(change.before[index].title)") }
        for index in change.insertions.ranges.joined() { lines.append("insert \(index) \(change.items[index].title)") }
        for move in change.moves { lines.append("move \(move.from) → \(move.to) \(change.items[move.to].title)") }
        for index in change.updates.ranges.joined() { lines.append("update \(index) \(change.before[index].title)") }
        lines.append("list: " + change.items.map { String(row($0).drop { $0 == " " }) }.joined(separator: " | "))
        emit(lines.joined(separator: "\n") + "\n")
    }

    func readCommands(for collection: ItemCollection) async {
        while let line = readLine() {
            let words = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard let verb = words.first else { continue }
            if verb == "quit" { break }
            guard words.count >= 2, let index = Int(words[1]) else {
                emit("error: \(line): expected archive N, unarchive N, tag N TAG or quit\n")
                continue
            }
            let edit: ItemEdit? = switch verb {
            case "archive": .setArchived(true)
            case "unarchive": .setArchived(false)
            case "tag" where words.count == 3: .addTag(words[2])
            default: nil
            }
            guard let edit else {
                emit("error: \(line): expected archive N, unarchive N, tag N TAG or quit\n")
                continue
            }
            if let failure = perform(edit, onItemAt: index, of: collection) { emit("error: \(failure)\n") }
        }
        collection.close()
    }

    func finish() async {}
}
