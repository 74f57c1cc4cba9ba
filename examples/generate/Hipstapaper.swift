// --shape hipstapaper (the default): a reading list of Hipstapaper bundles,
// `<UUID>.hpwebsite/payload.plist`, sometimes `image.jpg`. The README's demo
// and the benchmarks depend on these exact bytes: the order of the random
// draws below must not change.

#if canImport(Glibc)
import Glibc
#endif

let subjects = ["Swift", "Linux", "FUSE", "inotify", "Git", "Rust", "SQLite", "Kernel", "Unicode", "Climbing",
                "Coffee", "Typography", "Bread", "Jazz", "Chess", "Sailing", "Photography", "Maps"]
/// `%` is the subject, `%n` a number.
let titleShapes = ["Notes on %", "% in Practice", "The Epic Search for %", "Why % Matters", "% Part %n",
                   "A Field Guide to %", "Understanding % (%n/12)", "% vs. Everything", "Ten Things About %",
                   "%: Lessons Learned"]
let hosts = ["example.com", "blog.example.org", "news.example.net", "docs.example.io"]
let tagNames = ["swift", "linux", "to read", "reference", "long read", "rock/metal", "Work", "work", "recipes",
                "kernel", "unicode", "photography"]

func payload(title: String, url: String, archived: Bool, tags: [String]) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    \t<key>isArchived</key>
    \t<\(archived ? "true" : "false")/>
    \t<key>tags</key>
    \t<array>
    \(tags.map { "\t\t<string>\(xmlEscaped($0))</string>\n" }.joined())\t</array>
    \t<key>webLocation</key>
    \t<dict>
    \t\t<key>relative</key>
    \t\t<string>\(xmlEscaped(url))</string>
    \t</dict>
    \t<key>webTitle</key>
    \t<string>\(xmlEscaped(title))</string>
    </dict>
    </plist>

    """
}

func writeHipstapaper(to output: String, count: Int, seed: UInt64) {
    makeDirectory(output)
    var random = SeededGenerator(state: seed)
    let now = referenceNow
    for index in 0..<count {
        let subject = random.pick(subjects)
        var title = random.pick(titleShapes).replacingOccurrences("%n", "\(random.below(30) + 1)")
        title = title.replacingOccurrences("%", subject)
        if random.chance(3) { title += "  " }  // trailing white space, trimmed in entry names
        let url = "https://\(random.pick(hosts))/\(subject.lowercased())/\(index)"
        let archived = random.chance(20)
        var tags: [String] = []
        for _ in 0..<random.below(4) {
            let tag = random.pick(tagNames)
            if !tags.contains(tag) { tags.append(tag) }
        }
        let bundle = "\(output)/\(uuid(&random)).hpwebsite"
        makeDirectory(bundle)
        writeFile("\(bundle)/payload.plist", Array(payload(title: title, url: url, archived: archived, tags: tags).utf8))
        let modified = now - random.below(365 * 86_400)
        setTimes("\(bundle)/payload.plist", seconds: modified)
        if random.chance(10) {
            var image: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
            for _ in 0..<(256 + random.below(2048)) { image.append(UInt8(truncatingIfNeeded: random.next())) }
            writeFile("\(bundle)/image.jpg", image)
            setTimes("\(bundle)/image.jpg", seconds: modified - random.below(86_400))
        }
        setTimes(bundle, seconds: modified - random.below(3600))
    }
}
