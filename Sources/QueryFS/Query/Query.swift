/// A parsed query: a filter and an order, ready to become a view. The
/// language is described in README.md ("Queries"); `QueryParser` reads it.
public struct Query: Equatable, Sendable {
    public var filter: Predicate
    public var order: Ordering
    /// The shortest age (`7d`, in seconds) among its dates, nil if none: a
    /// query with ages selects differently as time passes, so a live view
    /// of it is evaluated again now and then (`AgeRefresh`).
    public var shortestAge: Double?

    /// Without a `sort:` clause a query lists newest `modified` first, as
    /// the built-in filtered views do (SPEC §2).
    public static let defaultOrder = Ordering.newestModifiedFirst

    public init(filter: Predicate, order: Ordering = Query.defaultOrder) {
        self.filter = filter
        self.order = order
    }

    /// Parses `text`; `now` anchors relative ages such as `7d`.
    public init(parsing text: String, now: Timestamp) throws(QueryError) {
        var parser = QueryParser(text, now: now)
        self = try parser.parse()
    }

    /// The payload key paths the query reads (filter and order).
    public var payloadKeyPaths: Set<String> { filter.payloadKeyPaths.union(order.payloadKeyPaths) }

    /// The view of this query at `path`.
    public func view(at path: [String]) -> ViewDefinition {
        ViewDefinition(path: path, filter: filter, order: order, shortestAge: shortestAge)
    }
}

/// Why a query does not parse, and where: `position` counts characters
/// from 0, so a caller can point at the offending spot.
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public let position: Int

    public init(_ message: String, at position: Int) {
        self.message = message
        self.position = position
    }

    public var description: String { "column \(position + 1): \(message)" }

    /// The query with a caret under the offending column, for terminals.
    public func pointing(into query: String) -> String {
        query + "\n" + String(repeating: " ", count: position) + "^ " + message
    }
}
