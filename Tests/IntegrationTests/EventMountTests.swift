import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 15: changes made directly in BACKING raise inotify events on the
/// mount, in every folder where they show, as `inotifywait` and GIO's
/// `gio monitor` (what Nautilus uses) receive them; applied to the old
/// listing, the events give the new one.
final class EventMountTests: MountTestCase {
    private func mount(_ extra: [String] = [], corpus: ((Corpus) -> Void)? = nil) throws {
        fixture = MountedFixture(corpus: corpus ?? { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["swift"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", tags: ["swift", "rust"], mtime: 4_000)
            corpus.bundle("c.hpwebsite", title: "Gamma", mtime: 3_000)
            corpus.bundle("d.hpwebsite", title: "Delta", archived: true, tags: ["solo"], mtime: 2_000)
        })
        try fixture.mount(["--log", fixture.root + "/mount.log"] + extra)
    }

    private func names(_ view: String) -> [String] {
        (RawFiles.list(fixture.mounted(view)) ?? []).map(\.text)
    }

    /// A bundle made outside BACKING and renamed in: one change, as a sync tool makes it.
    private func addBundle(_ name: String, title: String, tags: [String] = [], archived: Bool = false) {
        let staging = fixture.root + "/staging-" + name
        mkdir(staging, 0o755)
        Corpus(path: staging).write(staging + "/payload.plist", Array(Corpus.plist(title: title, archived: archived, tags: tags).utf8))
        XCTAssertEqual(rename(staging, fixture.backed(name)), 0)
    }

    private func rewritePayload(_ item: String, title: String, tags: [String] = [], archived: Bool = false) {
        let temporary = fixture.backed(item + "/payload.plist.new")
        Corpus(path: fixture.backing).write(temporary, Array(Corpus.plist(title: title, archived: archived, tags: tags).utf8))
        XCTAssertEqual(rename(temporary, fixture.backed(item + "/payload.plist")), 0)
    }

    /// Waits until every folder's events, applied to its old listing, give its listing now.
    private func assertEventsReplayListings(_ watch: EventWatch, _ old: [String: [String]], file: StaticString = #filePath, line: UInt = #line) {
        for (view, before) in old.sorted(by: { $0.key < $1.key }) {
            let folder = fixture.mounted(view)
            let settled = eventually { watch.applied(to: before, in: folder) == Set(names(view)) }
            XCTAssertTrue(settled, "\(view): events \(watch.events(in: folder)) applied to \(before) do not give \(names(view))", file: file, line: line)
        }
    }

    func testANewBundleShowsInEveryFolderItJoins() throws {
        try mount()
        let views = ["by-modified", "by-name", "unarchived", "tag/swift"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        _ = names("bundles")
        let watch = EventWatch(views.map(fixture.mounted) + [fixture.mounted("bundles"), fixture.mounted("tag")])
        addBundle("n.hpwebsite", title: "Newest", tags: ["swift", "fresh"])
        for view in views {
            XCTAssertTrue(watch.waitFor(in: fixture.mounted(view)) { $0.kinds.contains("CREATE") && $0.name.hasSuffix(" Newest.hpwebsite") },
                          "\(view): \(watch.events(in: fixture.mounted(view)))")
        }
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("bundles")) { $0.kinds == ["CREATE", "ISDIR"] && $0.name == "n.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("bundles")))")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("tag")) { $0.kinds == ["CREATE", "ISDIR"] && $0.name == "fresh" },
                      "\(watch.events(in: fixture.mounted("tag")))")
        assertEventsReplayListings(watch, old)
        // The replay is no edit: nothing journaled, no payload touched.
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.backed(".queryfs-journal")))
        XCTAssertEqual(names("archived").count, 1)
    }

    func testAPayloadEditThatMovesAnItemRenamesItsEntries() throws {
        try mount()
        let views = ["by-name", "by-modified", "unarchived", "archived", "tag/swift"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        let watch = EventWatch(views.map(fixture.mounted) + [fixture.mounted("bundles/c.hpwebsite")])
        // Gamma becomes Aardvark: first by name, newest by modification.
        rewritePayload("c.hpwebsite", title: "Aardvark", tags: ["swift"])
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("by-name")) { $0.kinds.contains("MOVED_FROM") && $0.name.hasSuffix(" Gamma.hpwebsite") },
                      "\(watch.events(in: fixture.mounted("by-name")))")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("by-name")) { $0.kinds.contains("MOVED_TO") && $0.name == "0001 Aardvark.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("by-name")))")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("tag/swift")) { $0.kinds.contains("CREATE") && $0.name.hasSuffix(" Aardvark.hpwebsite") })
        // The bundle's own folder hears that it changed.
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("bundles/c.hpwebsite")) { $0.kinds.contains("ATTRIB") },
                      "\(watch.events)")
        assertEventsReplayListings(watch, old)
    }

    /// `rm` through the mount of an item whose files the kernel has read
    /// (a file manager always has): the entries after it get their rank
    /// renames too (found from outside: given up for a folder touch, so
    /// pcmanfm kept the old ranks for good).
    func testAnRmThroughTheMountShiftsTheRanksAfterIt() throws {
        try mount()
        let views = ["tag/swift"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        XCTAssertEqual(old["tag/swift"]?.count, 2)
        XCTAssertNotNil(RawFiles.read(fixture.mounted("bundles/a.hpwebsite/payload.plist")))
        let watch = EventWatch(views.map(fixture.mounted))
        let first = try XCTUnwrap(old["tag/swift"]?.sorted().first)
        XCTAssertTrue(first.hasSuffix(" Alpha.hpwebsite"), first)
        XCTAssertEqual(unlink(fixture.mounted("tag/swift/" + first)), 0)
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("tag/swift")) { $0.kinds.contains("MOVED_TO") && $0.name == "0001 Beta.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("tag/swift")))")
        assertEventsReplayListings(watch, old)
    }

    /// A name typed through the mount that is not the entry's (`ln -s X
    /// tag/t/mine`, a rename typed over the whole name, `mv` to a name of
    /// one's own): watchers hear it go as the real name comes, so applying
    /// the events gives the listing (found from outside: ghosts in pcmanfm
    /// and Nautilus until they reloaded).
    func testNamesTypedThroughTheMountDoNotStayInWatchersCopies() throws {
        try mount()
        let views = ["tag/swift", "by-name", "tag/rust"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        let watch = EventWatch(views.map(fixture.mounted))
        XCTAssertEqual(symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/swift/my own name.hpwebsite")), 0)
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("tag/swift")) { $0.kinds.contains("DELETE") && $0.name == "my own name.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("tag/swift")))")
        let delta = try XCTUnwrap(names("by-name").first { $0.hasSuffix(" Delta.hpwebsite") })
        XCTAssertEqual(rename(fixture.mounted("by-name/" + delta), fixture.mounted("by-name/Typed over.hpwebsite")), 0)
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("by-name")) { $0.kinds.contains("DELETE") && $0.name == "Typed over.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("by-name")))")
        let alpha = try XCTUnwrap(names("tag/swift").first { $0.hasSuffix(" Alpha.hpwebsite") })
        XCTAssertEqual(rename(fixture.mounted("tag/swift/" + alpha), fixture.mounted("tag/rust/moved here.hpwebsite")), 0)
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("tag/rust")) { $0.kinds.contains("DELETE") && $0.name == "moved here.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("tag/rust")))")
        assertEventsReplayListings(watch, old)
        // The typed name still leads to the entry it became (a program looks it up next).
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("by-name/Typed over.hpwebsite")), "../bundles/d.hpwebsite")
    }

    /// `mv tag/a/X tag/a/b/` leaves X in tag/a (what is in a/b is in a): the
    /// kernel reports its name moved away, and the replay makes it again
    /// there, so a watcher's copy keeps the entry (found from outside:
    /// Nautilus and Nemo dropped it until reloaded).
    func testAnEntryMovedIntoANestedFolderStaysInItsWatchersCopy() throws {
        try mount(corpus: { corpus in
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["lang/python"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", tags: ["lang/rust"], mtime: 4_000)
        })
        let old = ["tag/lang": names("tag/lang")]
        let watch = EventWatch([fixture.mounted("tag/lang")])
        let alpha = try XCTUnwrap(names("tag/lang").first { $0.hasSuffix(" Alpha.hpwebsite") })
        XCTAssertEqual(rename(fixture.mounted("tag/lang/" + alpha), fixture.mounted("tag/lang/rust/" + alpha)), 0, String(cString: strerror(errno)))
        XCTAssertTrue(names("tag/lang").contains(alpha), "still in tag/lang: \(names("tag/lang"))")
        assertEventsReplayListings(watch, old)
    }

    /// A reload that changes a configured view's query, or takes the view
    /// away: the old folder is removed through the mount (its watchers hear
    /// it go), the new one made (the root's watchers hear it come). Found
    /// from outside: nothing was heard, and windows kept the old listing.
    func testAReloadThatChangesOrRemovesAViewIsHeard() throws {
        try mount(corpus: { corpus in
            corpus.write(corpus.path + "/.queryfs.toml", Array("[views]\nmine = \"tag:swift\"\ngone = \"tag:rust\"\n".utf8))
            corpus.bundle("a.hpwebsite", title: "Alpha", tags: ["swift"], mtime: 5_000)
            corpus.bundle("b.hpwebsite", title: "Beta", tags: ["swift", "rust"], mtime: 4_000)
            corpus.bundle("c.hpwebsite", title: "Gamma", tags: ["rust"], mtime: 3_000)
        })
        XCTAssertEqual(names("mine").count, 2)
        XCTAssertEqual(names("gone").count, 2)
        let watch = EventWatch([fixture.mountPoint, fixture.mounted("mine"), fixture.mounted("gone")])
        Corpus(path: fixture.backing).write(fixture.backed(".queryfs.toml"), Array("[views]\nmine = \"tag:rust\"\n".utf8))
        XCTAssertTrue(watch.waitFor(in: fixture.mountPoint) { $0.kinds == ["DELETE", "ISDIR"] && $0.name == "gone" }, "\(watch.events)")
        XCTAssertTrue(watch.waitFor(in: fixture.mountPoint) { $0.kinds == ["CREATE", "ISDIR"] && $0.name == "mine" }, "\(watch.events)")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("mine")) { $0.kinds.contains("DELETE_SELF") }, "\(watch.events)")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("gone")) { $0.kinds.contains("DELETE_SELF") }, "\(watch.events)")
        XCTAssertEqual(names("mine").count, 2)
        XCTAssertTrue(names("mine").contains { $0.hasSuffix(" Gamma.hpwebsite") })
        XCTAssertNil(RawFiles.list(fixture.mounted("gone")))
    }

    func testARenameInBackingReplacesTheBundle() throws {
        try mount()
        let views = ["by-name", "by-modified", "tag/swift", "tag/rust"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        _ = names("bundles")
        let watch = EventWatch(views.map(fixture.mounted) + [fixture.mounted("bundles")])
        XCTAssertEqual(rename(fixture.backed("b.hpwebsite"), fixture.backed("b2.hpwebsite")), 0)
        let bundles = fixture.mounted("bundles")
        XCTAssertTrue(watch.waitFor(in: bundles) { $0.kinds == ["DELETE", "ISDIR"] && $0.name == "b.hpwebsite" }, "\(watch.events(in: bundles))")
        XCTAssertTrue(watch.waitFor(in: bundles) { $0.kinds == ["CREATE", "ISDIR"] && $0.name == "b2.hpwebsite" }, "\(watch.events(in: bundles))")
        XCTAssertTrue(watch.applied(to: old["by-name"]!, in: fixture.mounted("by-name")) == Set(names("by-name")))
        assertEventsReplayListings(watch, old)
        // The entry now leads to the new bundle.
        let entry = try XCTUnwrap(names("by-name").first { $0.hasSuffix(" Beta.hpwebsite") })
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("by-name/" + entry)), "../bundles/b2.hpwebsite")
    }

    func testADeleteInBackingRemovesEntriesAndTheTagFolderItLeaves() throws {
        try mount()
        let views = ["by-name", "archived", "tag/solo"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        _ = names("bundles")
        let watch = EventWatch(views.map(fixture.mounted) + [fixture.mounted("bundles"), fixture.mounted("tag")])
        XCTAssertEqual(Program.run(["rm", "-rf", fixture.backed("d.hpwebsite")]).status, 0)
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("archived")) { $0.kinds == ["DELETE"] && $0.name.hasSuffix(" Delta.hpwebsite") },
                      "\(watch.events(in: fixture.mounted("archived")))")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("tag")) { $0.kinds == ["DELETE", "ISDIR"] && $0.name == "solo" }, "\(watch.events(in: fixture.mounted("tag")))")
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("bundles")) { $0.kinds == ["DELETE", "ISDIR"] && $0.name == "d.hpwebsite" },
                      "\(watch.events(in: fixture.mounted("bundles")))")
        for view in ["by-name", "archived"] { assertEventsReplayListings(watch, [view: old[view]!]) }
        XCTAssertNil(RawFiles.list(fixture.mounted("tag/solo")))
    }

    func testAQueryFolderHearsItsChanges() throws {
        try mount()
        let query = "query/tag:swift -archived sort:name"
        let old = names(query)
        XCTAssertEqual(old.count, 2)
        let watch = EventWatch([fixture.mounted(query)])
        addBundle("n.hpwebsite", title: "Aaron", tags: ["swift"])
        XCTAssertTrue(watch.waitFor(in: fixture.mounted(query)) { $0.kinds == ["CREATE"] && $0.name.hasSuffix(" Aaron.hpwebsite") },
                      "\(watch.events)")
        assertEventsReplayListings(watch, [query: old])
    }

    func testGioMonitorSeesCreatesAndDeletes() throws {
        try mount()
        let scratch = makeTemporaryDirectory(prefix: "queryfs-gio")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let folder = fixture.mounted("by-name")
        let pid = Program.spawn(["gio", "monitor", folder], stdout: scratch + "/out", stderr: scratch + "/err")
        defer { kill(pid, SIGTERM); _ = Program.wait(pid, timeout: 5) }
        // gio monitor prints nothing when ready: it is once its inotify watch is set.
        XCTAssertTrue(eventually(timeout: 10) { ProcessSignals.inotifyWatches(of: pid) > 0 }, "gio monitor set no watch")
        addBundle("n.hpwebsite", title: "Aaron", tags: ["swift"])
        let output = { (try? String(contentsOfFile: scratch + "/out", encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually { output().contains("0001 Aaron.hpwebsite: created") }, output())
        XCTAssertEqual(Program.run(["rm", "-rf", fixture.backed("n.hpwebsite")]).status, 0)
        XCTAssertTrue(eventually { output().contains("0001 Aaron.hpwebsite: deleted") }, output())
        // The ranks shifted by the new entry came back: renamed, as GIO reports a move without move tracking.
        XCTAssertTrue(output().contains("0002 Alpha.hpwebsite: deleted") || output().contains("0002 Alpha.hpwebsite: renamed"), output())
    }

    func testEveryChangeMovesTheFolderTimeForward() throws {
        try mount()
        var previous = try XCTUnwrap(RawFiles.stat(Array(fixture.mounted("by-name").utf8))).st_mtim
        var previousTag = try XCTUnwrap(RawFiles.stat(Array(fixture.mounted("tag").utf8))).st_mtim
        for number in 0..<3 {
            addBundle("n\(number).hpwebsite", title: "New \(number)", tags: ["t\(number)"])
            XCTAssertTrue(eventually { names("by-name").contains { $0.hasSuffix(" New \(number).hpwebsite") } })
            let now = try XCTUnwrap(RawFiles.stat(Array(fixture.mounted("by-name").utf8))).st_mtim
            let tagNow = try XCTUnwrap(RawFiles.stat(Array(fixture.mounted("tag").utf8))).st_mtim
            XCTAssertTrue((now.tv_sec, now.tv_nsec) > (previous.tv_sec, previous.tv_nsec), "by-name mtime did not move")
            XCTAssertTrue((tagNow.tv_sec, tagNow.tv_nsec) > (previousTag.tv_sec, previousTag.tv_nsec), "tag/ mtime did not move")
            (previous, previousTag) = (now, tagNow)
        }
    }

    func testNoEventsMountsRaiseNone() throws {
        try mount(["--no-events"])
        let watch = EventWatch([fixture.mounted("by-name"), fixture.mounted("bundles")])
        addBundle("n.hpwebsite", title: "Aaron", tags: ["swift"])
        XCTAssertTrue(eventually { names("by-name").contains("0001 Aaron.hpwebsite") })
        usleep(500_000)
        XCTAssertEqual(watch.events, [])
    }

    func testAShiftPastTheBoundTouchesTheFolderInsteadOfRenamingEveryEntry() throws {
        try mount(corpus: { corpus in
            for number in 0..<1_100 { corpus.bundle("item-\(number).hpwebsite", title: "Item \(number)", mtime: 1_000 + number) }
        })
        let old = names("by-name")
        let watch = EventWatch([fixture.mounted("by-name")])
        addBundle("n.hpwebsite", title: "Aaron")
        let folder = fixture.mounted("by-name")
        XCTAssertTrue(watch.waitFor(in: folder) { $0.kinds == ["CREATE"] && $0.name == "0001 Aaron.hpwebsite" }, "\(watch.events.prefix(10))")
        // The folder's own attribute change (KIO lists it again on one).
        XCTAssertTrue(watch.waitFor(in: folder) { $0.kinds == ["ATTRIB", "ISDIR"] && $0.name.isEmpty }, "\(watch.events.prefix(10))")
        XCTAssertFalse(watch.events.contains { $0.kinds.contains("MOVED_FROM") }, "renamed entries past the bound")
        // Stale ranks a watcher still shows resolve to the right item.
        XCTAssertEqual(RawFiles.linkTarget(fixture.mounted("by-name/" + old[0])), "../bundles/item-0.hpwebsite")
    }

    /// A file item (a plain file in BACKING) comes and goes in bundles/ as a
    /// file: the replay made a folder for it, which the kernel refused.
    func testAFileItemMadeAndRemovedInBackingIsHeardInBundles() throws {
        try mount()
        _ = names("bundles")
        let bundles = fixture.mounted("bundles")
        let watch = EventWatch([bundles])
        let staging = fixture.root + "/staging-notes.txt"
        Corpus(path: fixture.root).write(staging, Array("plain words\n".utf8))
        XCTAssertEqual(rename(staging, fixture.backed("notes.txt")), 0)
        XCTAssertTrue(watch.waitFor(in: bundles) { $0.kinds == ["CREATE"] && $0.name == "notes.txt" }, "\(watch.events(in: bundles))")
        XCTAssertEqual(unlink(fixture.backed("notes.txt")), 0)
        XCTAssertTrue(watch.waitFor(in: bundles) { $0.kinds == ["DELETE"] && $0.name == "notes.txt" }, "\(watch.events(in: bundles))")
        XCTAssertFalse(names("bundles").contains("notes.txt"))
    }

    /// A burst of changes (a sync tool, a `git checkout`: one every 10 ms)
    /// still adds up in a watcher's copy: the replay gave up rank shifts for
    /// newer changes, whose events then named entries no watcher had heard
    /// of, and the shifted ones stayed behind as ghosts.
    func testABurstOfChangesAddsUpInAWatchersCopy() throws {
        try mount(corpus: { corpus in
            for number in 0..<200 { corpus.bundle("item-\(number).hpwebsite", title: "Item \(number)", mtime: 1_000 + number) }
        })
        let views = ["by-name", "by-modified"]
        let old = Dictionary(uniqueKeysWithValues: views.map { ($0, names($0)) })
        let watch = EventWatch(views.map(fixture.mounted))
        for number in 0..<40 {
            // Each retitle moves the item to the top of by-name: every entry above it shifts.
            rewritePayload("item-\(number * 5).hpwebsite", title: "A\(String(format: "%03d", 40 - number)) moved")
            usleep(10_000)
        }
        assertEventsReplayListings(watch, old)
        for view in views {
            let unheard = watch.unannouncedNames(from: old[view]!, in: fixture.mounted(view))
            XCTAssertEqual(unheard, [], "\(view): events name entries no earlier event or listing gave")
        }
    }

    /// A burst of notes made, saved (in place, or by an editor's rename
    /// over) and removed, 0–4 ms apart: what a watcher of bundles/ hears
    /// adds up to bundles/ (found from outside: a note replaced and then
    /// removed got no DELETE — the kernel had let go of its node — and
    /// stayed a ghost, and a saved one got a CREATE of a name watchers had).
    func testABurstOfFileItemsAddsUpInBundles() throws {
        try mount(corpus: { corpus in
            for number in 0..<40 { corpus.file(Array("note\(number).md".utf8), contents: Array("---\ntitle: N\(number)\n---\n".utf8), mtime: 1_000 + number) }
        })
        let bundles = fixture.mounted("bundles")
        let old = names("bundles")
        let watch = EventWatch([bundles])
        var random = SystemRandomNumberGenerator()
        var notes = (0..<40).map { "note\($0).md" }
        for step in 0..<300 {
            let choice = Int.random(in: 0..<5, using: &random)
            let text = Array("---\ntitle: T\(step)\ntags: [x]\n---\nbody\n".utf8)
            if choice < 2 || notes.isEmpty {
                notes.append("new\(step).md")
                Corpus(path: fixture.backing).write(fixture.backed("new\(step).md"), text)
            } else if choice < 4 {
                let note = notes.randomElement(using: &random)!
                if Bool.random(using: &random) {
                    Corpus(path: fixture.root).write(fixture.root + "/save.tmp", text)
                    XCTAssertEqual(rename(fixture.root + "/save.tmp", fixture.backed(note)), 0)
                } else {
                    Corpus(path: fixture.backing).write(fixture.backed(note), text)
                }
            } else {
                let note = notes.remove(at: Int.random(in: 0..<notes.count, using: &random))
                XCTAssertEqual(unlink(fixture.backed(note)), 0)
            }
            usleep(UInt32.random(in: 0..<4_000, using: &random))
        }
        XCTAssertTrue(eventually { watch.applied(to: old, in: bundles) == Set(self.names("bundles")) },
                      "events do not add up: ghosts \(watch.applied(to: old, in: bundles).subtracting(names("bundles")).sorted().prefix(5)), unheard \(Set(names("bundles")).subtracting(watch.applied(to: old, in: bundles)).sorted().prefix(5))")
        var present = Set(old)
        for event in watch.events(in: bundles) {
            if event.kinds.contains("CREATE") { XCTAssertTrue(present.insert(event.name).inserted, "CREATE of \(event.name), which watchers had") }
            if event.kinds.contains("DELETE") { present.remove(event.name) }
        }
    }
}
