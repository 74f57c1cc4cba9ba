import QueryFS

/// Items with the values that broke orders before: NaN, ±infinity, dates at
/// either end of time, missing values, the same title twice.
public enum FuzzProbeItems {
    public static let sample: [Item] = {
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
    public static let views: ViewSet = {
        let texts = ["sort:payload.n", "sort:-payload.d,title", "payload.n>0 sort:payload.n", "tag:t sort:-payload.n,-modified",
                     "sort:title,-payload.d", "payload.d<1990-01-01 or archived sort:-size"]
        let now = Timestamp(seconds: 1_700_000_000)
        return ViewSet(fixed: ViewDefinition.builtIn + texts.enumerated().compactMap { index, text in
            (try? Query(parsing: text, now: now))?.view(at: ["v\(index)"])
        })
    }()
}

/// A payload as the scan reads it, then placed in live views and changed.
public enum PayloadProbe {
    private static let scanner: Scanner = {
        var sources = FieldSources()
        sources.extraKeyPaths = ["n", "d", "title", "tags", "a.b", "0", "webLocation.relative"]
        return Scanner(sources: sources)
    }()

    public static func check(_ bytes: [UInt8], fileName: String) {
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
public enum QueryProbe {
    public static func check(_ text: String) {
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
