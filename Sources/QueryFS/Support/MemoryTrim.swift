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
}
