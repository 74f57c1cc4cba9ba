import QueryFSEngine

// What each fuzz target does with its input once parsed: the paths a real
// mount takes (the scan's payload path, live views, a change). Here, in the
// package, because the fuzz package (Fuzz/, built with libFuzzer's
// instrumentation, never in the normal build) is another package and sees
// only what is public: `FuzzEntryPoints` is its door, an SPI (`@_spi(Fuzzing)
// import QueryFSCollection`), outside the library's API and its documentation.

/// The fuzz targets' entry points: any input, no trap.
@_spi(Fuzzing) public enum FuzzEntryPoints {
    /// A payload file's bytes, named `fileName` (`payload.plist`: property
    /// lists, binary or XML; `payload.json`), read as the scan reads it, then
    /// an item with its fields moved through live views and back.
    public static func payload(_ bytes: [UInt8], fileName: String) { PayloadProbe.check(bytes, fileName: fileName) }

    /// A query's text: parsed, made a view, kept current through a change and an age recount.
    public static func query(_ text: String) { QueryProbe.check(text) }

    /// `.queryfs.toml`, as it may be edited (or synced) while mounted.
    public static func configuration(_ bytes: [UInt8]) {
        if let configuration = try? Configuration(bytes: bytes, file: ".queryfs.toml", now: Timestamp(seconds: 1_700_000_000)) {
            _ = LiveIndex(items: FuzzProbeItems.sample, viewSet: configuration.viewSet)
        }
    }

    /// The head of a Markdown note: its YAML or TOML front matter and first
    /// heading, as the scan reads them, then the fields taken from it.
    /// Then the edits a view makes, written back into it (`FrontMatterEditor`):
    /// a tag added and one removed, a title set. Each either reads back as
    /// meant or is refused; none may trap.
    public static func frontMatter(_ bytes: [UInt8]) {
        let note = FrontMatter.parse(bytes)
        _ = FrontMatter.parse(bytes, inlineTags: true)
        if !note.payload.isEmpty { _ = PayloadFields(payload: .dictionary(note.payload), paths: FieldSources().splitPaths) }
        let tags = FrontMatterEditor.tags(note)
        let name = ItemName("fuzz.md")
        _ = try? FrontMatterEditor.settingTags(tags + ["fuzz"], in: bytes, name: name)
        if let first = tags.first { _ = try? FrontMatterEditor.settingTags(tags.filter { $0 != first }, in: bytes, name: name) }
        _ = try? FrontMatterEditor.setting("title", to: .string("Fuzz: \"title\""), in: bytes, name: name)
    }

    /// An XMP sidecar (a photo's tags, rating, title), then the fields taken from it.
    /// Then the edits a view makes, written back into it (`XMPSidecarEditor`):
    /// a tag added (a nested one too) and one removed; each reads back as
    /// meant or is refused, none may trap.
    public static func xmpSidecar(_ bytes: [UInt8]) {
        guard let payload = try? XMPSidecar.read(bytes) else { return }
        _ = PayloadFields(payload: payload, paths: FieldSources().splitPaths)
        let tags = (try? XMPSidecarEditor.tags(bytes)) ?? []
        _ = try? XMPSidecarEditor.settingTags(tags + ["fuzz & <tag>", "a/b"], in: bytes)
        if let first = tags.first { _ = try? XMPSidecarEditor.settingTags(tags.filter { $0 != first }, in: bytes) }
    }

    /// The index file, as a disk, a crash or another program may leave it
    /// (checksums not checked, so mutations reach the decoding behind them).
    public static func indexFile(_ bytes: [UInt8]) { IndexFileProbe.check(bytes) }
}

/// Items with the values that broke orders before: NaN, ±infinity, dates at
/// either end of time, missing values, the same title twice.
enum FuzzProbeItems {
    static let sample: [Item] = {
        let values: [PayloadValue?] = [.real(.nan), .real(.infinity), .real(-.infinity), .real(0), .integer(.min), .integer(.max),
                                       .date(.nan), .date(1e300), .date(-.infinity), .string("x"), .bool(true), nil]
        return values.enumerated().map { index, value in
            var payload: [String: PayloadValue] = [:]
            if let value { payload = ["n": value, "d": value] }
            return Item(name: ItemName("item-\(index)"), kind: .bundle, title: index % 3 == 0 ? "Same" : "Item \(index)",
                        archived: index % 2 == 0, tags: index % 4 == 0 ? ["t", "u/v"] : [],
                        modified: Timestamp(seconds: Int64(index) * 1_000), payloadValues: payload)
        }
    }()

    /// Views over every field, sorted every way.
    static let views: ViewSet = {
        let texts = ["sort:payload.n", "sort:-payload.d,title", "payload.n>0 sort:payload.n", "tag:t sort:-payload.n,-modified",
                     "sort:title,-payload.d", "payload.d<1990-01-01 or archived sort:-size"]
        let now = Timestamp(seconds: 1_700_000_000)
        return ViewSet(fixed: ViewDefinition.builtIn + texts.enumerated().compactMap { index, text in
            (try? Query(parsing: text, now: now))?.view(at: ["v\(index)"])
        })
    }()
}

/// A payload as the scan reads it, then placed in live views and changed.
enum PayloadProbe {
    private static let scanner: Scanner = {
        var sources = FieldSources()
        sources.extraKeyPaths = ["n", "d", "title", "tags", "a.b", "0", "webLocation.relative"]
        return Scanner(sources: sources)
    }()

    static func check(_ bytes: [UInt8], fileName: String) {
        let item = scanner.item(named: ItemName("fuzzed"), payload: bytes, fileName: fileName)
        let index = LiveIndex(items: FuzzProbeItems.sample + [item], viewSet: FuzzProbeItems.views)
        // Its values move to another item, and back: each view finds both again.
        var moved = FuzzProbeItems.sample[0]
        moved.payloadValues = item.payloadValues
        moved.tags = item.tags
        index.apply([moved.name: moved])
        index.apply([item.name: nil, moved.name: FuzzProbeItems.sample[0]])
    }
}

/// A query parsed, evaluated and kept live.
enum QueryProbe {
    static func check(_ text: String) {
        let now = Timestamp(seconds: 1_700_000_000)
        guard let query = try? Query(parsing: text, now: now) else { return }
        let index = LiveIndex(items: FuzzProbeItems.sample)
        _ = index.queryView(text, query)
        var changed = FuzzProbeItems.sample[1]
        changed.payloadValues = FuzzProbeItems.sample[0].payloadValues
        index.apply([changed.name: changed])
        _ = index.countQueryAges(from: Timestamp(seconds: 1_800_000_000))
    }
}
