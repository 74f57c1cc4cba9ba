// queryfs-bench memory BACKING: where the daemon's bytes go, structure by
// structure. Each stage is built on top of the last and measured as resident
// memory after malloc_trim, so a row is what that structure adds.

import QueryFSEngine
import QueryFSCollection
import QueryFSMount
#if canImport(Glibc)
import Glibc
#endif

struct MemoryBreakdown {
    let backing: String

    /// Resident bytes now (the second field of /proc/self/statm), after giving freed memory back.
    private func resident() -> Int {
        MemoryTrim.returnFreedMemory()
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(fd, &buffer, buffer.count)
        let fields = String(decoding: buffer[..<max(0, count)], as: UTF8.self).split(separator: " ")
        return fields.count >= 2 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    func run() {
        var rows: [(String, Int)] = []
        var last = resident()
        func note(_ what: String) {
            let now = resident()
            rows.append((what, now - last))
            last = now
        }
        // As BACKING's configuration reads it (a recursive collection of notes, sidecars).
        let sources = (try? Configuration.load(backing: backing))?.sources ?? FieldSources()
        let root: BackingDirectory
        do { root = try BackingDirectory(path: backing, readingAs: sources) } catch { fail("\(error)") }
        let items: [Item]
        do { items = try Scanner(sources: sources).scan(root) } catch { fail("\(error)") }
        note("items: Item values (names, titles, sort keys, tags, URLs, payload values)")
        let records = items.map { ItemRecord($0) }
        note("records: an ItemRecord per item (its own name bytes, packed text fields)")
        let index = LiveIndex(items: items, viewSet: ViewSet())
        note("index: its own records, the built-in views and tag folders, lookups by name")
        let catalog: LiveCatalog
        do { catalog = try LiveCatalog(backingPath: backing, logger: .discarding) } catch { fail("\(error)") }
        note("a live catalog (the mount's): a second scan and index, the watcher, item stamps")
        let filesystem: QueryFilesystem
        do { filesystem = try QueryFilesystem(catalog: catalog) } catch { fail("\(error)") }
        note("filesystem tables: view folders, item serials, latest records")
        let count = max(items.count, 1)
        let references = index.views.reduce(0) { $0 + $1.count }
        print("memory of \(items.count) items in \(backing) (resident after malloc_trim; each row on top of the last)")
        for (what, bytes) in rows {
            print("  \(format(Double(bytes) / 1_048_576, 1).padding(7)) MiB  \(String(bytes / count).padding(5)) bytes/item  \(what)")
        }
        print("  an Item is \(MemoryLayout<Item>.stride) bytes inline; the rest of its row is heap: name bytes, title, sort key, tags, URL")
        print("  an ItemRecord is one object (scalars inline) and two arrays: its name bytes, and its text fields packed end to end")
        print("  \(index.views.count) views hold \(references) entries (\(format(Double(references) / Double(count), 1)) per item)")
        withExtendedLifetime((items, records, index, catalog, filesystem)) {}
    }
}
