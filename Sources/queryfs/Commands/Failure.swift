import ArgumentParser
import QueryFSEngine
#if canImport(Glibc)
import Glibc
#endif

/// A failure the user caused or can fix: printed as one line on stderr,
/// exit status 2, no usage text and no stack trace.
struct Failure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension ParsableCommand {
    /// Runs `body`, turning any error into one line and exit status 2.
    func reportingFailures(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as Failure {
            fail(failure.message)
        } catch let error as ExitCode {
            throw error
        } catch {
            fail("\(error)")
        }
    }

    private func fail(_ message: String) -> Never {
        printError(message)
        Glibc.exit(2)
    }
}

/// Writes `queryfs: message` as one line on stderr: control characters
/// (a query's newline, a name's ESC) escaped, and a message longer than
/// `longestMessage` cut in the middle (found from outside: a 100,000-character
/// query came back whole in its error).
func printError(_ message: String) {
    var text = TerminalText.escaped(message, backslashes: false)
    if text.count > longestMessage {
        text = String(text.prefix(longestMessage - 200)) + " … " + String(text.suffix(200))
    }
    let line = Array("queryfs: \(text)\n".utf8)
    line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress!, $0.count) }
}

/// The longest error line printed whole, in characters.
let longestMessage = 1_000
