import QueryFSEngine
/// The index file's decoder, for fuzzing and tests: any bytes a disk may
/// hold are either read as an index or refused, never a trap.
package enum IndexFileProbe {
    /// Decodes `bytes`; what decodes is written again and must read back the same.
    /// Returns the number of items, nil when refused.
    @discardableResult
    package static func check(_ bytes: [UInt8]) -> Int? {
        guard let contents = try? bytes.withUnsafeBufferPointer({ buffer throws(IndexDecodingError) in
            try IndexFile.decode(buffer, checkingSums: false)
        }) else { return nil }
        let again = IndexFile.snapshot(contents.items.map { IndexedItem(item: $0.item, stamp: $0.stamp) }, identity: contents.identity, viewOrders: contents.viewOrders)
        let reread = try? again.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in try IndexFile.decode(buffer) }
        precondition(reread?.items.count == contents.items.count && reread?.viewOrders == contents.viewOrders,
                     "an index that decodes must encode and decode the same")
        // A view read alone through the offsets holds what the whole read puts at its positions.
        let orders = contents.viewOrders
        let keys = orders.fixed.keys.map(StoredViewOrders.Key.fixed) + (orders.tags ?? [:]).keys.map(StoredViewOrders.Key.tag)
        for key in keys {
            let alone = try? bytes.withUnsafeBufferPointer { buffer throws(IndexDecodingError) in
                try IndexFile.decodeView(key, in: buffer, checkingSums: false).1
            }
            let expected = orders.positions(of: key)!.map { contents.items[Int($0)].name }
            precondition(alone?.map(\.name) == expected, "a view read alone must hold the items the whole read places in it")
        }
        return contents.items.count
    }

    /// A small index of `items` (seeds for the fuzzer, tests).
    package static func sample(_ items: [Item], journal: [Item] = [], removing: [ItemName] = []) -> [UInt8] {
        sample(items, journal: journal, removing: removing, viewOrders: StoredViewOrders())
    }

    /// The same, with the views' orders the snapshot stores.
    static func sample(_ items: [Item], journal: [Item] = [], removing: [ItemName] = [], viewOrders: StoredViewOrders) -> [UInt8] {
        var sources = FieldSources()
        sources.extraKeyPaths = ["n"]
        let identity = IndexFile.Identity(backingPath: "/fuzz", device: 1, inode: 2, sources: sources, payloadLimit: 16 << 20,
                                          version: IndexFile.Identity.currentVersion)
        return IndexFile.snapshot(items.map { IndexedItem(item: $0, stamp: 7) }, identity: identity, viewOrders: viewOrders)
            + IndexFile.journal(journal.map { .upsert(IndexedItem(item: $0, stamp: 9)) } + removing.map { .remove($0) })
    }
}
