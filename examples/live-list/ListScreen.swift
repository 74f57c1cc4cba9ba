#if canImport(Glibc)
import Glibc
#endif
import QueryFS

/// Writes `text` at once, unbuffered (the list is read as it is drawn; a
/// test reads the printed lines as they come).
func emit(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
    var text = text
    text.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let count = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }  // the reader is gone: nothing left to tell
            done += count
        }
    }
}

/// What the program shows a change on: the terminal, or printed lines.
protocol ListScreen: Sendable {
    func show(_ change: CollectionChange) async
    /// Reads the user's commands and acts on the collection, until quit.
    func readCommands(for collection: ItemCollection) async
    func finish() async
}

/// One line of the list: what a row shows of an item.
func row(_ item: CollectionItem) -> String {
    let tags = item.tags.isEmpty ? "" : "  #" + item.tags.joined(separator: " #")
    return (item.isArchived ? "▪ " : "  ") + item.title + tags
}

/// The edits a command asks for, shared by both screens.
func perform(_ edit: ItemEdit, onItemAt index: Int, of collection: ItemCollection) -> String? {
    let items = collection.items
    guard items.indices.contains(index) else { return "no item \(index)" }
    do {
        try collection.edit(items[index], edit)
        return nil
    } catch {
        return "\(error)"
    }
}
