import QueryFSEngine

/// What a view argument names, as `queryfs watch BACKING VIEW` reads it: a
/// built-in or configured view (`by-name`), a tag folder (`tag/swift`), a saved query's
/// folder (`query/<query>`), or else a query (`tag:swift -archived`),
/// kept as the mount keeps a `query/` folder.
struct ViewSelection {
    /// The view's path among the collection's views.
    let path: [String]
    /// The query's text, when the view is a query.
    let query: String?
    /// Payload keys the query reads (`payload.KEY`), which the scan must keep.
    let payloadKeyPaths: Set<String>

    /// `views`: the collection's fixed views (the built-ins and those its
    /// `.queryfs.toml` configures), found by their paths.
    init(_ text: String, views: [ViewDefinition] = ViewDefinition.builtIn) throws(CollectionError) {
        let components = text.split(separator: "/").map(String.init)
        if components.count >= 2, components[0] == ViewDefinition.tagFolder {
            // `tag/a/b`: the folder of the nested tag `a/b`.
            (path, self.query, payloadKeyPaths) = ([ViewDefinition.tagFolder, components.dropFirst().joined(separator: "/")], nil, [])
            return
        }
        if views.contains(where: { $0.path == components }) {
            (path, self.query, payloadKeyPaths) = (components, nil, [])
            return
        }
        // query/<query> names its query after the folder.
        let queryText = components.count == 2 && components[0] == ViewDefinition.queryFolder ? components[1] : text
        let query: Query
        do {
            query = try Query(parsing: queryText, now: .now)
        } catch {
            throw .invalidView("no view '\(text)', nor a query: \(error)")
        }
        (path, self.query, payloadKeyPaths) = ([ViewDefinition.queryFolder, queryText], queryText, query.payloadKeyPaths)
    }
}
