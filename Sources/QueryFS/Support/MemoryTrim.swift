#if canImport(Glibc)
import Glibc
#endif

/// Gives memory malloc holds free back to the kernel. glibc returns only the
/// top of its heap on its own; after a start the heap is full of holes
/// (the index file decoded, the scan's buffers, on several threads' arenas)
/// that count as resident until trimmed: 20–35 MB at 100,000 items.
public enum MemoryTrim {
    /// malloc_trim(0), looked up at run time: Swift's Glibc module leaves it out.
    public static func returnFreedMemory() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
    }

    /// At most `count` malloc arenas from now on (mallopt M_ARENA_MAX; glibc's
    /// default is 8 per core). Each arena keeps its own partly used pages:
    /// at 100,000 items, with every view listed, the mount held 70 MB with
    /// the default, 71.9 MB with one arena (the start's threads then
    /// interleave), 66.4 MB with two, 70.0 MB with four. Call before threads start.
    public static func limitArenas(to count: Int32) {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mArenaMax: Int32 = -8
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)(mArenaMax, count)
    }
}
