import Synchronization
import QueryFSEngine
import QueryFSCollection

/// The edits `rm` of an entry made in a tag folder, kept a few seconds: a
/// program that replaces a file (`cp -P`, GIO's copy, Nautilus's "Replace")
/// copying an entry into a tag folder where the item already shows finds the
/// name taken (a stale rank still names the entry), unlinks it and links it
/// again. Leaving `tag/rock` takes `rock` and every tag under it
/// (`rock/metal`); joining gives back `rock` alone: the nested tags were lost
/// (found from outside). The link that follows such an `rm` takes the `rm`
/// back instead — byte for byte, as `queryfs undo` does — so a replace of
/// an entry by itself changes nothing.
final class RecentRemovals: Sendable {
    private struct Removal {
        let folder: UInt64
        let item: ItemName
        let entry: EditJournal.Entry
        let time: Double
    }

    /// A replacing program links right after it unlinks (nil: kept until
    /// taken, for the trash: a restore comes whenever the user asks).
    private let window: Double?
    private let kept: Int
    private let removals = Mutex<[Removal]>([])

    init(window: Double? = 5.0, kept: Int = 16) {
        self.window = window
        self.kept = kept
    }

    func note(_ entry: EditJournal.Entry, item: ItemName, in folder: UInt64) {
        removals.withLock { removals in
            removals.removeAll { $0.folder == folder && $0.item == item }
            if removals.count >= kept { removals.removeFirst() }
            removals.append(Removal(folder: folder, item: item, entry: entry, time: Timestamp.now.timeInterval))
        }
    }

    /// The journal entry of the item's removal from `folder` in the last
    /// few seconds, taken (a second link finds none).
    func take(item: ItemName, in folder: UInt64) -> EditJournal.Entry? {
        let now = Timestamp.now.timeInterval
        return removals.withLock { removals in
            if let window { removals.removeAll { now - $0.time > window } }
            guard let index = removals.lastIndex(where: { $0.folder == folder && $0.item == item }) else { return nil }
            return removals.remove(at: index).entry
        }
    }
}
