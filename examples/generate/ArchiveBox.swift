// --shape archivebox: an ArchiveBox data folder's archive/, one snapshot
// folder per page, named by its timestamp, with the index.json ArchiveBox
// writes (tags as ONE comma-separated string) and an index.html beside it.

let archiveTags = ["reading", "swift", "linux", "news", "research", "recipes", "long read", "reference"]

func writeArchiveBox(to output: String, count: Int, seed: UInt64) {
    var random = SeededGenerator(state: seed)
    var writer = TreeWriter(root: output)
    var used = Set<Int>()
    for index in 0..<count {
        // Whole seconds must differ too: ArchiveBox makes a clashing
        // timestamp unique the same way, by moving it on.
        var seconds = referenceNow - random.below(2 * 365 * 86_400)
        while used.contains(seconds) { seconds += 1 }
        used.insert(seconds)
        let timestamp = "\(seconds).\(padded(random.below(1000), 3))"
        let snapshot = archiveSnapshot(index: index, timestamp: timestamp, seconds: seconds, &random)
        let archived = seconds + 30 + random.below(600)  // the time it took to archive
        writer.write("archive/\(timestamp)/index.json", text: snapshot.json.rendered(indent: 4) + "\n", time: archived)
        writer.write("archive/\(timestamp)/index.html", text: snapshot.html, time: archived)
    }
    writer.finish()
}

/// One snapshot's index.json and index.html. A few pages never got a title
/// (`"title": null`), as when ArchiveBox could not fetch one.
func archiveSnapshot(index: Int, timestamp: String, seconds: Int,
                     _ random: inout SeededGenerator) -> (json: JSON, html: String) {
    let subject = random.pick(subjects)
    let title = random.pick(titleShapes).replacingOccurrences("%n", "\(random.below(30) + 1)")
        .replacingOccurrences("%", subject)
    let host = random.pick(hosts)
    var url = "https://\(host)/\(subject.lowercased())/\(index)"
    if random.chance(20) { url += "?utm_source=rss&utm_medium=feed" }  // `&` to escape in HTML
    let tags = random.distinct(archiveTags, upTo: random.below(4))
    let hasTitle = !random.chance(5)
    let bookmarked = CivilTime(seconds)
    let json = JSON.object([
        ("schema", .string("Link")),
        ("url", .string(url)),
        ("timestamp", .string(timestamp)),
        ("title", hasTitle ? .string(title) : .null),
        ("tags", .string(tags.joined(separator: ","))),
        ("sources", .array([.string("sources/\(seconds)-import.txt")])),
        ("base_url", .string("\(host)/\(subject.lowercased())/\(index)")),
        ("domain", .string(host)),
        ("bookmarked_date", .string("\(bookmarked.date) \(bookmarked.hourMinute)")),
        ("is_archived", .bool(true)),
        ("history", .object([])),
    ])
    let shown = hasTitle ? title : url
    let html = """
        <!DOCTYPE html>
        <html>
        <head><meta charset="utf-8"><title>\(markupEscaped(shown))</title></head>
        <body>
        <h1>\(markupEscaped(shown))</h1>
        <p>Archived from <a href="\(markupEscaped(url))">\(markupEscaped(url))</a> on \(bookmarked.date).</p>
        <p>Tags: \(markupEscaped(tags.isEmpty ? "none" : tags.joined(separator: ", ")))</p>
        </body>
        </html>

        """
    return (json, html)
}
