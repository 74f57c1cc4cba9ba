// --shape ytdlp: a yt-dlp download folder, `Title [ID].mp4` beside
// `Title [ID].info.json` (`--write-info-json`), names sanitized as yt-dlp
// does, the info JSON on one line as yt-dlp writes it.

/// `%` is the subject. `:`, `/`, `|`, `?` and `"` show yt-dlp's file name
/// replacements; the JSON keeps the real title.
let videoTitleShapes = ["% in 10 Minutes", "Why % Is Harder Than You Think", "I Tried % for 30 Days",
                        "%: A Complete Beginner's Guide", "The History of %", "% Explained | Part %n",
                        "Live Q&A: % (Replay)", "Before/After: %", "Is % Worth It?", "\"%\" — a Short Film"]
let channels = ["Tidewater Tech", "Chalk & Rope", "Byte Sized Kernel", "Crumb Lab", "Harbor Chess Club",
                "North Col Climbing"]
let videoTags = ["tutorial", "beginner", "how to", "review", "vlog", "explained", "deep dive", "linux", "swift",
                 "cooking", "outdoors"]
let videoCategories = ["Education", "Science & Technology", "Howto & Style", "Entertainment", "Sports",
                       "People & Blogs"]

func writeYtDlp(to output: String, count: Int, seed: UInt64) {
    var random = SeededGenerator(state: seed)
    var writer = TreeWriter(root: output)
    for _ in 0..<count {
        let id = videoID(&random)
        let subject = random.pick(subjects)
        let title = random.pick(videoTitleShapes).replacingOccurrences("%n", "\(1 + random.below(9))")
            .replacingOccurrences("%", subject)
        let uploaded = referenceNow - 86_400 - random.below(2 * 365 * 86_400)
        let downloaded = min(referenceNow, uploaded + random.below(60 * 86_400))
        let info = videoInfo(id: id, title: title, subject: subject, uploaded: uploaded, &random)
        let base = "\(ytDlpFileName(title)) [\(id)]"
        writer.write("\(base).mp4", fakeMP4(&random), time: uploaded)  // yt-dlp gives the upload time
        writer.write("\(base).info.json", text: info.rendered(), time: downloaded)
    }
    writer.finish()
}

/// Eleven characters of YouTube's base64url alphabet.
func videoID(_ random: inout SeededGenerator) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    return String((0..<11).map { _ in random.pick(alphabet) })
}

/// yt-dlp's default sanitizing: these characters become their full-width
/// look-alikes, `/` and `\` the big solidi, so the title survives in the name.
func ytDlpFileName(_ title: String) -> String {
    var name = ""
    for scalar in title.unicodeScalars {
        switch scalar {
        case "/": name += "\u{29F8}"
        case "\\": name += "\u{29F9}"
        case "\"", "*", ":", "<", ">", "?", "|": name.unicodeScalars.append(Unicode.Scalar(scalar.value + 0xFEE0)!)
        default: name.unicodeScalars.append(scalar)
        }
    }
    return name
}

func videoInfo(id: String, title: String, subject: String, uploaded: Int, _ random: inout SeededGenerator) -> JSON {
    let channel = random.pick(channels)
    let handle = "@" + String(channel.lowercased().filter { $0.isLetter || $0.isNumber })
    let duration = 60 + random.below(3540)  // under an hour, so duration_string is M:SS
    // Chapters in order, evenly spread: Intro first, Outro last.
    let names = ["Intro"] + random.distinct(["Setup", "The tricky part", "Results", "Q&A"], upTo: 1 + random.below(3))
        + ["Outro"]
    let chapters = names.enumerated().map { index, name in
        let start = index * duration / names.count
        return "\(start / 60):\(padded(start % 60, 2)) \(name)"
    }
    let description = "\(title).\n\nEverything about \(subject) we could fit in one video.\n\nChapters:\n"
        + chapters.joined(separator: "\n") + "\n\nhttps://example.com/\(subject.lowercased())"
    return .object([
        ("id", .string(id)),
        ("title", .string(title)),
        ("fulltitle", .string(title)),
        ("uploader", .string(channel)),
        ("uploader_id", .string(handle)),
        ("channel", .string(channel)),
        ("upload_date", .string(CivilTime(uploaded).compactDate)),
        ("webpage_url", .string("https://www.youtube.com/watch?v=\(id)")),
        ("tags", .array(random.distinct(videoTags, upTo: random.below(6)).map { .string($0) })),
        ("categories", .array([.string(random.pick(videoCategories))])),
        ("duration", .int(duration)),
        ("duration_string", .string("\(duration / 60):\(padded(duration % 60, 2))")),
        ("view_count", .int(random.below(2_000_000))),
        ("description", .string(description)),
        ("extractor", .string("youtube")),
        ("ext", .string("mp4")),
        ("_type", .string("video")),
    ])
}

/// An `ftyp` box and noise: enough for `file` to say MP4.
func fakeMP4(_ random: inout SeededGenerator) -> [UInt8] {
    let ftyp: [UInt8] = [0x00, 0x00, 0x00, 0x18] + Array("ftypisom".utf8) + [0x00, 0x00, 0x02, 0x00]
        + Array("isomiso2".utf8)
    return ftyp + random.bytes(32 + random.below(64))
}
