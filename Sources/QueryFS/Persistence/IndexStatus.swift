/// What a mount says about its index (`queryfs status`, `.queryfs/status`).
public struct IndexStatus: Sendable {
    /// The index file, nil when the mount keeps none.
    public var path: String?
    /// Why there is none, or what became of the one there was.
    public var note: String
    /// Items the start took from the index, and items it read.
    public var itemsFromIndex = 0
    public var itemsRead = 0
    /// Views the start placed as the index stored them, not sorted anew.
    public var viewsFromIndex = 0
    /// The index matched BACKING once the mount started (a trusted start: once
    /// the background reconciliation was applied).
    public var reconciled = false
    /// How long the reconciliation took, and how many items it found changed
    /// (new, edited or gone) since the index was written.
    public var reconciliationSeconds: Double?
    public var changedWhileUnmounted: Int?

    public init(path: String?, note: String) {
        self.path = path
        self.note = note
    }
}
