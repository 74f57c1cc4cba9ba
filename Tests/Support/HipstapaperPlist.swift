/// A Hipstapaper payload as XML, the one fixture every test target writes:
/// `isArchived`, `tags` and `webTitle`, with `&` and `<` escaped.
public enum HipstapaperPlist {
    public static func xml(title: String, archived: Bool = false, tags: [String] = []) -> String {
        func escaped(_ text: String) -> String {
            var out = ""
            for character in text {
                switch character {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                default: out.append(character)
                }
            }
            return out
        }
        let tagXML = tags.map { "<string>\(escaped($0))</string>" }.joined()
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>isArchived</key><\(archived ? "true" : "false")/>
            <key>tags</key><array>\(tagXML)</array>
            <key>webTitle</key><string>\(escaped(title))</string>
            </dict></plist>
            """
    }
}
