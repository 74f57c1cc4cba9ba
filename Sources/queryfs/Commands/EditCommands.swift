import ArgumentParser
import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

/// What every edit command takes: BACKING, the configuration (its field
/// aliases say which payload keys to edit) and how long to wait for a lock.
struct EditOptions: ParsableArguments {
    @Argument(help: "The backing directory.", completion: .directory) var backing: String
    @Option(name: .customLong("config"), help: "The configuration file (default: BACKING/.queryfs.toml when there is one).")
    var configFile: String?
    // `parsing: .unconditional` on numbers: `-1` is the value (refused by `validate()` in words), not "Missing value".
    @Option(name: .customLong("lock-timeout"), parsing: .unconditional, help: "Seconds to wait for an item's lock before failing.")
    var lockTimeout: Double = 5

    func validate() throws {
        guard lockTimeout >= 0, lockTimeout.isFinite else { throw ValidationError("--lock-timeout takes a number of seconds, 0 or more") }
    }

    /// The directory edited: BACKING, or the one a queryfs mount shows when BACKING is that mount (`BackingArgument`).
    func directory() throws -> String { try BackingArgument.directory(backing) }

    func editor() throws -> ItemEditor {
        let backing = try directory()
        let configuration = try CatalogLoader.configurationFor(backing, configFile: configFile)
        do {
            return ItemEditor(backing: try BackingDirectory(path: backing, readingAs: configuration.sources),
                              sources: configuration.sources, lockTimeout: lockTimeout)
        } catch {
            throw Failure("cannot read backing directory \(backing): \(error.message)")
        }
    }

    /// The tags `edits` would remove that `item` does not carry, each with
    /// the tags nested below it that it does (`a` for an item of `a/b`).
    static func absentRemovals(_ edits: [FieldEdit], of item: ItemName, editor: ItemEditor) -> [(tag: String, nested: [String])] {
        let removals = edits.compactMap { edit -> String? in if case .removeTag(let tag) = edit { tag } else { nil } }
        guard !removals.isEmpty, let tags = try? editor.fields(of: item).tags else { return [] }
        let carried = Set(tags.map(EntryNaming.canonicalTag))
        return removals.map(EntryNaming.canonicalTag).filter { !carried.contains($0) }.map { tag in
            (tag, tags.filter { EntryNaming.canonicalTag($0).hasPrefix(tag + "/") })
        }
    }

    /// Waits until BACKING's running mounts show what was done; a mount that
    /// did not confirm it in time is said in one line (the edit stands).
    static func settleMounts(of backing: String) {
        for mountPoint in MountedViews.settle(backing: backing) {
            printError("warning: the mount at \(mountPoint) did not show the edit within 2 s (it will once its daemon catches up)")
        }
    }

    /// Applies `edits` to each item in turn; every failure is a line, and the
    /// command fails if any did. One action: one `undo` takes back what the
    /// command did to all its items.
    func apply(_ edits: [FieldEdit], to items: [String]) throws {
        let backing = try directory()
        let editor = try editor()
        // Every item checked before any is edited: a command over several
        // items that could not be made whole was made in part, exited 2, and
        // did not say so (found from outside).
        var resolved: [(item: ItemName, absent: [(tag: String, nested: [String])])] = []
        var refusals: [String] = []
        for text in items {
            do throws(EditError) {
                let item = try ItemReference.resolve(bytes: RawArguments.bytes(of: text), backing: backing, recursive: editor.sources.recursive,
                                                     payloadNames: editor.sources.payloadNames)
                let absent = Self.absentRemovals(edits, of: item, editor: editor)
                if let refusal = editor.refusal(of: edits, to: item) {
                    // Named, as every line of a command over several items must be.
                    refusals.append(refusal.message.hasPrefix(item.description) ? refusal.message : "\(item): \(refusal.message)")
                }
                // `--remove lra` on an item of `lra/b/c` alone: said, not a silent 0 (found from outside).
                for (tag, nested) in absent where !nested.isEmpty {
                    refusals.append("\(item): does not carry tag '\(tag)' itself, only \(nested.map { "'\($0)'" }.joined(separator: ", ")): "
                        + "remove \(nested.count == 1 ? "that" : "those") by name")
                }
                resolved.append((item, absent))
            } catch {
                refusals.append(error.message)
            }
        }
        guard refusals.isEmpty else {
            for line in refusals { printError(line) }
            if items.count > 1 { printError("nothing was changed: the command edits all its items or none") }
            throw ExitCode(2)
        }
        let action = items.count > 1 ? EditJournal.newAction() : nil
        var changed: [ItemName] = []
        var failed = false
        for (item, absent) in resolved {
            do throws(EditError) {
                if try editor.apply(edits, to: item, action: action) != nil { changed.append(item) }
                for (tag, _) in absent { printError("\(item): does not carry tag '\(tag)': nothing to remove") }
            } catch {
                printError(error.message)
                failed = true
                // The journal, not the item, could not be had: every other item would
                // wait its --lock-timeout too, one after another (found from outside).
                if error.errno == EBUSY, error.message.contains(EditJournal.fileName) { break }
            }
        }
        // A failure while editing (a lock held, a full disk) can still come after
        // other items were changed: said, and one undo takes them back.
        if failed, !changed.isEmpty {
            printError("\(changed.count) of \(items.count) items were changed all the same: `queryfs undo \(self.backing)` takes them back")
        }
        Self.settleMounts(of: backing)
        if failed { throw ExitCode(2) }
    }
}

/// `queryfs tag BACKING ITEM... --add T --remove U`.
struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag", abstract: "Add and remove tags of items (in their payloads; plain files: user.xdg.tags).",
        discussion: "ITEM is a bundle's name, a path into BACKING, or a path into a mount of it (bundles/X or a view's entry). "
            + "Every edit is journaled: `queryfs undo BACKING` takes it back. "
            + "While BACKING is mounted, the command returns once the mount shows the edit (MOUNTPOINT/.queryfs/settled).")

    @OptionGroup var options: EditOptions
    @Argument(help: "The items.") var items: [String]
    @Option(name: .customLong("add"), help: "A tag to add (repeatable).") var add: [String] = []
    @Option(name: .customLong("remove"), help: "A tag to remove (repeatable).") var remove: [String] = []

    func validate() throws {
        guard !add.isEmpty || !remove.isEmpty else { throw ValidationError("say what to do: --add TAG or --remove TAG") }
        // A tag with no folder under tag/ would be written and then shown nowhere.
        if let lost = add.first(where: { EntryNaming.tagFolderName($0) == nil }) {
            throw ValidationError("tag '\(lost)' would have no folder under tag/ (empty, or a part that is . or ..): not added")
        }
        guard !items.isEmpty else { throw ValidationError("name at least one item") }
        // Added and removed at once would be one or the other, depending on the order applied (found from outside: it added).
        // As the folders name them: `a//b` and `a/b` are one tag.
        let removed = Set(remove.compactMap(EntryNaming.tagFolderName))
        if let both = add.first(where: { remove.contains($0) || EntryNaming.tagFolderName($0).map(removed.contains) == true }) {
            throw ValidationError("tag '\(both)' is both added and removed: say one")
        }
    }

    func run() throws {
        // Written as its folder names it: `a//b` is `a/b` (found from outside: kept as typed,
        // it showed in tag/a/b/ while `tag:a/b` matched nothing).
        let added = add.map(EntryNaming.canonicalTag)
        try reportingFailures { try options.apply(remove.map(FieldEdit.removeTag) + added.map(FieldEdit.addTag), to: items) }
    }
}

/// `queryfs archive BACKING ITEM...` (and `unarchive`).
struct ArchiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "archive", abstract: "Mark items archived (done reading).")
    @OptionGroup var options: EditOptions
    @Argument(help: "The items.") var items: [String]
    func run() throws { try reportingFailures { try options.apply([.setArchived(true)], to: items) } }
}

struct UnarchiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unarchive", abstract: "Mark items not archived.")
    @OptionGroup var options: EditOptions
    @Argument(help: "The items.") var items: [String]
    func run() throws { try reportingFailures { try options.apply([.setArchived(false)], to: items) } }
}

/// `queryfs set BACKING ITEM FIELD=VALUE...`.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set fields of an item: title=TEXT, archived=true|false, payload.KEY=VALUE (text, number or boolean).",
        discussion: "A value is read as a query reads it: true/false/yes/no are booleans, numbers are numbers, anything else text. "
            + "`payload.KEY=` with nothing after it removes the key (of a payload: a note's front-matter keys are set, not removed).")

    @OptionGroup var options: EditOptions
    @Argument(help: "The item.") var item: String
    @Argument(help: "FIELD=VALUE, one or more.") var assignments: [String]

    func run() throws {
        try reportingFailures {
            var edits: [FieldEdit] = []
            for assignment in assignments {
                guard let equals = assignment.firstIndex(of: "=") else { throw Failure("'\(assignment)' is not FIELD=VALUE") }
                let field = String(assignment[..<equals]), value = String(assignment[assignment.index(after: equals)...])
                edits.append(try Self.edit(field, value))
            }
            try options.apply(edits, to: [item])
        }
    }

    private static func edit(_ field: String, _ value: String) throws -> FieldEdit {
        switch field {
        case "title": return .setTitle(value)
        case "archived":
            guard let flag = ["true": true, "yes": true, "false": false, "no": false][value.lowercased()] else {
                throw Failure("archived=\(value): give true or false")
            }
            return .setArchived(flag)
        case _ where field.hasPrefix("payload.") && field.count > "payload.".count:
            let path = String(field.dropFirst("payload.".count))
            if value.isEmpty { return .removePayload(path) }
            if let flag = ["true": true, "yes": true, "false": false, "no": false][value.lowercased()] { return .setPayload(path, .bool(flag)) }
            if let number = Int64(value) { return .setPayload(path, .integer(number)) }
            if let number = Double(value), number.isFinite { return .setPayload(path, .real(number)) }
            return .setPayload(path, .string(value))
        default:
            throw Failure("cannot set '\(field)' (title, archived, payload.KEY; tags with `queryfs tag`)")
        }
    }
}

/// `queryfs history BACKING`: the journal of edits.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "List the edits made through views and edit commands.")
    @Argument(help: "The backing directory.", completion: .directory) var backing: String
    @Option(name: .customLong("since"), parsing: .unconditional, help: "Only edits since this date or age (2024-05-01, 5m, 2h).") var since: String?

    func run() throws {
        try reportingFailures {
            let cutoff = try since.map(JournalTime.parse)
            let entries = try JournalTime.entries(try BackingArgument.directory(backing)).filter { $0.time >= (cutoff ?? -.infinity) }
            var output = StandardOutput()
            for entry in entries {
                for line in Self.lines(of: entry) { output.line(line) }
            }
            output.flush()
        }
    }

    /// An edit's lines: one per field changed (`undo` prints what it took back the same way).
    /// An undo that found the item as before the edit changed nothing: one line says so.
    static func lines(of entry: EditJournal.Entry) -> [String] {
        // The action an edit was part of, so that what `undo --last N` counts
        // can be seen (found from outside: history did not show it). Shown as
        // this program writes it; anything else a hand-made line holds is not printed.
        let action = entry.action.map { action in
            action.utf8.count <= 40 && action.utf8.allSatisfy({ (48...57).contains($0) || (97...122).contains($0) || $0 == 45 })
                ? "\t(action \(action))" : "\t(action)"
        } ?? ""
        let undoes = (entry.undoes.map { "\t(undoes \($0))" } ?? "") + action
        guard !entry.changes.isEmpty else {
            return ["\(ISO8601.format(entry.time))\t\(entry.id)\t\(JournalTime.field(entry.item))\t(no change: already as before the edit)\(undoes)"]
        }
        return entry.changes.map { change in
            "\(ISO8601.format(entry.time))\t\(entry.id)\t\(JournalTime.field(entry.item))\t\(change.field)\t"
                + "\(JournalTime.text(change.old)) -> \(JournalTime.text(change.new))\(undoes)"
        }
    }
}

/// `queryfs undo BACKING [--last N | --since TIME]`.
struct UndoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo", abstract: "Take back journaled edits, newest first (the last one by default).",
        discussion: """
            An edit whose item changed since in the same field is not taken back (one line says so); the others are. \
            The edits of one action (a tag folder renamed through a mount, one `tag`, `archive` or `unarchive` over \
            several items) are taken back together. Each change taken back is printed as `queryfs history` lists it; when there is nothing left to take back, one line says so.
            """)

    @OptionGroup var options: EditOptions
    @Option(name: .customLong("last"), parsing: .unconditional, help: "Take back the last N edits (one action's edits count as one).") var last: Int?
    @Option(name: .customLong("since"), parsing: .unconditional, help: "Take back every edit since this date or age (2024-05-01, 5m).") var since: String?

    func validate() throws {
        if last != nil && since != nil { throw ValidationError("give --last or --since, not both") }
        if let last, last < 1 { throw ValidationError("--last takes a number of edits, at least 1") }
    }

    func run() throws {
        try reportingFailures {
            let cutoff = try since.map(JournalTime.parse)
            let turn = try JournalTime.undoTurn(try options.directory())
            defer { withExtendedLifetime(turn) {} }
            let journaled = try JournalTime.entries(try options.directory(), forUndo: true)
            guard !journaled.isEmpty else {
                printError("nothing to undo in \(options.backing): no edit is journaled there")
                return
            }
            let chosen = EditJournal.undoable(journaled, last: cutoff == nil ? (last ?? 1) : nil, since: cutoff)
            guard !chosen.isEmpty else {
                // Said, not silent: a second `undo` used to return 0 with no sign it had done nothing.
                if let cutoff, !journaled.contains(where: { $0.undoes == nil && $0.time >= cutoff }) {
                    // None since then at all is not "all undone" (found from outside).
                    printError("nothing to undo in \(options.backing): no edit is journaled since then")
                } else {
                    printError("nothing to undo in \(options.backing): every journaled edit \(cutoff == nil ? "is" : "since then is") undone already")
                }
                return
            }
            let editor = try options.editor()
            var failed = false
            var output = StandardOutput(doneAnyway: "what was undone is undone all the same: `queryfs history` lists it")
            var checkedActions: Set<String> = []
            for entry in chosen {
                // An action is taken back whole or not at all: each of its edits is asked first
                // (found from outside: the newer ones were taken back, the rest left).
                if let action = entry.action, checkedActions.insert(action).inserted {
                    let refusals = chosen.filter { $0.action == action }.compactMap { editor.undoRefusal($0) }
                    if !refusals.isEmpty {
                        output.flush()
                        for refusal in refusals { printError(refusal.message) }
                        let edits = chosen.filter { $0.action == action }.count
                        let older = chosen.count - (chosen.firstIndex { $0.id == entry.id } ?? 0) - edits
                        printError("action \(action) (\(edits) edits) is not undone: none of its edits is taken back"
                            + (older > 0 ? ", and \(older) older edit\(older == 1 ? " is" : "s are") left as \(older == 1 ? "it is" : "they are")" : "")
                            + "; run undo again once these are as the action left them")
                        failed = true
                        break
                    }
                }
                do throws(EditError) {
                    if let undoing = try editor.undo(entry) {
                        for line in HistoryCommand.lines(of: undoing) { output.line(line) }
                    } else {
                        output.line("\(entry.id)\t\(JournalTime.field(entry.item))\talready as before the edit; nothing to take back")
                    }
                } catch {
                    output.flush()
                    printError(error.message)
                    // Undo is a stack: past a failure the older edits stay (found from
                    // outside: on a full disk each undo after the first was made but
                    // not journaled, and the next `undo` found the files matching none).
                    let left = chosen.count - 1 - (chosen.firstIndex { $0.id == entry.id } ?? 0)
                    if left > 0 { printError("\(left) older edit\(left == 1 ? " is" : "s are") left as \(left == 1 ? "it is" : "they are"); run undo again once this one is") }
                    failed = true
                    break
                }
            }
            output.flush()
            EditOptions.settleMounts(of: try options.directory())
            if failed { throw ExitCode(2) }
        }
    }
}

/// BACKING as the edit commands take it. A queryfs mount (or its
/// `bundles/`) given as BACKING stands for the directory it shows: edited
/// through the mount, an item's lock would be a folder's flock, which the
/// kernel keeps to itself (FUSE sends no flock for folders), so the
/// command's read-change-write raced the mount's own edits and lost some
/// (found from outside). Any other folder of a mount is no backing directory.
enum BackingArgument {
    static func directory(_ given: String) throws -> String {
        try requireUsableMount(given)
        guard let resolved = resolvedPath(given), let (mount, rest) = MountTable.queryfsMount(containing: resolved),
              mount.type == "fuse.queryfs"
        else { return given }
        guard rest.isEmpty || rest == QueryFilesystem.bundlesName else {
            throw Failure("\(given) is a folder of the queryfs mount at \(mount.mountPoint), not a backing directory: give \(mount.source) (or the mount point)")
        }
        return mount.source
    }
}

/// Reading the journal for the commands.
enum JournalTime {
    /// This command's turn to undo (`EditJournal.waitForUndoTurn`), held until it is let go.
    static func undoTurn(_ backing: String) throws -> EditJournal.UndoTurn? {
        let root: BackingDirectory
        do {
            root = try BackingDirectory(path: backing)
        } catch {
            throw Failure("cannot read backing directory \(backing): \(error.message)")
        }
        do {
            return try EditJournal(backing: root).waitForUndoTurn()
        } catch {
            // Plain words (found from outside: "cannot take a turn at the journal").
            throw Failure("cannot undo in \(backing): \(error.message)")
        }
    }

    /// `forUndo`: only from a journal of the caller's or root's (`requireTrustedOwner`).
    static func entries(_ backing: String, forUndo: Bool = false) throws -> [EditJournal.Entry] {
        do {
            let journal = EditJournal(backing: try BackingDirectory(path: backing))
            if forUndo { try journal.requireTrustedOwner() }
            var damaged = 0
            let entries = try journal.entries(damaged: &damaged)
            // Said, not silent (found from outside: a flipped byte made an edit vanish from history and undo).
            if damaged > 0 {
                printError("warning: \(damaged) line\(damaged == 1 ? "" : "s") of \(backing)/\(EditJournal.fileName) \(damaged == 1 ? "is" : "are") damaged (checksum or form) and left out")
            }
            return entries
        } catch {
            throw Failure("cannot read the journal of \(backing): \(error.message)")
        }
    }

    /// An item's name as one field of a line (`TerminalText`: a backslash,
    /// tab, newline or other control character escaped).
    static func field(_ name: ItemName) -> String { TerminalText.escaped(name.description) }

    /// A date (ISO 8601) or an age (`5m`, `2h`), as seconds since 1970.
    static func parse(_ text: String) throws -> Double {
        guard let date = Timestamp(dateOrAge: text, now: .now) else { throw Failure("'\(text)' is not a date (2024-05-01) or an age (5m, 2h, 7d)") }
        return date.timeInterval
    }

    static func text(_ value: PayloadValue?) -> String {
        guard let value else { return "(none)" }
        switch value {
        case .string(let text): return "\"" + TerminalText.escaped(text, quoting: true) + "\""
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .array(let elements): return "[" + elements.map { text($0) }.joined(separator: ", ") + "]"
        case .dictionary(let entries):
            return "{" + entries.sorted { $0.key < $1.key }
                .map { "\"" + TerminalText.escaped($0.key, quoting: true) + "\": " + text($0.value) }.joined(separator: ", ") + "}"
        default: return TerminalText.escaped("\(value)")
        }
    }
}
