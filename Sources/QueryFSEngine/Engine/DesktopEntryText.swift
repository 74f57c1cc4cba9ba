/// The text of a desktop entry (`0001 Title.desktop`): a freedesktop
/// `Type=Link` file, which file managers show by its `Name=` and open by
/// handing `URL=` to the default program for it (the browser, for a web
/// page). Values are escaped as the Desktop Entry Specification's strings
/// (`\n`, `\t`, `\r`, `\\`, a leading `\s`), other control characters
/// dropped: a title or URL from a saved web page can never add a line —
/// never a `Type=Application` with an `Exec=` of its own.
package enum DesktopEntryText {
    /// URL schemes an entry hands on as they are. Any other (`file:` to an
    /// executable, `javascript:`, a scheme some program registered) opens
    /// the item itself instead: a double-click must not run what a web page
    /// named.
    package static let schemesOffered: Set<String> = ["http", "https", "ftp", "ftps", "mailto", "gemini", "gopher"]

    /// The file's bytes: `url` where it is offered, else `itemURL` (the item
    /// on the mount, as a `file:` URL); `icon` is an image file's absolute
    /// path or an icon name, omitted if nil.
    package static func make(title: String, url: String?, itemPath: [UInt8], icon: String?) -> [UInt8] {
        var text = "[Desktop Entry]\nType=Link\n"
        text += "Name=" + escaped(title) + "\n"
        let offered = url.flatMap { isOffered($0) ? $0 : nil }
        text += "URL=" + escaped(offered ?? fileURL(path: itemPath)) + "\n"
        if let icon { text += "Icon=" + escaped(icon) + "\n" }
        return Array(text.utf8)
    }

    /// Whether `url` is handed on as it is: an offered scheme, nothing after
    /// it that could end the line (those are escaped anyway, and such a URL is
    /// not one a browser should get).
    package static func isOffered(_ url: String) -> Bool {
        guard let colon = url.firstIndex(of: ":"), !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return false }
        return schemesOffered.contains(url[..<colon].lowercased())
    }

    /// `file://` and the path, each byte outside the unreserved set and `/`
    /// percent-encoded (a name need not be UTF-8).
    package static func fileURL(path: [UInt8]) -> String {
        var url = "file://"
        for byte in path {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                url.unicodeScalars.append("%")
                url.unicodeScalars.append(hex[Int(byte >> 4)])
                url.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return url
    }

    /// A string value as the specification escapes it.
    package static func escaped(_ value: String) -> String {
        var result = ""
        for (offset, scalar) in value.unicodeScalars.enumerated() {
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case " " where offset == 0: result += "\\s"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
