#if canImport(Glibc)
import Glibc
#endif

/// The bytes a command-line argument was given as. ArgumentParser hands
/// arguments over as `String`s, and a `String` made of bytes that are not
/// UTF-8 holds U+FFFD in their place: an item whose name is such bytes
/// could not be named (found from outside). The process's own `argv` still
/// has them.
enum RawArguments {
    /// The bytes of the argument `text` was decoded from: the first whose
    /// decoding gives `text` and that is not UTF-8; `text`'s own bytes when none is.
    static func bytes(of text: String) -> [UInt8] {
        guard text.unicodeScalars.contains("\u{FFFD}") else { return Array(text.utf8) }
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let raw = Array(UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument)))
            if String(validating: raw, as: UTF8.self) == nil, String(decoding: raw, as: UTF8.self) == text { return raw }
        }
        return Array(text.utf8)
    }
}
