// --shape notes: an Obsidian-like vault. Markdown notes in nested folders,
// most with YAML front matter written the many ways people (and Obsidian,
// Hugo, Jekyll) write it, some with TOML, the rest with only a `# Heading`;
// beside them what a real vault holds that is not a note (.obsidian/,
// .trash/, attachments/), and a .queryfs.toml that asks for every depth.

/// Top folders in the PARA style many vaults use, each with its own second level.
let vaultFolders: [(name: String, children: [String])] = [
    ("Projects", ["2024", "2025", "queryfs", "Kitchen Remodel", "Thesis"]),
    ("Areas", ["Reading", "Health", "Finance", "Home", "Writing"]),
    ("Resources", ["Recipes", "Swift", "Linux", "Photography", "Travel"]),
    ("Journal", ["2024", "2025"]),
    ("Archive", ["2023", "Old Projects"]),
    ("Inbox", []),
]
let vaultLeafFolders = ["docs", "Meetings", "Ideas", "Books", "Articles", "Q1", "Q2", "Snippets", "Logs"]

let noteSubjects = subjects + ["Obsidian", "Zettelkasten", "Sourdough", "Running", "Budgeting", "Vim",
                               "Kubernetes", "Gardening", "Espresso", "Stoicism", "Japanese", "Bouldering"]
/// `%` is the subject, `%n` a number. Colons make YAML quote the title; the
/// apostrophe tests single-quoted YAML.
let noteTitleShapes = ["Notes on %", "% Cheat Sheet", "Reading: %", "Book: The Art of %", "Meeting: % Sync",
                       "% — Weekly Review", "Ideas for %", "How I Learned %", "Q&A: %", "%: First Steps",
                       "%: Open Questions", "Why % Matters", "Don't Forget %", "Draft: % Essay",
                       "Learning % (Week %n)"]
/// Nested tags (`a/b`) as Obsidian writes them; `reading` is the demo's tag.
let noteTags = ["reading", "lang/swift", "lang/rust", "lang/python", "project/queryfs", "project/queryfs/docs",
                "idea", "todo", "book", "meeting", "recipe", "travel", "health", "linux", "writing", "inbox",
                "area/home"]
let noteSentences = ["% keeps coming up in what I read.", "The key idea: start small and write it down.",
                     "Three sources disagree on the basics of %.", "Try this again next week, with notes.",
                     "What would a beginner at % ask first?", "Most of the work is in the boring parts.",
                     "Compare with last year's notes before deciding.", "A good summary of % fits on a card.",
                     "The second attempt went much better than the first.", "Open question: is % worth the time?"]

/// One note before it is written out: where, what it is called, what it carries.
struct Note {
    var path: String
    var title: String
    var tags: [String]
    var archived: Bool?  // nil: no archived key
    var created: Int
    var modified: Int
}

func writeNotes(to output: String, count: Int, seed: UInt64, folders folderCount: Int) {
    var random = SeededGenerator(state: seed)
    var writer = TreeWriter(root: output)
    let folders = vaultFolderPaths(folderCount, &random)
    let notes = planNotes(count, in: folders, &random)
    for folder in folders { writer.makeFolder(folder, time: referenceNow - 2 * 365 * 86_400) }
    for (index, note) in notes.enumerated() {
        let links = notes[..<index].suffix(5).map { stem(of: $0.path) }
        writer.write(note.path, text: noteText(note, linking: links, &random), time: note.modified)
    }
    writeVaultExtras(&writer, notes: notes, &random)
    writer.finish()
}

// MARK: Planning

/// `count` distinct folders 1–3 levels deep; the first at least two, so that
/// even a one-folder vault (the default under 200 notes) is nested. When the
/// word lists run out of new paths, numbered topics keep the count exact.
func vaultFolderPaths(_ count: Int, _ random: inout SeededGenerator) -> [String] {
    var paths: [String] = []
    var attempts = 0
    while paths.count < count {
        attempts += 1
        let first = paths.isEmpty
        let top = random.pick(first ? vaultFolders.filter { !$0.children.isEmpty } : vaultFolders)
        var path = top.name
        let depth = first ? 2 + random.below(2) : 1 + random.below(3)
        if depth >= 2, !top.children.isEmpty {
            path += "/" + random.pick(top.children)
            if depth == 3 { path += "/" + random.pick(vaultLeafFolders) }
        }
        if attempts > 20 * count { path = "\(top.name)/Topic \(paths.count + 1)" }
        if !paths.contains(path) { paths.append(path) }
    }
    return paths
}

/// Every folder gets a note first (when there are enough), then the rest fall
/// anywhere. File names are unique in their folder, as a file system insists.
func planNotes(_ count: Int, in folders: [String], _ random: inout SeededGenerator) -> [Note] {
    var notes: [Note] = []
    var taken = Set<String>()
    for index in 0..<count {
        let folder = index < folders.count ? folders[index] : random.pick(folders)
        var title = noteTitle(&random)
        var attempts = 0
        while taken.contains("\(folder)/\(fileStem(title)).md") {
            // A fresh title, as a writer would choose; once the word lists run
            // dry, one made unique by the note's number. Never `X 2` or `X (2)`:
            // queryfs lists those beside X as sync copies (conflicts/).
            attempts += 1
            title = attempts < 20 ? noteTitle(&random) : "\(noteTitle(&random)) — note \(index + 1)"
        }
        let path = "\(folder)/\(fileStem(title)).md"
        taken.insert(path)
        var tags = random.distinct(noteTags, upTo: random.below(4))
        if random.chance(35), !tags.contains("reading") { tags.insert("reading", at: 0) }
        let archived: Bool? = random.chance(40) ? random.chance(30) : nil
        let modified = referenceNow - random.below(2 * 365 * 86_400)
        let created = modified - random.below(200 * 86_400)
        notes.append(Note(path: path, title: title, tags: tags, archived: archived, created: created, modified: modified))
    }
    return notes
}

func noteTitle(_ random: inout SeededGenerator) -> String {
    let subject = random.pick(noteSubjects)
    return random.pick(noteTitleShapes).replacingOccurrences("%n", "\(random.below(30) + 1)")
        .replacingOccurrences("%", subject)
}

/// Obsidian refuses `: / \ * ? " < > |` (and `# ^ [ ]` break links) in file
/// names, so titles with them get a different file name: the front matter
/// then has to carry the title.
func fileStem(_ title: String) -> String {
    var stem = title.replacingOccurrences(":", " -")
    for forbidden in ["/", "\\", "*", "?", "\"", "<", ">", "|", "#", "^", "[", "]"] {
        stem = stem.replacingOccurrences(forbidden, "")
    }
    return stem.replacingOccurrences("  ", " ")
}

func stem(of path: String) -> String {
    String(path.split(separator: "/").last!.dropLast(3))  // ".md"
}

// MARK: Writing a note

/// About 70 % YAML front matter, 15 % TOML, 15 % none.
func noteText(_ note: Note, linking links: [String], _ random: inout SeededGenerator) -> String {
    let kind = random.below(100)
    if kind < 70 {
        let (frontMatter, hasTitle) = yamlFrontMatter(note, &random)
        return frontMatter + noteBody(note, heading: hasTitle ? looseHeading(note, &random) : note.title,
                                      linking: links, &random)
    }
    if kind < 85 {
        return tomlFrontMatter(note, &random) + noteBody(note, heading: looseHeading(note, &random),
                                                         linking: links, &random)
    }
    // No front matter: the heading is the title. A third start with a code
    // fence whose `# comment` must not be taken for the heading.
    let fence = random.chance(33) ? "From the old wiki:\n\n```sh\n# not a heading: a shell comment\nls -la\n```\n\n" : ""
    return fence + noteBody(note, heading: note.title, linking: links, &random)
}

/// With a title in the front matter the heading is free: mostly the title,
/// sometimes something else or nothing (the front matter must win).
func looseHeading(_ note: Note, _ random: inout SeededGenerator) -> String? {
    switch random.below(10) {
    case 0, 1: return "Summary"
    case 2, 3: return nil
    default: return note.title
    }
}

/// YAML in the styles seen in the wild; says whether it holds a title.
func yamlFrontMatter(_ note: Note, _ random: inout SeededGenerator) -> (String, Bool) {
    var head: [String] = []
    let hasTitle = random.chance(75)
    if hasTitle { head.append("title: \(yamlScalar(note.title, &random))") }
    if random.chance(20) {
        let aliases = [note.title.lowercased(), stem(of: note.path)].map { yamlScalar($0, &random) }
        head.append("aliases: [\(aliases.joined(separator: ", "))]")
    }
    var tagLines = yamlTags(note.tags, &random)
    if hasTitle, random.chance(20) { swap(&head, &tagLines) }  // key order varies too
    var lines = head + tagLines
    if random.chance(20) { lines.append(random.pick(["# imported from Pocket", "# TODO: split this note"])) }
    switch random.below(100) {
    case ..<70: lines.append("created: \(yamlDate(note.created, &random))")
    case ..<85: lines.append("date: \(yamlDate(note.created, &random))")  // Jekyll's key
    default: break
    }
    if random.chance(40) { lines.append("updated: \(CivilTime(note.modified).date)") }
    if random.chance(50) {
        let comment = random.chance(25) ? "  # revisit next week" : ""
        lines.append("status: \(random.chance(50) ? "draft" : "done")\(comment)")
    }
    if random.chance(30) { lines.append("rating: \(1 + random.below(5))") }
    if let archived = note.archived { lines.append("archived: \(archived)") }
    return ("---\n" + lines.map { $0 + "\n" }.joined() + "---\n", hasTitle)
}

/// Block lists (indented or not), flow lists (some items quoted, one with
/// its `#`), a comma string, a space-separated string, or an empty list.
func yamlTags(_ tags: [String], _ random: inout SeededGenerator) -> [String] {
    if tags.isEmpty { return random.chance(15) ? [random.chance(50) ? "tags: []" : "tags:"] : [] }
    switch random.below(100) {
    case ..<40:
        let indent = random.chance(70) ? "  " : ""
        return ["tags:"] + tags.map { "\(indent)- \($0)" }
    case ..<70:
        let items = tags.map { tag in random.chance(15) ? quoted("#" + tag) : random.chance(20) ? quoted(tag) : tag }
        return ["tags: [\(items.joined(separator: ", "))]"]
    case ..<90:
        return ["tags: \(tags.joined(separator: ", "))"]
    default:
        return ["tags: \(tags.joined(separator: " "))"]
    }
}

/// Plain when YAML reads it back as the same text, else quoted: double
/// quotes when it must, single quotes now and then because people use both.
func yamlScalar(_ text: String, _ random: inout SeededGenerator) -> String {
    let special: Set<Character> = ["-", "?", ":", ",", "[", "]", "{", "}", "#", "&", "*", "!", "|", ">", "'", "\"",
                                   "%", "@", "`"]
    let words: Set<String> = ["true", "false", "yes", "no", "on", "off", "null", "~"]
    let mustQuote = text.isEmpty || text.contains(": ") || text.contains(" #") || text.hasSuffix(":")
        || special.contains(text.first!) || words.contains(text.lowercased()) || Double(text) != nil
        || text.first == " " || text.last == " "
    if mustQuote || random.chance(10) {
        return random.chance(70) ? quoted(text) : "'\(text.replacingOccurrences("'", "''"))'"
    }
    return text
}

/// A YAML date, a YAML timestamp with or without a zone, or Obsidian's own
/// date-time property (`2024-03-05T10:15`, which YAML reads as text).
func yamlDate(_ epoch: Int, _ random: inout SeededGenerator) -> String {
    let time = CivilTime(epoch)
    switch random.below(10) {
    case ..<4: return time.date
    case ..<6: return time.dateTime
    case ..<8: return "\(time.date)T\(time.hourMinute)"
    default: return time.dateTime + "Z"
    }
}

/// Hugo-style TOML: an offset date-time or a local date, a tag array, and
/// now and then a draft flag, a status, archived, and a comment.
func tomlFrontMatter(_ note: Note, _ random: inout SeededGenerator) -> String {
    let time = CivilTime(note.created)
    var lines = ["title = \(quoted(note.title))"]
    lines.append("date = \(random.chance(60) ? time.dateTime + "Z" : time.date)")
    if !note.tags.isEmpty { lines.append("tags = [\(note.tags.map(quoted).joined(separator: ", "))]") }
    if random.chance(30) { lines.append("draft = \(random.chance(50))") }
    if random.chance(30) { lines.append("status = \(quoted(random.chance(50) ? "draft" : "done"))") }
    if let archived = note.archived { lines.append("archived = \(archived)") }
    if random.chance(20) { lines.insert("# moved over from the Hugo site", at: 1) }
    return "+++\n" + lines.map { $0 + "\n" }.joined() + "+++\n"
}

/// A heading (or none), a paragraph, a list, and sometimes inline #tags
/// (which are not front matter), a wiki link, a code block, an embed.
func noteBody(_ note: Note, heading: String?, linking links: [String], _ random: inout SeededGenerator) -> String {
    let subject = noteSubjects.first { note.title.contains($0) } ?? "this"
    var body = heading.map { "# \($0)\n\n" } ?? ""
    let sentences = random.distinct(noteSentences, upTo: 2 + random.below(3)).map { $0.replacingOccurrences("%", subject) }
    body += sentences.joined(separator: " ") + "\n\n"
    let items = random.distinct(noteSentences, upTo: 1 + random.below(3)).map { $0.replacingOccurrences("%", subject) }
    body += items.map { "- \($0)\n" }.joined()
    if random.chance(30) { body += "\nSee #\(random.pick(noteTags)) and #\(random.pick(noteTags)).\n" }
    if let link = links.last, random.chance(30) { body += "\nRelated: [[\(link)]]\n" }
    if random.chance(10) { body += "\n```swift\nlet answer = 42  // # not a tag\n```\n" }
    if random.chance(10) { body += "\n![[\(pastedImageName)]]\n" }
    return body
}

// MARK: Everything else in a vault

/// Obsidian names pasted images by the time they were pasted.
let pastedImageName = "Pasted image 20240305101500.png"

/// .obsidian/ (hidden config), .trash/ (hidden, deleted notes), attachments/
/// (images: items, but not notes) and .queryfs.toml (every depth).
func writeVaultExtras(_ writer: inout TreeWriter, notes: [Note], _ random: inout SeededGenerator) {
    let oldest = notes.map(\.modified).min() ?? referenceNow - 2 * 365 * 86_400
    let newest = notes.map(\.modified).max() ?? referenceNow
    let app = JSON.object([
        ("attachmentFolderPath", .string("attachments")), ("newFileLocation", .string("current")),
        ("alwaysUpdateLinks", .bool(true)), ("propertiesInDocument", .string("visible")),
    ])
    writer.write(".obsidian/app.json", text: app.rendered(indent: 2) + "\n", time: oldest)
    writer.write(".obsidian/workspace.json", text: workspace(notes, &random).rendered(indent: 2) + "\n", time: newest + 60)
    let trash = "---\ntitle: An old note\ntags: [reading]\n---\n# An old note\n\nDeleted in Obsidian: moved here, not removed.\n"
    writer.write(".trash/old.md", text: trash, time: referenceNow - 500 * 86_400)
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]  // the PNG signature, nothing after
    writer.write("attachments/\(pastedImageName)", png + random.bytes(8), time: 1_709_633_700)
    writer.write("attachments/diagram.png", png + random.bytes(12), time: oldest)
    let config = "# Written by queryfs-sample: the notes are in nested folders, so read every depth.\nrecursive = true\n"
    writer.write(".queryfs.toml", text: config, time: oldest)
}

/// The last notes opened, in the shape of Obsidian's workspace.json.
func workspace(_ notes: [Note], _ random: inout SeededGenerator) -> JSON {
    func id() -> JSON { .string(hex(random.next(), digits: 16).lowercased()) }
    let recent = notes.sorted { $0.modified > $1.modified }.prefix(3).map(\.path)
    let leafID = id()
    let leaf = JSON.object([
        ("id", leafID), ("type", .string("leaf")),
        ("state", .object([("type", .string("markdown")),
                           ("state", .object([("file", .string(recent.first ?? "")), ("mode", .string("source"))]))])),
    ])
    let tabs = JSON.object([("id", id()), ("type", .string("tabs")), ("children", .array([leaf]))])
    return .object([
        ("main", .object([("id", id()), ("type", .string("split")), ("children", .array([tabs])),
                          ("direction", .string("vertical"))])),
        ("active", leafID),
        ("lastOpenFiles", .array(recent.map { .string($0) } + [.string("attachments/\(pastedImageName)")])),
    ])
}
