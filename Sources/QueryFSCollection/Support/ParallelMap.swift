import Dispatch
import QueryFSEngine

/// Runs `transform` over `elements` on `threads` threads, keeping order
/// (below `minimumCount` elements, on this thread: starting workers costs more).
func parallelMap<T, R>(_ elements: [T], threads: Int, minimumCount: Int = 64, _ transform: (T) -> R) -> [R] {
    if threads <= 1 || elements.count < max(2, minimumCount) { return elements.map(transform) }
    return withoutActuallyEscaping(transform) { transform in
        nonisolated(unsafe) let work = transform
        nonisolated(unsafe) let input = elements
        return [R](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
            nonisolated(unsafe) let output = buffer
            let workers = min(threads, input.count)
            // Each worker initializes its own stride of slots.
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                var index = worker
                while index < input.count {
                    (output.baseAddress! + index).initialize(to: work(input[index]))
                    index += workers
                }
            }
            initialized = input.count
        }
    }
}
