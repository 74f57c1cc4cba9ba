#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import QueryFSEngine

/// Changes items' fields by editing what holds them: a bundle's payload
/// (and, for tags, its `user.xdg.tags` attribute), a plain file's
/// `user.xdg.tags`. Every edit is made under the item's exclusive lock
/// (SPEC §5), written atomically (a new file beside, renamed over), in the
/// payload's own format with every key it does not touch kept — XML and
/// JSON as text, so only the lines of the changed values differ — and
/// journaled so that it can be undone. The mount's view operations, the
/// `queryfs tag/archive/unarchive/set/undo` commands and Swift programs all
/// edit through this.
///
///     let editor = ItemEditor(backing: try BackingDirectory(path: "/home/me/ReadingList"))
///     try editor.apply([.addTag("swift"), .setArchived(true)], to: ItemName("X.hpwebsite"))
package struct ItemEditor: Sendable {
    package let backing: BackingDirectory
    /// Which payload keys hold which field (the configuration's `[fields]`).
    package var sources: FieldSources
    /// Longest wait for the item's lock (nil: as long as it takes); then EBUSY.
    package var lockTimeout: Double?
    /// Where edits are journaled (nil: not at all).
    package var journal: EditJournal?

    package init(backing: BackingDirectory, sources: FieldSources = FieldSources(), lockTimeout: Double? = 5, journals: Bool = true) {
        self.backing = backing
        self.sources = sources
        self.lockTimeout = lockTimeout
        journal = journals ? EditJournal(backing: backing) : nil
    }

    /// Applies `edits` to `item` as one coordinated write; returns what the
    /// journal recorded (nil when nothing needed to change). `action`
    /// (`EditJournal.newAction()`): shared by the edits one action makes of
    /// several items, which `undo` then takes back together.
    @discardableResult
    package func apply(_ edits: [FieldEdit], to item: ItemName, action: String? = nil) throws(EditError) -> EditJournal.Entry? {
        // A file saved by another program between the read and the write
        // (an editor does not take the item's lock) fails the write before
        // anything of it is written (EAGAIN): read again and edit that.
        var attempt = 0
        while true {
            do {
                return try withLockedItem(item) { (state, place) throws(EditError) -> EditJournal.Entry? in
                    var changed = state
                    for edit in edits { try changed.apply(edit, sources: sources, item: item) }
                    return try commit(changed, from: state, item: item, at: place, undoes: nil, action: action)
                }
            } catch let error where error.errno == EAGAIN && attempt < Self.attemptsWhileSaved {
                attempt += 1
            }
        }
    }

    /// How often an edit is read again when its file keeps being saved under it.
    static let attemptsWhileSaved = 8

    /// The item's fields as the scan reads them (what an edit starts from).
    package func fields(of item: ItemName) throws(EditError) -> Item {
        try withLockedItem(item, mode: .shared) { state, _ in state.item(named: item, sources: sources) }
    }

    /// Why `apply(edits, to: item)` would be refused now (the item cannot
    /// hold an edit: tags that are a map, a note's list this edit cannot
    /// change), nil when it would not: asked of every item of a command
    /// before any is edited (found from outside: the others were edited).
    package func refusal(of edits: [FieldEdit], to item: ItemName) -> EditError? {
        do {
            try withLockedItem(item, mode: .shared) { (state, _) throws(EditError) in
                var changed = state
                for edit in edits { try changed.apply(edit, sources: sources, item: item) }
            }
            return nil
        } catch {
            return error
        }
    }

    /// Why `undo(entry)` would be refused now (a field it changed has
    /// changed since; the item cannot be read), nil when it would not:
    /// asked of every edit of an action before any is taken back, so that
    /// an action is never left half undone (found from outside).
    package func undoRefusal(_ entry: EditJournal.Entry) -> EditError? {
        do {
            try withLockedItem(entry.item, mode: .shared) { (state, _) throws(EditError) in
                if !entry.files.isEmpty, entry.files.allSatisfy({ EditJournal.hash(state.contents(of: $0.name)) == EditJournal.hash($0.before) }) { return }
                if entry.files.allSatisfy({ EditJournal.hash(state.contents(of: $0.name)) == $0.afterHash }) { return }
                let now = state.item(named: entry.item, sources: sources)
                for change in entry.changes where Self.value(of: change.field, in: now, state: state) != change.new {
                    throw EditError(EBUSY, "\(entry.item): \(change.field) changed since this edit; not undone")
                }
            }
            return nil
        } catch {
            return error
        }
    }

    /// Takes back a journal entry: byte for byte when the files are still
    /// what it wrote, field by field otherwise; refused (EBUSY) when a field
    /// it changed has changed since. The undo is journaled too.
    @discardableResult
    package func undo(_ entry: EditJournal.Entry) throws(EditError) -> EditJournal.Entry? {
        try withLockedItem(entry.item) { (state, place) throws(EditError) -> EditJournal.Entry? in
            var restored = state
            // Already as before: an edit whose record was written but whose
            // files never were (a crash, a failed write taken back), or one
            // undone by hand or by an undo whose record was lost. Nothing to do
            // but say so in the journal: unmarked, it stayed the last edit, and
            // every later `undo` picked it again and never reached the ones before.
            if !entry.files.isEmpty, entry.files.allSatisfy({ EditJournal.hash(state.contents(of: $0.name)) == EditJournal.hash($0.before) }) {
                try journalNoChange(undoing: entry)
                return nil
            }
            if entry.files.allSatisfy({ EditJournal.hash(state.contents(of: $0.name)) == $0.afterHash }) {
                for file in entry.files { restored.setContents(of: file.name, to: file.before) }
            } else {
                let now = state.item(named: entry.item, sources: sources)
                for change in entry.changes where Self.value(of: change.field, in: now, state: state) != change.new {
                    throw EditError(EBUSY, "\(entry.item): \(change.field) changed since this edit; not undone")
                }
                for change in entry.changes {
                    for edit in Self.edits(restoring: change, from: now) { try restored.apply(edit, sources: sources, item: entry.item) }
                }
                // A block the edit made, taken back field by field, left `tags: []`
                // in a note that had no front matter (found from outside): it goes whole.
                if let made = entry.files.first(where: { $0.name == EditJournal.itemFile })?.before, !FrontMatterEditor.startsWithBlock(made),
                   let note = restored.noteFile, let without = FrontMatterEditor.removingEmptyTagsBlock(note) {
                    restored.setNote(without)
                }
            }
            return try commit(restored, from: state, item: entry.item, at: place, undoes: entry.id)
        }
    }

    /// Records that `entry` is undone though nothing had to change (its files were as before it already).
    private func journalNoChange(undoing entry: EditJournal.Entry) throws(EditError) {
        let appender: EditJournal.Appender?
        do {
            appender = try journal?.open(timeout: lockTimeout)
        } catch {
            throw EditError(error.errno, "\(entry.item): the journal \(EditJournal.fileName) cannot be written (\(error.message))")
        }
        guard let appender else { return }
        defer { appender.close() }
        do {
            try appender.append(EditJournal.Entry(id: EditJournal.newID(), time: Timestamp.now.timeInterval, item: entry.item,
                                                  changes: [], files: [], undoes: entry.id))
        } catch {
            throw EditError(error.errno, "\(entry.item): the undo could not be journaled (\(error.message))")
        }
    }

    // MARK: Locking and writing

    /// Where an item lies: the folder it is in (BACKING, or for a nested
    /// item its folder opened beneath BACKING through no link) and its name there.
    struct ItemPlace {
        let folderFD: Int32
        let name: ItemName
    }

    private func withLockedItem<R>(_ item: ItemName, mode: ItemLock.Mode = .exclusive,
                                   _ body: (ItemState, ItemPlace) throws(EditError) -> R) throws(EditError) -> R {
        guard item.isItemPath else { throw EditError(EINVAL, "'\(item)' is not an item name") }
        var place = ItemPlace(folderFD: backing.fd, name: item)
        if let slash = item.bytes.lastIndex(of: UInt8(ascii: "/")) {
            let folderFD = Array(item.bytes[..<slash]).withCString { qfs_open_beneath(backing.fd, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            guard folderFD >= 0 else {
                if errno == ENOENT || errno == ENOTDIR { throw EditError(ENOENT, "no item '\(item)' in \(backing.path)") }
                throw EditError(errno, "\(item): its folder: \(String(cString: strerror(errno)))")
            }
            place = ItemPlace(folderFD: folderFD, name: ItemName(Array(item.bytes[(slash + 1)...])))
        }
        defer { if place.folderFD != backing.fd { close(place.folderFD) } }
        let lock: ItemLock
        do {
            lock = try ItemLock(item: place.name, in: place.folderFD)
        } catch {
            if error.errno == ENOENT { throw EditError(ENOENT, "no item '\(item)' in \(backing.path)") }
            if error.errno == ENOTSUP { throw EditError(EPERM, "\(item): \(ItemLock.notLockable); it has no fields to edit") }
            throw EditError(error.errno, "\(item): \(error.message)")
        }
        do {
            try lock.lock(mode, timeout: lockTimeout)
        } catch let timeout as ItemLock.Timeout {
            throw EditError(EBUSY, "\(timeout)", lockTimeout: timeout)
        } catch let error as SystemError {
            throw EditError(error.errno, "\(error)")
        } catch {
            throw EditError(EIO, "\(error)")
        }
        defer { lock.unlock() }
        let state = try ItemState.read(place.name, in: place.folderFD, payloadNames: sources.payloadNames, sidecars: sources.sidecars)
        // In a recursive collection a folder without a payload is a folder
        // of items, not an item (`BackingDirectory.listing`): an item
        // replaced by such a folder since the view listed it is gone, and a
        // payload made in it would turn its notes into one bundle (found
        // from outside, racing an edit with a swap).
        // (Unless it is too deep to walk: then it is one item, as the scan reads it.)
        if sources.recursive, state.isBundle, state.payloadFile == nil, !Scanner.isTooDeep(item) {
            throw EditError(ENOENT, "\(item) is a folder of items now, not an item")
        }
        return try body(state, place)
    }

    /// Writes what changed and journals it; nil if nothing did.
    ///
    /// An edit happens and is journaled, or does not happen and the caller
    /// is told why, whatever fails and wherever the machine stops:
    /// - The journal is opened and locked first: an unusable one refuses
    ///   the edit before anything changes.
    /// - An edit's record is written and flushed *before* its files (write
    ///   ahead). A record that cannot be written is cut off again and the
    ///   edit refused. Files that cannot be written are taken back and the
    ///   record cut. A crash between the two leaves a record whose files are
    ///   still as before, which `undo` knows for nothing to do.
    /// - An undo's record comes *after* its files: a record saying an entry
    ///   was undone must never stand for files that were not put back (the
    ///   entry could then never be undone). An undo whose record fails stays
    ///   made, and says so; undoing the entry again finds nothing to do.
    private func commit(_ changed: ItemState, from original: ItemState, item: ItemName, at place: ItemPlace, undoes: String?,
                        action: String? = nil) throws(EditError)
        -> EditJournal.Entry?
    {
        let files = original.differences(to: changed)
        guard !files.isEmpty else { return nil }
        let appender: EditJournal.Appender?
        do {
            appender = try journal?.open(timeout: lockTimeout)
        } catch {
            throw EditError(error.errno, "\(item) not changed: the journal \(EditJournal.fileName) cannot be written (\(error.message))")
        }
        defer { appender?.close() }
        let entry = journalEntry(changed, from: original, files: files, item: item, undoes: undoes, action: action)
        var written: [String] = []
        guard let appender else {
            try changed.write(files, item: place.name, in: place.folderFD, checkingStampsOf: original, written: &written)
            return entry
        }
        if undoes != nil {
            try changed.write(files, item: place.name, in: place.folderFD, checkingStampsOf: original, written: &written)
            do {
                try appender.append(entry)
            } catch {
                throw EditError(error.errno, "\(item) was put back, but the undo could not be journaled (\(error.message))")
            }
            return entry
        }
        do {
            try appender.append(entry)
        } catch {
            throw EditError(error.errno, "\(item) not changed: its journal record could not be written (\(error.message))")
        }
        do {
            try changed.write(files, item: place.name, in: place.folderFD, checkingStampsOf: original, written: &written)
        } catch let failure {
            do {
                // Only what was written goes back: a file the edit never
                // reached (its write failed before the rename: a full disk,
                // a name too long, an editor's save in between) is left as
                // it is, and the record cut (found from outside: the edit
                // was reported as "may have been made" and stayed journaled).
                var putBack: [String] = []
                try original.write(written, item: place.name, in: place.folderFD, written: &putBack)
            } catch {
                throw EditError(failure.errno, "the edit of \(item) may have been made (\(failure.message)), and could not be taken "
                    + "back (\(error.message)); it is journaled: queryfs undo takes it back")
            }
            // Taken back: the record would speak of an edit that never was.
            appender.cutLastRecord()
            throw EditError(failure.errno, "\(item) not changed: \(failure.message)")
        }
        return entry
    }

    private func journalEntry(_ changed: ItemState, from original: ItemState, files: [String], item: ItemName, undoes: String?,
                              action: String?) -> EditJournal.Entry
    {
        let before = original.item(named: item, sources: sources), after = changed.item(named: item, sources: sources)
        var changes = Self.fields(original, changed, sources: sources).compactMap { field -> EditJournal.Change? in
            let old = Self.value(of: field, in: before, state: original), new = Self.value(of: field, in: after, state: changed)
            return old == new ? nil : EditJournal.Change(field: field, old: old, new: new)
        }
        // A key that feeds a field, changed with the field left as it was
        // (`set X payload.tags=foo`: a list became a string the tags are
        // not read from), is journaled as the key: it was "no change".
        if changes.isEmpty, case .dictionary(let old)? = original.keyedValues, case .dictionary(let new)? = changed.keyedValues {
            changes = Set(old.keys).union(new.keys).sorted().compactMap { key in
                old[key] == new[key] ? nil : EditJournal.Change(field: "payload." + key, old: old[key], new: new[key])
            }
        }
        return EditJournal.Entry(
            id: EditJournal.newID(), time: Timestamp.now.timeInterval, item: item, changes: changes,
            files: files.map { EditJournal.FileState(name: $0, before: original.contents(of: $0), afterHash: EditJournal.hash(changed.contents(of: $0))) },
            undoes: undoes, action: action)
    }

    // MARK: Fields

    /// The fields an edit between two states may have changed: the item's
    /// own, then any other top-level payload key (those that feed the
    /// title, archived flag or tags are journaled as that field; the URL's
    /// are journaled as keys — found from outside: `set
    /// payload.webLocation.relative=…` was journaled with no change at all,
    /// and its undo did nothing once the payload had changed otherwise).
    private static func fields(_ original: ItemState, _ changed: ItemState, sources: FieldSources) -> [String] {
        var keys = Set<String>()
        if case .dictionary(let old)? = original.keyedValues { keys.formUnion(old.keys) }
        if case .dictionary(let new)? = changed.keyedValues { keys.formUnion(new.keys) }
        let fieldKeys = Set((sources.title + sources.archived + sources.tags).compactMap { $0.split(separator: ".").first.map(String.init) })
        return ["title", "archived", "tags"] + keys.subtracting(fieldKeys).sorted().map { "payload." + $0 }
    }

    /// A field's value as the journal keeps it.
    static func value(of field: String, in item: Item, state: ItemState) -> PayloadValue? {
        switch field {
        // A plain file's title is its name (no field); a note's is its front matter's.
        case "title": return state.payload == nil && state.noteFile == nil && item.kind == .file ? nil : .string(item.title)
        case "archived": return .bool(item.archived)
        case "tags": return .array(item.tags.map(PayloadValue.string))
        default:
            guard field.hasPrefix("payload.") else { return nil }
            return state.keyedValues?.value(at: String(field.dropFirst("payload.".count)).split(separator: ".").map(String.init))
        }
    }

    /// The edits that bring one field back to its old value.
    private static func edits(restoring change: EditJournal.Change, from now: Item) -> [FieldEdit] {
        switch change.field {
        case "tags":
            guard case .array(let old)? = change.old else { return [] }
            let oldTags = old.compactMap { if case .string(let tag) = $0 { tag } else { nil } }
            return now.tags.filter { !oldTags.contains($0) }.map(FieldEdit.removeTag) + oldTags.filter { !now.tags.contains($0) }.map(FieldEdit.addTag)
        case "archived":
            guard case .bool(let flag)? = change.old else { return [] }
            return [.setArchived(flag)]
        case "title":
            guard case .string(let title)? = change.old else { return [] }
            return [.setTitle(title)]
        default:
            let path = String(change.field.dropFirst("payload.".count))
            return [change.old.map { .setPayload(path, $0) } ?? .removePayload(path)]
        }
    }
}

/// What an item's fields are kept in, read under its lock: a bundle's
/// payload and tags attribute, or a plain file's tags attribute — each as
/// the bytes of its "file" (what would be written) and, for the payload,
/// the document edits go through.
struct ItemState {
    var isBundle: Bool
    var payloadName = FieldSources.defaultPayloadNames[0]
    /// The payload document (nil: the bundle has none).
    var payload: (any PayloadDocument)?
    /// The payload file's bytes in this state (nil: no file).
    var payloadFile: [UInt8]?
    /// The `user.xdg.tags` attribute's bytes in this state (nil: none).
    var attribute: [UInt8]?
    /// A note's front matter (a plain file `FrontMatter.isNote`), as read
    /// from `noteFile`: its fields count for what the item is, and edits of
    /// tags, title and archived are written into it (`FrontMatterEditor`).
    var note: FrontMatter.Parsed?

    /// What `payload.KEY` names: the payload's values, or a note's front
    /// matter (found from outside: `set NOTE payload.status=draft` was
    /// journaled as no change, the front matter being no payload).
    var keyedValues: PayloadValue? {
        if let payload { return payload.value }
        guard let note, !note.payload.isEmpty else { return nil }
        return .dictionary(note.payload)
    }
    /// The note's bytes in this state (nil: not a note).
    var noteFile: [UInt8]?
    /// Largest note an edit rewrites (its front matter is in the first 64 KiB; the rest is kept as it is).
    static let noteLimit = 16 << 20
    /// The note's and the payload file's identity when read: each is
    /// replaced only if still that file (`AtomicFile.replace(unchangedSince:)`).
    var noteStamp: FileIdentity?
    var payloadStamp: FileIdentity?

    var attributeTags: [String] { attribute.map(ExtendedAttributeTags.parse) ?? [] }

    static func read(_ item: ItemName, in rootFD: Int32, payloadNames: [String], sidecars: Sidecars = Sidecars()) throws(EditError) -> ItemState {
        var status = stat()
        guard item.withCString({ fstatat(rootFD, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            throw EditError(errno, "\(item): \(String(cString: strerror(errno)))")
        }
        // Locked, the item was a folder or a regular file (nothing else can
        // be locked): anything else now was put in its place meanwhile, and
        // its tags would have gone to the attribute of what came back (found
        // from outside: a note swapped with a link during `tag`).
        guard [S_IFDIR, S_IFREG].contains(status.st_mode & S_IFMT) else {
            throw EditError(EAGAIN, "\(item) was replaced while it was being edited; nothing was written")
        }
        var state = ItemState(isBundle: status.st_mode & S_IFMT == S_IFDIR)
        state.attribute = item.withCString { name in Self.attribute(of: rootFD, name) }
        guard state.isBundle else {
            if status.st_mode & S_IFMT == S_IFREG, FrontMatter.isNote(item) {
                let whole = item.withCString { name in
                    Result { () throws(SystemError) in
                        try DirectoryReader.readFile(name, in: rootFD, expectedSize: Int(clamping: status.st_size), limit: noteLimit)
                    }
                }
                switch whole {
                case .success(let bytes):
                    state.noteName = item
                    state.noteStamp = FileIdentity(status)
                    state.setNote(bytes)
                case .failure(let error): throw EditError(error.errno, "\(item): \(error.message)")
                }
            } else if status.st_mode & S_IFMT == S_IFREG, sidecars.kinds.contains(.xmp), !sidecars.isSidecarShaped(item.bytes) {
                // (A sidecar left alone is an item of its own: its tags go to its attribute, not to a sidecar of a sidecar.)
                // Its XMP sidecar, or the one an edit would make (darktable's name for it).
                let xmp = Sidecars([.xmp])
                state.sidecarName = xmp.candidates(for: item.bytes).first?.1 ?? item.bytes + Array(".xmp".utf8)
                if let found = SidecarRead.find(for: item.bytes, in: rootFD, sidecars: xmp) {
                    switch found.contents {
                    case .success(let (bytes, _)):
                        state.sidecarName = found.name
                        state.sidecarFile = bytes
                    case .failure(let error):
                        throw EditError(error.errno, "\(String(decoding: found.name, as: UTF8.self)): \(error.message)")
                    }
                }
            } else if status.st_mode & S_IFMT == S_IFREG, sidecars.kinds.contains(.json), !sidecars.isSidecarShaped(item.bytes),
                      let found = SidecarRead.find(for: item.bytes, in: rootFD, sidecars: Sidecars([.json])),
                      case .success(let (bytes, _)) = found.contents, let value = try? SidecarKind.json.read(bytes) {
                // Its JSON sidecar (yt-dlp's `X.info.json`): read for what the item is, never written.
                state.jsonSidecar = (found.name, value)
            }
            return state
        }
        let fd = item.withCString { DirectoryReader.openDirectory($0, in: rootFD) }
        guard fd >= 0 else { throw EditError(errno, "\(item): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        for fileName in payloadNames {
            var payloadStatus = stat()
            let stated = fileName.withCString { fstatat(fd, $0, &payloadStatus, AT_SYMLINK_NOFOLLOW) } == 0
            let result = fileName.withCString { name in
                Result { () throws(SystemError) in try DirectoryReader.readFile(name, in: fd, expectedSize: 4096, limit: 16 << 20) }
            }
            switch result {
            case .success(let bytes):
                state.payloadName = fileName
                state.payloadStamp = stated ? FileIdentity(payloadStatus) : nil
                state.payloadFile = bytes
                state.payload = try PayloadDocuments.open(bytes, fileName: fileName)
                return state
            case .failure(let error) where error.errno == ENOENT: continue
            case .failure(let error): throw EditError(error.errno, "\(item)/\(fileName): \(error.message)")
            }
        }
        return state
    }

    private static func attribute(of rootFD: Int32, _ name: UnsafePointer<CChar>) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: ExtendedAttributeTags.maximumSize)
        let length = buffer.withUnsafeMutableBytes { qfs_getxattrat(rootFD, name, ExtendedAttributeTags.attributeName, $0.baseAddress, UInt($0.count)) }
        return length >= 0 ? Array(buffer[..<length]) : nil
    }

    /// The item's fields, as the scan would read them from this state.
    func item(named name: ItemName, sources: FieldSources) -> Item {
        guard isBundle else {
            var fields = noteFields(sources)
            if let sidecarFile, let payload = try? XMPSidecar.read(sidecarFile) { fields = PayloadFields(payload: payload, paths: sources.splitPaths) }
            if let (_, value) = jsonSidecar { fields = PayloadFields(payload: value, paths: sources.splitPaths) }
            return Item(name: name, kind: .file, title: fields.title, archived: fields.archived,
                        tags: ExtendedAttributeTags.merge(payload: fields.tags, attribute: attributeTags), url: fields.url)
        }
        let fields = payload.map { PayloadFields(payload: $0.value, paths: sources.splitPaths) } ?? PayloadFields()
        return Item(name: name, kind: .bundle, title: fields.title, archived: fields.archived,
                    tags: ExtendedAttributeTags.merge(payload: fields.tags, attribute: attributeTags), url: fields.url)
    }

    // MARK: Edits

    mutating func apply(_ edit: FieldEdit, sources: FieldSources, item: ItemName) throws(EditError) {
        switch edit {
        case .addTag(let tag):
            // Shown nowhere, so never written: the command line refused it, and now every caller does (the library wrote `../x`).
            guard EntryNaming.tagFolderName(tag) != nil else {
                throw EditError(EINVAL, "tag '\(tag)' would have no folder under tag/ (empty, or a part that is . or ..): not added")
            }
            guard !self.item(named: item, sources: sources).tags.contains(tag) else { return }
            if isBundle {
                let path = try keyPath(sources.tags, fitting: { if case .array = $0 { true } else { false } })
                let current = payload?.value.value(at: path)
                let keptAsText: Bool
                switch current {
                case .string?, .null?, nil: keptAsText = sources.tagsMayBeText
                default: keptAsText = false
                }
                if keptAsText { try Self.checkFitsTagString(tag) }
                if case .string(let text)? = current, sources.tagsMayBeText {
                    // Tags kept as one string stay one string (ArchiveBox's `"a,b"`), with its separator.
                    let joined = text.trimming(" ").isEmpty ? tag : text + (text.contains(", ") ? ", " : ",") + tag
                    try editDocument { (document) throws(EditError) in try document.set(path, to: .string(joined)) }
                } else if case .string? = current {
                    // A format that reads tags only as a list ignores this string: one more word in it would show nowhere.
                    throw EditError(EROFS, "the payload's \(path.joined(separator: ".")) is one string, which this format does not read as tags: make it a list first")
                } else if current == .null || (current == nil && sources.tagsMayBeText) {
                    // No tags yet, said as null or not at all (ArchiveBox's untagged snapshots): the tag
                    // starts the format's kind of list (found from outside: a missing key became a JSON array).
                    let first: PayloadValue = sources.tagsMayBeText ? .string(tag) : .array([.string(tag)])
                    try editDocument { (document) throws(EditError) in try document.set(path, to: first) }
                } else {
                    try editDocument { (document) throws(EditError) in try document.append(.string(tag), toArrayAt: path) }
                }
            } else if let sidecar = sidecarName {
                // A photo's tag goes into its XMP sidecar (made if it has none), or nowhere:
                // in the attribute, darktable and digiKam would never see it.
                do throws(FrontMatterError) {
                    let old = try sidecarFile.map { (bytes) throws(FrontMatterError) in try XMPSidecarEditor.tags(bytes) } ?? []
                    sidecarFile = try XMPSidecarEditor.settingTags(old + [tag], in: sidecarFile)
                } catch {
                    throw EditError(EROFS, "tag '\(tag)' cannot be written into the sidecar \(String(decoding: sidecar, as: UTF8.self)) (\(error.message))")
                }
            } else if let bytes = noteFile, FrontMatterEditor.canHoldFrontMatter(bytes, name: noteName) {
                // A note's tag goes into its front matter (a block made for a Markdown note without one), or
                // nowhere: in the attribute, the note's own editor would never see it.
                do throws(FrontMatterError) {
                    let name = noteName
                    _ = try editNote { (note) throws(FrontMatterError) in
                        try FrontMatterEditor.settingTags(FrontMatterEditor.tags(FrontMatter.parse(Array(note.prefix(FrontMatter.Limits.headBytes)))) + [tag],
                                                          in: note, name: name)
                    }
                } catch {
                    throw EditError(EROFS, "tag '\(tag)' cannot be written into the note's front matter (\(error.message))")
                }
            } else {
                // A plain file, or a text note without front matter: its attribute.
                try setAttribute(attributeTags + [tag])
            }
        case .removeTag(let tag):
            // `a//b` and `a/b` are one tag (one folder): either name removes it
            // (found from outside: `--remove lead` left a tag written `/lead`).
            let removed = EntryNaming.canonicalTag(tag)
            try changeTags(sources) { EntryNaming.canonicalTag($0) == removed ? .some(nil) : nil }
        case .removeTagFolder(let folder): try changeTags(sources) { EntryNaming.tagFolderNames($0).contains(folder) ? .some(nil) : nil }
        case .renameTagFolder(let folder, let newFolder):
            // Each tag is decided once, however often `changeTags` asks (it
            // checks, then writes): the first tag that becomes a name takes
            // it, a later one becoming the same name (or one the item has)
            // goes. Deciding anew at each ask dropped a note's tag and never
            // wrote the new one (found from outside).
            var taken = Set(self.item(named: item, sources: sources).tags)
            var decisions: [String: String?] = [:]
            try changeTags(sources) { tag in
                guard let renamed = FieldEdit.renamedTag(tag, folder: folder, to: newFolder), tag != renamed else { return nil }
                if let decision = decisions[tag] { return .some(decision) }
                let decision: String? = taken.insert(renamed).inserted ? renamed : nil
                decisions[tag] = decision
                return .some(decision)
            }
        case .setArchived(let flag):
            if try setNoteValue("archived", .bool(flag), item: item) { return }
            try requireBundle(item, "archived")
            let path = try keyPath(sources.archived, fitting: { if case .bool = $0 { true } else { false } })
            try editDocument { (document) throws(EditError) in try document.set(path, to: .bool(flag)) }
        case .setTitle(let title):
            if try setNoteValue("title", .string(title), item: item) { return }
            try requireBundle(item, "a title")
            let path = try keyPath(sources.title, fitting: { if case .string = $0 { true } else { false } })
            try editDocument { (document) throws(EditError) in try document.set(path, to: .string(title)) }
        case .setPayload(let path, let value):
            let keys = try Self.payloadPath(path)
            // A note's `payload.KEY` is a key of its front matter (found from
            // outside: refused as if the note were a plain file).
            if !isBundle, keys.count == 1, try setNoteValue(keys[0], value, item: item) { return }
            try requireBundle(item, "payload.\(path)")
            try editDocument { (document) throws(EditError) in try document.set(keys, to: value) }
        case .removePayload(let path):
            if !isBundle, noteFile != nil {
                throw EditError(EPERM, "\(item): queryfs sets a note's front-matter keys but does not remove them (payload.\(path)): edit the note")
            }
            try requireBundle(item, "payload.\(path)")
            guard payload != nil else { return }
            let keys = try Self.payloadPath(path)
            try editDocument { (document) throws(EditError) in try document.remove(keys) }
        }
    }

    private static func split(_ path: String) -> [String] {
        path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// A `payload.KEY.PATH` of an edit: no empty key in it.
    private static func payloadPath(_ path: String) throws(EditError) -> [String] {
        let keys = split(path)
        guard !keys.contains("") else { throw EditError(EINVAL, "payload.\(path) is not a key path") }
        return keys
    }

    private func requireBundle(_ item: ItemName, _ what: String) throws(EditError) {
        guard !isBundle else { return }
        // Said as what the item is (found from outside: a note and a photo were each "a plain file").
        if let bytes = noteFile {
            // A text note without front matter gets none made: its tags go to its attribute, and
            // nothing else can change (found from outside: the message listed title and archived).
            guard FrontMatterEditor.canHoldFrontMatter(bytes, name: noteName) else {
                throw EditError(EPERM, "\(item) is a text note without front matter: only its tags can change (in its user.xdg.tags attribute), not \(what)")
            }
            throw EditError(EPERM, "\(item) is a note: its front matter takes top-level keys only (title, archived, tags, payload.KEY), not \(what)")
        }
        if sidecarName != nil {
            throw EditError(EPERM, "\(item) is a file with an XMP sidecar: queryfs writes only its tags there, not \(what)")
        }
        throw EditError(EPERM, "\(item) is a plain file: it has no payload to hold \(what) (only its tags can change)")
    }

    /// Edits the payload (a new `payload.plist` if the bundle has none);
    /// the file's bytes follow the document.
    private mutating func editDocument(_ body: (inout any PayloadDocument) throws(EditError) -> Void) throws(EditError) {
        var document: any PayloadDocument
        if let payload { document = payload } else { document = try TextPayloadDocument(PayloadDocuments.emptyXMLPlist, format: .xml) }
        let before = payload?.value
        try body(&document)
        payload = document
        // Unchanged values keep the file as it is (a binary plist would be written anew).
        if document.value != before { payloadFile = document.bytes }
    }

    /// The attribute holds its tags joined by commas: a tag with a comma
    /// would come back as two, so it is refused rather than split.
    private mutating func setAttribute(_ tags: [String]) throws(EditError) {
        if let split = tags.first(where: { $0.contains(",") }) {
            throw EditError(EROFS, "tag '\(split)' cannot be kept in the user.xdg.tags attribute, where a comma separates tags")
        }
        attribute = tags.isEmpty ? nil : Array(tags.joined(separator: ",").utf8)
    }

    /// Each tag `change` maps to a new tag is renamed, each it maps to nil
    /// removed: in the payload, and in the attribute.
    /// A note's fields from its front matter (none for other files).
    private func noteFields(_ sources: FieldSources) -> PayloadFields {
        guard let note, !note.payload.isEmpty else { return PayloadFields() }
        return PayloadFields(payload: .dictionary(note.payload), paths: sources.splitPaths)
    }

    /// A tag kept in one string of comma-separated tags (ArchiveBox's) must
    /// hold no comma: it would read back as two tags (found from outside:
    /// `--add 'p,q'` returned 0 and made tags p and q).
    static func checkFitsTagString(_ tag: String) throws(EditError) {
        guard !tag.contains(",") else {
            // EROFS, as a note's list that cannot take a tag says: EINVAL made `mv` say "a subdirectory of itself".
            throw EditError(EROFS, "tag '\(tag)' cannot be kept in the payload's tags, one string of tags separated by commas: it would read as \(tag.split(separator: ",").count) tags")
        }
    }

    private mutating func changeTags(_ sources: FieldSources, _ change: (String) -> String??) throws(EditError) {
        // A tag written in the note's text (`#tag`) is the text's: refused, not silently kept
        // — also when the front matter names it too: taken from there alone, it stayed
        // in its folder, and `rm` said it had gone (found from outside).
        if sources.inlineTags, let bytes = noteFile,
           let written = InlineTags.read(FrontMatter.body(Array(bytes.prefix(FrontMatter.Limits.headBytes)))).first(where: { change($0) != nil }) {
            throw EditError(EROFS, "tag '\(written)' is written in the note's text (#\(written)): change it there")
        }
        // A JSON sidecar's tags are its tool's (yt-dlp's): refused, not silently kept
        // (the edit returned 0 and changed nothing, found from outside).
        if let (name, value) = jsonSidecar,
           let kept = PayloadFields(payload: value, paths: sources.splitPaths).tags.first(where: { change($0) != nil }) {
            throw EditError(EROFS, "tag '\(kept)' is in the sidecar \(String(decoding: name, as: UTF8.self)), which queryfs does not write: change it there")
        }
        // A sidecar's tags: written back into it, or refused whole.
        if sidecarName != nil, let bytes = sidecarFile, let sidecarTags = try? XMPSidecarEditor.tags(bytes),
           let kept = sidecarTags.first(where: { change($0) != nil }) {
            var seen = Set<String>()
            let changed = sidecarTags.compactMap { tag in change(tag) ?? tag }.filter { seen.insert($0).inserted }
            do throws(FrontMatterError) {
                sidecarFile = try XMPSidecarEditor.settingTags(changed, in: bytes)
            } catch {
                throw EditError(EROFS, "tag '\(kept)' is in the sidecar \(String(decoding: sidecarName ?? [], as: UTF8.self)), which this edit cannot change (\(error.message))")
            }
        }
        // A note's front-matter tags: written back into it, or refused whole, before anything changes.
        let noteTags = noteFields(sources).tags
        if let kept = noteTags.first(where: { change($0) != nil }) {
            var seen = Set<String>()
            let changed = noteTags.compactMap { tag in change(tag) ?? tag }.filter { seen.insert($0).inserted }
            do throws(FrontMatterError) {
                let name = noteName
                _ = try editNote({ (note) throws(FrontMatterError) in try FrontMatterEditor.settingTags(changed, in: note, name: name) })
            } catch {
                throw EditError(EROFS, "tag '\(kept)' is in the note's front matter, which this edit cannot change (\(error.message)): change it in the note")
            }
        }
        if isBundle, payload != nil, case .string(let text)? = payload?.value.value(at: try keyPath(sources.tags, fitting: { _ in false })) {
            let path = try keyPath(sources.tags, fitting: { _ in false })
            // Each tag changed where it stands, with the blanks around it and
            // every other tag as they were (rebuilt whole, `" a , b ,c "`
            // lost its spacing when one tag left, found from outside).
            let segments = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            // `change` is asked once a tag, in order (a rename keeps its first match only).
            let outcomes = segments.map { segment -> String?? in
                let tag = segment.trimming(" \t")
                return tag.isEmpty ? nil : change(tag)
            }
            let kept = Set(zip(segments, outcomes).compactMap { $1 == nil ? $0.trimming(" \t") : nil })
            var written = Set<String>()
            var result: [String] = []
            for (segment, change) in zip(segments, outcomes) {
                guard let outcome = change else { result.append(segment); continue }
                // Renamed onto a tag the string holds already (or wrote already): once is enough.
                guard let renamed = outcome, !kept.contains(renamed), written.insert(renamed).inserted else { continue }
                try Self.checkFitsTagString(renamed)
                // The blanks around it kept (the tag is the segment less them).
                let isBlank = { (character: Character) in character == " " || character == "\t" }
                result.append(String(segment.prefix(while: isBlank)) + renamed + String(segment.reversed().prefix(while: isBlank).reversed()))
            }
            // The first tag gone, the next one starts the string as the first did (`"a, b"` less a is `"b"`).
            if let first = segments.first, let newFirst = result.first, first.first != " ", newFirst.first == " " || newFirst.first == "\t" {
                result[0] = String(newFirst.drop { $0 == " " || $0 == "\t" })
            }
            let joined = result.joined(separator: ",")
            if joined != text { try editDocument { (document) throws(EditError) in try document.set(path, to: .string(joined)) } }
        } else if isBundle, payload != nil {
            let path = try keyPath(sources.tags, fitting: { if case .array = $0 { true } else { false } })
            try editDocument { (document) throws(EditError) in
                try document.changeElements(ofArrayAt: path) { element in
                    guard case .string(let tag) = element, let outcome = change(tag) else { return nil }
                    return .some(outcome.map(PayloadValue.string))
                }
            }
        }
        let tags = attributeTags
        var seen = Set<String>()
        let changed = tags.compactMap { tag in change(tag) ?? tag }.filter { seen.insert($0).inserted }
        if changed != tags { try setAttribute(changed) }
    }

    /// The XMP sidecar's name beside the file, and its bytes (nil: none yet; an edit makes it).
    var sidecarName: [UInt8]?
    var sidecarFile: [UInt8]?
    /// A JSON sidecar's name and value: its fields are the item's, and an
    /// edit of its tags is refused; tags added go to the attribute.
    var jsonSidecar: (name: [UInt8], value: PayloadValue)?

    /// How the journal names a sidecar's file.
    static let sidecarJournalPrefix = "sidecar:"
    static func journalName(ofSidecar name: [UInt8]) -> String { sidecarJournalPrefix + String(decoding: name, as: UTF8.self) }

    /// The note's name for `FrontMatterEditor` (its extension says whether a block may be made).
    var noteName = ItemName("note.md")

    /// Takes the note's bytes: its front matter parsed again.
    mutating func setNote(_ bytes: [UInt8]?) {
        noteFile = bytes
        note = bytes.map { FrontMatter.parse(Array($0.prefix(FrontMatter.Limits.headBytes))) }
    }

    /// Rewrites the note with `change`; false when this is no note.
    private mutating func editNote(_ change: ([UInt8]) throws(FrontMatterError) -> [UInt8]) throws(FrontMatterError) -> Bool {
        guard let bytes = noteFile else { return false }
        let changed = try change(bytes)
        if changed != bytes { setNote(changed) }
        return true
    }

    /// Sets `key` in a note's front matter; false when this is no note.
    private mutating func setNoteValue(_ key: String, _ value: PayloadValue, item: ItemName) throws(EditError) -> Bool {
        // A text file without front matter holds no fields: refused as any plain file is.
        guard let bytes = noteFile, FrontMatterEditor.canHoldFrontMatter(bytes, name: noteName) else { return false }
        do throws(FrontMatterError) {
            let name = noteName
            return try editNote { (note) throws(FrontMatterError) in try FrontMatterEditor.setting(key, to: value, in: note, name: name) }
        } catch {
            throw EditError(EROFS, "\(item): \(key) cannot be written into the note's front matter (\(error.message))")
        }
    }

    /// The first of `paths` whose value fits (the one the field is read
    /// from), else the first of them (where a new value goes).
    private func keyPath(_ paths: [String], fitting fits: (PayloadValue) -> Bool) throws(EditError) -> [String] {
        let split = paths.map(Self.split).filter { !$0.isEmpty && !$0.contains("") }
        if let value = payload?.value, let found = split.first(where: { value.value(at: $0).map(fits) ?? false }) { return found }
        guard let first = split.first else { throw EditError(EINVAL, "the configuration names no payload key for this field ([fields])") }
        return first
    }

    // MARK: Files

    /// What `name` holds in this state: the payload file's bytes, or the attribute's.
    func contents(of name: String) -> [UInt8]? {
        if name == EditJournal.itemFile { return noteFile }
        if let sidecarName, name == Self.journalName(ofSidecar: sidecarName) { return sidecarFile }
        return name == EditJournal.attributeFile ? attribute : (name == payloadName ? payloadFile : nil)
    }

    /// Puts a file back as an undo found it in the journal.
    mutating func setContents(of name: String, to bytes: [UInt8]?) {
        if name == EditJournal.attributeFile {
            attribute = bytes
            return
        }
        if name == EditJournal.itemFile {
            setNote(bytes)
            return
        }
        if let sidecarName, name == Self.journalName(ofSidecar: sidecarName) {
            sidecarFile = bytes
            return
        }
        payloadName = name
        payloadFile = bytes
        payload = bytes.flatMap { try? PayloadDocuments.open($0, fileName: name) }
    }

    /// The files that differ between this state and `other`.
    func differences(to other: ItemState) -> [String] {
        var files: [String] = []
        if payloadFile != other.payloadFile || payloadName != other.payloadName { files.append(other.payloadName) }
        if attribute != other.attribute { files.append(EditJournal.attributeFile) }
        if noteFile != other.noteFile { files.append(EditJournal.itemFile) }
        if let sidecarName = other.sidecarName, sidecarFile != other.sidecarFile { files.append(Self.journalName(ofSidecar: sidecarName)) }
        return files
    }

    /// An attribute is durable once its file (or folder) is: fsync'd.
    /// Never blocks on a FIFO item (O_NONBLOCK), which has nothing to sync.
    private static func syncAttributes(of item: ItemName, in rootFD: Int32) throws(EditError) {
        let fd = item.withCString { openat(rootFD, $0, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { throw EditError(errno, "\(item): cannot open to flush its tags: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        if retryingOnEINTR({ fsync(fd) }) != 0, errno != EINVAL {
            throw EditError(errno, "\(item): cannot flush its tags: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `files` of this state; `written` gets each file once it is
    /// written, so that a failure takes back those and no others.
    /// `checkingStampsOf`: the state the edit was read as; a note or payload
    /// replaced since (an editor's save) fails the write with EAGAIN before
    /// anything of it is written, instead of being overwritten.
    func write(_ files: [String], item: ItemName, in rootFD: Int32, checkingStampsOf read: ItemState? = nil,
               written: inout [String]) throws(EditError) {
        // The note first: it is a new file (renamed over the old one), which takes the old one's
        // attributes along; a changed tags attribute is then set on it.
        if files.contains(EditJournal.itemFile), let bytes = noteFile {
            do throws(SystemError) {
                try AtomicFile.replaceUnflushed(item.bytes, in: rootFD, with: bytes, unchangedSince: read?.noteStamp)
                written.append(EditJournal.itemFile)
                try AtomicFile.syncFolder(rootFD, path: item.description)
            } catch {
                throw EditError(error.errno, "\(item): \(error.message)")
            }
        }
        if let sidecarName, files.contains(Self.journalName(ofSidecar: sidecarName)) {
            do throws(SystemError) {
                if let bytes = sidecarFile {
                    // A sidecar made anew is its photo's: owner and mode (found from
                    // outside: made by root in a user's collection, it was root's,
                    // and darktable running as the user could no longer write it).
                    var photo = stat()
                    let found = item.withCString { fstatat(rootFD, $0, &photo, AT_SYMLINK_NOFOLLOW) } == 0
                    try AtomicFile.replaceUnflushed(sidecarName, in: rootFD, with: bytes, newFileLike: found ? photo : nil,
                                                    newFileMode: found ? photo.st_mode & 0o666 : 0o644)
                } else if sidecarName.withCString({ unlinkat(rootFD, $0, 0) }) != 0, errno != ENOENT {
                    throw SystemError.current("unlink")
                }
                written.append(Self.journalName(ofSidecar: sidecarName))
                try AtomicFile.syncFolder(rootFD, path: String(decoding: sidecarName, as: UTF8.self))
            } catch {
                throw EditError(error.errno, "\(String(decoding: sidecarName, as: UTF8.self)): \(error.message)")
            }
        }
        if files.contains(EditJournal.attributeFile) {
            let result = item.withCString { name in
                attribute.map { bytes in
                    bytes.withUnsafeBytes { qfs_setxattrat(rootFD, name, ExtendedAttributeTags.attributeName, $0.baseAddress, UInt($0.count)) }
                } ?? qfs_removexattrat(rootFD, name, ExtendedAttributeTags.attributeName)
            }
            // A failed set may still have changed it (a filesystem that
            // fails after writing): taken back either way, as before.
            written.append(EditJournal.attributeFile)
            if result != 0, !(attribute == nil && errno == ENODATA) {
                throw EditError(errno, "\(item): cannot write \(ExtendedAttributeTags.attributeName): \(String(cString: strerror(errno)))")
            }
            try Self.syncAttributes(of: item, in: rootFD)
        }
        guard let payloadName = files.first(where: { $0 != EditJournal.attributeFile && $0 != EditJournal.itemFile && !$0.hasPrefix(Self.sidecarJournalPrefix) })
        else { return }
        let fd = item.withCString { DirectoryReader.openDirectory($0, in: rootFD) }
        guard fd >= 0 else { throw EditError(errno, "\(item): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        do throws(SystemError) {
            if let bytes = payloadFile {
                var bundle = stat()
                fstat(fd, &bundle)
                try AtomicFile.replaceUnflushed(Array(payloadName.utf8), in: fd, with: bytes, newFileLike: bundle,
                                                unchangedSince: read?.payloadName == payloadName ? read?.payloadStamp : nil)
                written.append(payloadName)
                try AtomicFile.syncFolder(fd, path: payloadName)
            } else if payloadName.withCString({ unlinkat(fd, $0, 0) }) != 0, errno != ENOENT {
                throw SystemError.current("unlink", path: payloadName)
            } else {
                written.append(payloadName)
            }
        } catch {
            throw EditError(error.errno, "\(item)/\(payloadName): \(error.message)")
        }
    }
}

