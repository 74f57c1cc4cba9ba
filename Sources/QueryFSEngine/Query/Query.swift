/// A parsed query: a filter and an order, ready to become a view. The
/// language is described in README.md ("Queries"); `QueryParser` reads it.
package struct Query: Equatable, Sendable {
    package var filter: Predicate
    package var order: Ordering
    /// The shortest age (`7d`, in seconds) among its dates, nil if none: a
    /// query with ages selects differently as time passes, so a live view
    /// of it is evaluated again now and then (`AgeRefresh`).
    package var shortestAge: Double?

    /// Without a `sort:` clause a query lists newest `modified` first, as
    /// the built-in filtered views do (SPEC §2).
    package static let defaultOrder = Ordering.newestModifiedFirst

    package init(filter: Predicate, order: Ordering = Query.defaultOrder) {
        self.filter = filter
        self.order = order
    }

    /// Parses `text`; `now` anchors relative ages such as `7d`.
    package init(parsing text: String, now: Timestamp) throws(QueryError) {
        var parser = QueryParser(text, now: now)
        self = try parser.parse()
    }

    /// The payload key paths the query reads (filter and order).
    package var payloadKeyPaths: Set<String> { filter.payloadKeyPaths.union(order.payloadKeyPaths) }

    /// The view of this query at `path`.
    package func view(at path: [String]) -> ViewDefinition {
        ViewDefinition(path: path, filter: filter, order: order, shortestAge: shortestAge)
    }
}

/// Why a query does not parse, and where: `position` counts characters
/// from 0, so a caller can point at the offending spot.
package struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    package let message: String
    package let position: Int

    package init(_ message: String, at position: Int) {
        self.message = message
        self.position = position
    }

    package var description: String { "column \(position + 1): \(message)" }

    /// The query with a caret under the offending column, for terminals.
    package func pointing(into query: String) -> String {
        query + "\n" + String(repeating: " ", count: position) + "^ " + message
    }
}
