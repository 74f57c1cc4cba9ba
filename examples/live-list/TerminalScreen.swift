#if canImport(Glibc)
import Glibc
#endif
import QueryFS

/// The list in the terminal, animated: a change first marks on the old
/// list the rows that go (red) and move (yellow), then shows the new list
/// with the rows that came (green), moved (yellow) and changed (cyan), then
/// settles. Keys change the selection and edit the selected item.
actor TerminalScreen: ListScreen {
    private let title: String
    private var items: [String] = []
    private var names: [String] = []
    private var selected = 0
    private var status = "j/k select · a archive/unarchive · t tag · q quit"
    private var saved = termios()

    init(title: String) {
        self.title = title
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        emit("\u{1B}[?1049h\u{1B}[?25l")  // the alternate screen, no cursor
    }

    func show(_ change: CollectionChange) async {
        if !change.isInitial {
            var marks: [Int: String] = [:]
            for index in change.deletions.ranges.joined() { marks[index] = "31" }
            for move in change.moves { marks[move.from] = "33" }
            draw(marks)
            try? await Task.sleep(for: .milliseconds(250))
        }
        items = change.applied(to: items, make: row) ?? change.items.map(row)
        names = change.items.map(\.name)
        selected = min(selected, max(items.count - 1, 0))
        var marks: [Int: String] = [:]
        for index in change.insertions.ranges.joined() where !change.isInitial { marks[index] = "32" }
        for move in change.moves { marks[move.to] = "33" }
        for index in change.updates.ranges.joined() { if let at = change.items.index(of: change.before[index]) { marks[at] = "36" } }
        draw(marks)
        if !marks.isEmpty {
            try? await Task.sleep(for: .milliseconds(600))
            draw([:])
        }
    }

    /// The keys, read outside the actor: a blocking read inside it held the
    /// actor, so no change was drawn until a key came (found from outside:
    /// "0 items" until `q`). Each key is then handled on the actor.
    nonisolated func readCommands(for collection: ItemCollection) async {
        var byte: UInt8 = 0
        var escape: [UInt8] = []
        while read(STDIN_FILENO, &byte, 1) == 1 {
            if byte == 0x1B || !escape.isEmpty { escape.append(byte) }  // arrows: ESC [ A / ESC [ B
            if escape.count < 3 && !escape.isEmpty { continue }
            let key = escape.count == 3 ? (escape[2] == 0x41 ? UInt8(ascii: "k") : UInt8(ascii: "j")) : byte
            escape = []
            switch key {
            case UInt8(ascii: "q"):
                collection.close()
                return
            case UInt8(ascii: "t"):
                let prompt = "tag: "
                var line: [UInt8] = []
                await showPrompt(prompt, line)
                while read(STDIN_FILENO, &byte, 1) == 1, byte != 0x0A {
                    if byte == 0x7F { _ = line.popLast() } else { line.append(byte) }
                    await showPrompt(prompt, line)
                }
                await tag(String(decoding: line, as: UTF8.self), of: collection)
            default:
                await handle(key, of: collection)
            }
        }
    }

    private func handle(_ key: UInt8, of collection: ItemCollection) {
        switch key {
        case UInt8(ascii: "j"): select(selected + 1)
        case UInt8(ascii: "k"): select(selected - 1)
        case UInt8(ascii: "a"):
            let archived = collection.items.indices.contains(selected) && collection.items[selected].isArchived
            status = perform(.setArchived(!archived), onItemAt: selected, of: collection) ?? (archived ? "unarchived" : "archived")
        default: break
        }
        draw([:])
    }

    private func tag(_ tag: String, of collection: ItemCollection) {
        if !tag.isEmpty { status = perform(.addTag(tag), onItemAt: selected, of: collection) ?? "tagged #\(tag)" }
        draw([:])
    }

    func finish() async {
        var saved = saved
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        emit("\u{1B}[?25h\u{1B}[?1049l")
    }

    private func select(_ index: Int) { selected = max(0, min(index, items.count - 1)) }

    /// The line being typed, with echo, on the status line.
    private func showPrompt(_ prompt: String, _ line: [UInt8]) {
        emit("\u{1B}[\(rows);1H\u{1B}[2K\(prompt)\(String(decoding: line, as: UTF8.self))")
    }

    private var rows: Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_row > 3 ? Int(size.ws_row) : 24
    }

    /// The visible rows around the selection, `marks` coloring rows by index (ANSI colors).
    private func draw(_ marks: [Int: String]) {
        let visible = rows - 2
        let top = max(0, min(selected - visible / 2, items.count - visible))
        var screen = "\u{1B}[H\u{1B}[2J\u{1B}[1m\(title) — \(items.count) items\u{1B}[0m\n"
        for index in top..<min(items.count, top + visible) {
            let color = marks[index].map { "\u{1B}[\($0)m" } ?? ""
            let cursor = index == selected ? "\u{1B}[7m" : ""
            screen += "\(cursor)\(color)\(items[index])\u{1B}[0m\n"
        }
        screen += "\u{1B}[\(rows);1H\u{1B}[2m\(status)\u{1B}[0m"
        emit(screen)
    }
}
