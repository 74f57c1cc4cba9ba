import QueryFSEngine
import QueryFSCollection

/// Why a call on an ``ItemCollection`` failed. Every failure the library
/// reports is one of these, with a sentence fit to show a user.
public enum CollectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The view or query names nothing the collection can show.
    case invalidView(String)
    /// Another holder kept the item's lock (SPEC §5) longer than the allowed wait.
    case lockTimeout(item: String, seconds: Double)
    /// The edit cannot be made (a refused change, a payload that cannot hold it).
    case editRefused(item: String, reason: String)
    /// A system call failed: what was done, on which path, and its errno.
    case system(operation: String, path: String, errno: Int32, message: String)
    /// The collection was closed: nothing more can be asked of it.
    case closed

    public var description: String {
        switch self {
        case .invalidView(let why): why
        case .lockTimeout(let item, let seconds): "\(item): its lock was held by another for more than \(seconds) s"
        case .editRefused(let item, let reason): "\(item): \(reason)"
        case .system(let operation, let path, _, let message): path.isEmpty ? "\(operation): \(message)" : "\(operation) \(path): \(message)"
        case .closed: "the collection is closed"
        }
    }

    init(_ error: SystemError) {
        self = .system(operation: error.operation, path: error.path, errno: error.errno, message: error.message)
    }

    /// The one shape of every error the layers below throw.
    init(_ error: any Error, item: String) {
        switch error {
        case let error as CollectionError: self = error
        case let error as SystemError: self.init(error)
        case let timeout as ItemLock.Timeout: self = .lockTimeout(item: item, seconds: timeout.seconds)
        case let error as EditError:
            if let timeout = error.lockTimeout { self = .lockTimeout(item: item, seconds: timeout.seconds) } else {
                self = .editRefused(item: item, reason: error.message)
            }
        default: self = .system(operation: "access", path: item, errno: 0, message: "\(error)")
        }
    }
}
