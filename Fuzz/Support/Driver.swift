/// libFuzzer's driver, started from the target's own `main`: SwiftPM gives
/// every executable a `main` of its own (linked in place of libFuzzer's), so
/// each target calls `LLVMFuzzerRunDriver` with its test function instead.
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<Int32>,
                       _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

public enum FuzzDriver {
    public static func run(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(runDriver(&argc, &argv, test))
    }

    /// The input as bytes (libFuzzer may pass a null pointer for empty input).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}

@_silgen_name("exit")
private func exit(_ status: Int32) -> Never
