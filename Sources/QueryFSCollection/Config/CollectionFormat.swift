#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// The shapes of collection people keep, as presets of `.queryfs.toml`
/// (`format = "obsidian"`): each sets what that shape needs, and any
/// setting written in the file after it is taken over the preset's.
package enum CollectionFormat: String, CaseIterable, Sendable {
    /// Bundles with `payload.plist` or `payload.json` directly in BACKING (the default).
    case hipstapaper
    /// A vault of Markdown notes in nested folders, fields from front matter.
    case obsidian
    /// ArchiveBox's `archive/` folder: `<timestamp>/index.json` per saved page,
    /// tags as one comma-separated string, `created` from the bookmark's date.
    case archivebox
    /// Photos in year/month folders with darktable's `X.jpg.xmp` sidecars.
    case darktable
    /// Photos with digiKam's (or Lightroom's) `X.xmp` sidecars.
    case digikam
    /// yt-dlp's downloads: `X.mp4` beside `X.info.json`.
    case ytdlp = "yt-dlp"

    func apply(to configuration: inout Configuration) {
        switch self {
        case .hipstapaper:
            break
        case .obsidian:
            configuration.sources.recursive = true
            configuration.sources.inlineTags = true
            configuration.sources.extraKeyPaths.formUnion(["status", "aliases"])
        case .archivebox:
            configuration.sources.payloadNames = ["index.json"]
            configuration.sources.title = ["title"]
            configuration.sources.url = ["url"]
            configuration.sources.tags = ["tags"]
            configuration.sources.tagsMayBeText = true
            configuration.sources.created = ["bookmarked_date", "timestamp"]
            configuration.sources.extraKeyPaths.formUnion(["domain"])
        case .darktable, .digikam:
            configuration.sources.recursive = true
            configuration.sources.sidecars = Sidecars([.xmp])
            // What photo views filter on: kept without --payload-key.
            configuration.sources.extraKeyPaths.formUnion(["rating", "label"])
        case .ytdlp:
            configuration.sources.recursive = true
            configuration.sources.sidecars = Sidecars([.json])
            configuration.sources.url = ["webpage_url", "url"]
            configuration.sources.created = ["timestamp", "upload_date"]
            configuration.sources.extraKeyPaths.formUnion(["uploader", "channel", "duration"])
        }
    }

    /// How many of BACKING's entries `suggestion` looks at.
    static let sampleSize = 1_000

    /// One line saying which preset BACKING plainly is, when its
    /// configuration names none: nil when nothing stands out. Looks at
    /// BACKING's own entries only: two names asked for, and the first
    /// `sampleSize` entries of its listing (what a collection plainly is
    /// shows in any thousand of its entries; reading all of a 100,000-item
    /// folder cost `queryfs ls --trust-index` 0.18 s of its 1.2).
    package static func suggestion(for path: String, configuration: Configuration) -> String? {
        guard configuration.format == nil, let root = try? BackingDirectory(path: path),
              let entries = try? DirectoryReader.readEntries(consuming: dup(root.fd), limit: sampleSize) else { return nil }
        let exists = { (name: String) in faccessat(root.fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 }
        let file = path + "/" + Configuration.fileName
        if exists(".obsidian"), !configuration.sources.recursive {
            return "\(path) looks like an Obsidian vault: `format = \"obsidian\"` in \(file) reads its notes in every folder"
        }
        if exists("archive"), exists("ArchiveBox.conf") {
            return "\(path) looks like an ArchiveBox data folder: mount its archive/ folder, with `format = \"archivebox\"` in archive/\(Configuration.fileName)"
        }
        let sidecarCount = { (suffix: String) in entries.count { String(decoding: $0.name, as: UTF8.self).lowercased().hasSuffix(suffix) } }
        if configuration.sources.sidecars.isEmpty, sidecarCount(".info.json") >= 3 {
            return "\(path) looks like a yt-dlp folder: `format = \"yt-dlp\"` in \(file) reads each video's .info.json"
        }
        if configuration.sources.sidecars.isEmpty, sidecarCount(".xmp") >= 3 || holdsSidecarsBelow(root.fd, entries: entries) {
            return "\(path) holds XMP sidecars: `format = \"darktable\"` (or \"digikam\") in \(file) reads their tags and ratings"
        }
        let timestamps = entries.filter { entry in
            let text = String(decoding: entry.name, as: UTF8.self)
            return !text.isEmpty && text.allSatisfy { $0.isNumber || $0 == "." } && faccessat(root.fd, text + "/index.json", F_OK, 0) == 0
        }
        if timestamps.count >= 3, timestamps.count * 2 >= entries.count, configuration.sources.payloadNames == FieldSources.defaultPayloadNames {
            return "\(path) looks like ArchiveBox's archive folder: `format = \"archivebox\"` in \(file) reads each index.json"
        }
        return nil
    }

    /// Whether the first folders of a photo tree (`2024/05/`, darktable's
    /// and digiKam's own layout) hold XMP sidecars: two levels down, the
    /// first three folders of each, a listing of at most `sampleSize` each
    /// (found from outside: a tree of year folders got no hint).
    private static func holdsSidecarsBelow(_ folderFD: Int32, entries: [DirectoryEntry], depth: Int = 2) -> Bool {
        guard depth > 0 else { return false }
        for entry in entries.filter({ $0.type == UInt8(DT_DIR) && $0.name.first != UInt8(ascii: ".") }).prefix(3) {
            let fd = (entry.name + [0]).withUnsafeBufferPointer { name in
                name.withMemoryRebound(to: CChar.self) { openat(folderFD, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard let inner = try? DirectoryReader.readEntries(consuming: dup(fd), limit: sampleSize) else { continue }
            if inner.count(where: { String(decoding: $0.name, as: UTF8.self).lowercased().hasSuffix(".xmp") }) >= 3 { return true }
            if holdsSidecarsBelow(fd, entries: inner, depth: depth - 1) { return true }
        }
        return false
    }
}
