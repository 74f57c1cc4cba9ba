import Synchronization
import QueryFSEngine

/// The names programs gave entries they renamed, which the entries do not
/// carry: `mv "0001 Old.hpwebsite" "Plain name"` sets the title, and the
/// entry is then `0001 Plain name.hpwebsite`. A file manager looks up the
/// name it gave right after the rename; found by no entry name and by no
/// stale reading of one (`ViewListing.search`: a title alone is no entry's
/// name), it made Nautilus say "The item could not be renamed" after it was
/// (a whole name selected and typed over, extension and all). The last few
/// are kept, each leading to its item in the folder where it was given.
final class RetitledNames: Sendable {
    private struct Given {
        let folder: UInt64
        let name: [UInt8]
        let item: ItemName
    }

    /// A file manager looks its name up at once; a few cover renames in a row.
    private static let kept = 16
    private let given = Mutex<[Given]>([])

    /// The latest name given an item in a folder replaces the one before:
    /// renamed twice, `Alpha.md` then `Gamma.md`, the item answered to both,
    /// and `rm Alpha.md` said ENOENT (found from outside).
    func note(_ name: [UInt8], for item: ItemName, in folder: UInt64) {
        given.withLock { given in
            given.removeAll { $0.folder == folder && ($0.name == name || $0.item == item) }
            if given.count >= Self.kept { given.removeFirst() }
            given.append(Given(folder: folder, name: name, item: item))
        }
    }

    /// The item a program named `name` in `folder`, if it did lately.
    func item(named name: UnsafeBufferPointer<UInt8>, in folder: UInt64) -> ItemName? {
        given.withLock { given in given.last { $0.folder == folder && $0.name.elementsEqual(name) }?.item }
    }
}
