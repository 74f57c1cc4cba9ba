#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Gives memory malloc holds free back to the kernel. glibc returns only the
/// top of its heap on its own; after a start the heap is full of holes
/// (the index file decoded, the scan's buffers, on several threads' arenas)
/// that count as resident until trimmed: 20–35 MB at 100,000 items.
package enum MemoryTrim {
    /// malloc_trim(0), looked up at run time: Swift's Glibc module leaves it out.
    package static func returnFreedMemory() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
    }

    /// At most `count` malloc arenas from now on (mallopt M_ARENA_MAX; glibc's
    /// default is 8 per core). Each arena keeps its own partly used pages.
    /// Stop 23, at 100,000 items with every view listed: 70 MB with the
    /// default, 71.9 MB with one arena, 66.4 MB with two, 70.0 MB with four.
    /// Stop 27, with the compact records since (the installed binary, the
    /// same procedure): two arenas left 55.3–60.3 MB, in two modes three
    /// megabytes apart (which threads landed in the second arena, whose heap
    /// then kept 2.4 or 5.6 MB), one arena 54.4–55.7 MB; 397 against 406 MB
    /// at 1,000,000. With one arena, threads still allocate small blocks
    /// from their own caches (tcache) without its lock: mount times, a
    /// first `ls -l`, a walk of `bundles/` and the 1,000,000-item change
    /// latencies did not move beyond run-to-run noise. Call before threads start.
    package static func limitArenas(to count: Int32) {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mArenaMax: Int32 = -8
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)(mArenaMax, count)
    }

    /// One arena when the address space is limited (`ulimit -v`): each
    /// thread's arena reserves 64 MB of it, and a scan's threads ran a
    /// 150 MB limit out at 24 MB resident, then crashed (found from outside).
    /// Call before threads start.
    package static func fitAddressSpaceLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return }
        limitArenas(to: 1)
    }
}
