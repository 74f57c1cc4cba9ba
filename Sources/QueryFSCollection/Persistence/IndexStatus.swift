import QueryFSEngine
/// What a mount says about its index (`queryfs status`, `.queryfs/status`).
package struct IndexStatus: Sendable {
    /// The index file, nil when the mount keeps none.
    package var path: String?
    /// Why there is none, or what became of the one there was.
    package var note: String
    /// Items the start took from the index, and items it read.
    package var itemsFromIndex = 0
    package var itemsRead = 0
    /// Views the start placed as the index stored them, not sorted anew.
    package var viewsFromIndex = 0
    /// The index matched BACKING once the mount started (a trusted start: once
    /// the background reconciliation was applied).
    package var reconciled = false
    /// How long the reconciliation took, and how many items it found changed
    /// (new, edited or gone) since the index was written.
    package var reconciliationSeconds: Double?
    package var changedWhileUnmounted: Int?

    package init(path: String?, note: String) {
        self.path = path
        self.note = note
    }
}
