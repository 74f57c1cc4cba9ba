import Logging
import QueryFSEngine

extension Logger {
    /// A logger whose lines go nowhere: for parts used where nothing is
    /// logged (tests, commands that read once).
    package static let discarding = Logger(label: "queryfs.discarded") { _ in SwiftLogNoOpLogHandler() }
}

/// A line to log later, with its level (what a start has to say, logged
/// once the mount is live).
struct LogNote: Sendable {
    let level: Logger.Level
    let text: String

    init(_ level: Logger.Level, _ text: String) {
        self.level = level
        self.text = text
    }

    func log(to logger: Logger) { logger.log(level: level, "\(text)") }
}
