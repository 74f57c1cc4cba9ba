import QueryFSEngine
/// The live side of numbered copies (`X 2.ext` beside `X.ext`): whether a
/// name is a copy depends on another item being there, so the watcher keeps
/// every name shaped as a copy by the original it would copy, and marks
/// those copies again whenever that original comes or goes.
struct NumberedCopies {
    private var copiesByOriginal: [ItemName: Set<ItemName>] = [:]

    mutating func rebuild(names: some Sequence<ItemName>, patterns: ConflictPatterns) {
        copiesByOriginal = [:]
        guard patterns.numberedCopies else { return }
        for name in names { add(name, patterns: patterns) }
    }

    /// The table from names already known to be shaped as copies (a start's, `InitialItems.markNumberedCopies`).
    init(shapes: [(copy: ItemName, original: ItemName)]) {
        for (copy, original) in shapes { copiesByOriginal[original, default: []].insert(copy) }
    }

    init() {}

    private mutating func add(_ name: ItemName, patterns: ConflictPatterns) {
        if let original = patterns.originalOfNumberedCopy(name) { copiesByOriginal[original, default: []].insert(name) }
    }

    private mutating func remove(_ name: ItemName, patterns: ConflictPatterns) {
        guard let original = patterns.originalOfNumberedCopy(name) else { return }
        copiesByOriginal[original]?.remove(name)
        if copiesByOriginal[original]?.isEmpty == true { copiesByOriginal[original] = nil }
    }

    /// Marks the batch's items (nil: gone) and the existing copies of the
    /// names it makes or removes; keeps the table up to date with the batch.
    mutating func mark(_ batch: inout [ItemName: Item?], stamps: inout [ItemName: UInt64], records: RecordTable,
                       patterns: ConflictPatterns)
    {
        guard patterns.numberedCopies else { return }
        func exists(_ name: ItemName) -> Bool {
            if let state = batch[name] { return state != nil }
            return records[name] != nil
        }
        let names = Array(batch.keys)
        for name in names {
            let present = batch[name].map { $0 != nil } ?? false
            if present, records[name] == nil { add(name, patterns: patterns) }
            if !present, records[name] != nil { remove(name, patterns: patterns) }
        }
        for name in names {
            guard case .some(.some(var item)) = batch[name], item.conflict == nil || item.conflict == .numberedCopy,
                  let original = patterns.originalOfNumberedCopy(name) else { continue }
            item.setConflict(exists(original) ? .numberedCopy : nil, of: original)
            batch[name] = item
        }
        // An original made or removed: its copies that the batch did not read change mark.
        for name in names where exists(name) != (records[name] != nil) {
            for copy in copiesByOriginal[name] ?? [] where batch[copy] == nil {
                guard let record = records[copy], record.item.conflict == nil || record.item.conflict == .numberedCopy else { continue }
                var item = record.item
                item.setConflict(exists(name) ? .numberedCopy : nil, of: name)
                guard item != record.item else { continue }
                batch[copy] = item
                stamps[copy] = record.stamp
            }
        }
    }
}
