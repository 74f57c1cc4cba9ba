/// Reads the query language (README.md, "Queries"): a recursive-descent
/// parser over characters, so that every error can name its column.
///
///     query    := clause*                       clauses side by side are `and`ed
///     clause   := or | sort
///     or       := and (("or" | "|") and)*
///     and      := unary (("and" | "&")? unary)*
///     unary    := ("not" | "-" | "!") unary | "(" or ")" | term
///     term     := FIELD [OP VALUE]               OP: = != < <= > >= : ~
///               | FIELD ("contains" | "matches") VALUE
///     sort     := "sort:" KEY ("," KEY)*          KEY: ["-" | "+"] FIELD
///               | ("sort" | "order") "by" FIELD ["asc" | "desc"] ("," …)*
struct QueryParser {
    private let characters: [Character]
    private var position = 0
    private let now: Timestamp
    private var sortKeys: [Ordering.Key]?
    private var shortestAge: Double?
    /// Negations and parentheses open at this point: each is a level of
    /// recursion here and in every test of the filter, so they are bounded
    /// (130,000 `-` or 60,000 `(` overflowed the stack).
    private var nesting = 0
    static let maximumNesting = 256

    init(_ text: String, now: Timestamp) {
        characters = Array(text)
        self.now = now
    }

    mutating func parse() throws(QueryError) -> Query {
        var filters: [Predicate] = []
        skipSpaces()
        while !atEnd {
            if try parseSortClause() { skipSpaces(); continue }
            filters.append(try parseOr())
            skipSpaces()
            if !atEnd, peek == ")" { throw QueryError("unbalanced ')'", at: position) }
        }
        let filter: Predicate = filters.isEmpty ? .all : filters.count == 1 ? filters[0] : .and(filters)
        var query = Query(filter: filter, order: sortKeys.map(Ordering.init) ?? Query.defaultOrder)
        query.shortestAge = shortestAge
        return query
    }

    // MARK: Boolean structure

    private mutating func parseOr() throws(QueryError) -> Predicate {
        var terms = [try parseAnd()]
        while true {
            skipSpaces()
            if consumeSymbol("|") || consumeKeyword("or") {
                skipSpaces()
                guard !atEnd else { throw QueryError("expected a condition after 'or'", at: position) }
                terms.append(try parseAnd())
            } else {
                break
            }
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(QueryError) -> Predicate {
        var terms = [try parseUnary()]
        while true {
            skipSpaces()
            if atEnd || peek == ")" || peek == "|" || isKeyword("or") || isSortClause { break }
            if consumeSymbol("&") || consumeKeyword("and") {
                skipSpaces()
                guard !atEnd else { throw QueryError("expected a condition after 'and'", at: position) }
            }
            terms.append(try parseUnary())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseUnary() throws(QueryError) -> Predicate {
        skipSpaces()
        guard !atEnd else { throw QueryError("expected a condition", at: position) }
        let start = position
        if consumeKeyword("not") || consumeSymbol("-") || consumeSymbol("!") {
            try enterNesting(at: start)
            defer { nesting -= 1 }
            return .not(try parseUnary())
        }
        if consumeSymbol("(") {
            try enterNesting(at: start)
            defer { nesting -= 1 }
            let inner = try parseOr()
            skipSpaces()
            guard consumeSymbol(")") else { throw QueryError("'(' is never closed", at: start) }
            return inner
        }
        return try parseTerm()
    }

    private mutating func enterNesting(at start: Int) throws(QueryError) {
        nesting += 1
        if nesting > Self.maximumNesting {
            throw QueryError("nested too deeply (more than \(Self.maximumNesting) negations and parentheses)", at: start)
        }
    }

    // MARK: Terms

    private mutating func parseTerm() throws(QueryError) -> Predicate {
        let start = position
        let name = readFieldName()
        guard !name.isEmpty else { throw QueryError("expected a field name, found '\(peek!)'", at: position) }
        let field = try resolveField(name, at: start)
        skipSpacesIfWordOperatorFollows()
        guard let op = readOperator() else {
            // A field alone: a boolean that must be true (`archived`).
            guard field.isBoolean else {
                throw QueryError("'\(name)' needs a comparison (such as \(name)=…)", at: position)
            }
            return .compare(field, .equal, .bool(true))
        }
        skipSpaces()
        let valueStart = position
        let text = try readValue()
        switch op {
        case .contains:
            if field == .tags { return .contains(.tags, .text(text)) }
            return .contains(field, .text(text))
        case .matches:
            return .glob(field, text)
        case .compare(let comparison):
            if field == .tags {
                guard comparison == .equal || comparison == .notEqual else {
                    throw QueryError("tags can only be tested with ':', '=' or '!='", at: valueStart - 1)
                }
                let test = Predicate.contains(.tags, .text(text))
                return comparison == .equal ? test : .not(test)
            }
            // A quoted payload value is text, whatever it looks like: `payload.zip="01234"`
            // never matched the text it names, read as a number (found from outside).
            let quoted = characters.indices.contains(valueStart) && characters[valueStart] == "\""
            let value = quoted && { if case .payload = field { true } else { false } }()
                ? .text(text) : try QueryValues.value(text, for: field, now: now, at: valueStart)
            if case .date = value, let age = QueryValues.age(text) { shortestAge = min(shortestAge ?? age, age) }
            return .compare(field, comparison, value)
        }
    }

    private func resolveField(_ name: String, at start: Int) throws(QueryError) -> Field {
        if name == "tag" { return .tags }
        if let field = Field(named: name) { return field }
        let known = Field.builtIn.map(\.description).joined(separator: ", ")
        throw QueryError("unknown field '\(name)' (fields: \(known), tag, payload.KEY)", at: start)
    }

    private enum Operator {
        case compare(ComparisonOperator)
        case contains, matches
    }

    private mutating func readOperator() -> Operator? {
        for (symbol, op) in [("!=", Operator.compare(.notEqual)), ("<=", .compare(.lessOrEqual)), (">=", .compare(.greaterOrEqual)),
                             ("=", .compare(.equal)), ("<", .compare(.less)), (">", .compare(.greater)), (":", .contains), ("~", .matches)]
        where consumeSymbol(symbol) {
            return op
        }
        if consumeKeyword("contains") { return .contains }
        if consumeKeyword("matches") { return .matches }
        return nil
    }

    /// `title contains x`: spaces before a word operator belong to it.
    private mutating func skipSpacesIfWordOperatorFollows() {
        let saved = position
        skipSpaces()
        if isKeyword("contains") || isKeyword("matches") || (position > saved && isComparisonSymbol) { return }
        position = saved
    }

    private var isComparisonSymbol: Bool {
        guard let character = peek else { return false }
        return "=<>!".contains(character) && !(character == "!" && peek(at: 1) != "=")
    }

    // MARK: Sort clauses

    private var isSortClause: Bool {
        matches("sort:") || ((isKeyword("sort") || isKeyword("order")) && followedByBy)
    }

    private var followedByBy: Bool {
        var probe = self
        _ = probe.consumeKeyword("sort") || probe.consumeKeyword("order")
        probe.skipSpaces()
        return probe.isKeyword("by")
    }

    /// Reads a sort clause if one starts here.
    private mutating func parseSortClause() throws(QueryError) -> Bool {
        guard isSortClause else { return false }
        let start = position
        guard sortKeys == nil else { throw QueryError("only one sort clause is allowed", at: start) }
        var keys: [Ordering.Key] = []
        if consumeSymbol("sort:") {
            repeat {
                var ascending = true
                if consumeSymbol("-") { ascending = false } else { _ = consumeSymbol("+") }
                let fieldStart = position
                let name = readFieldName()
                guard !name.isEmpty else { throw QueryError("expected a field to sort by", at: position) }
                keys.append(Ordering.Key(try resolveField(name, at: fieldStart), ascending: ascending))
            } while consumeSymbol(",")
            if !atEnd, !peek!.isWhitespace, peek != ")" {
                throw QueryError("unexpected '\(peek!)' in sort clause", at: position)
            }
        } else {
            _ = consumeKeyword("sort") || consumeKeyword("order")
            skipSpaces()
            _ = consumeKeyword("by")
            repeat {
                skipSpaces()
                let fieldStart = position
                let name = readFieldName()
                guard !name.isEmpty else { throw QueryError("expected a field to sort by", at: position) }
                let field = try resolveField(name, at: fieldStart)
                let saved = position
                skipSpaces()
                var ascending = true
                if consumeKeyword("desc") { ascending = false } else if !consumeKeyword("asc") { position = saved }
                keys.append(Ordering.Key(field, ascending: ascending))
                skipSpaces()
            } while consumeSymbol(",")
        }
        sortKeys = keys
        return true
    }

    // MARK: Characters

    private var atEnd: Bool { position >= characters.count }
    private var peek: Character? { atEnd ? nil : characters[position] }
    private func peek(at offset: Int) -> Character? {
        position + offset < characters.count ? characters[position + offset] : nil
    }

    private mutating func skipSpaces() {
        while let character = peek, character.isWhitespace { position += 1 }
    }

    private func matches(_ symbol: String) -> Bool {
        var index = position
        for character in symbol {
            guard index < characters.count, characters[index] == character else { return false }
            index += 1
        }
        return true
    }

    private mutating func consumeSymbol(_ symbol: String) -> Bool {
        guard matches(symbol) else { return false }
        position += symbol.count
        return true
    }

    /// A keyword is a whole word: `or` but not `order`.
    private func isKeyword(_ word: String) -> Bool {
        guard matches(word) else { return false }
        let after = position + word.count
        return after >= characters.count || !Self.isFieldCharacter(characters[after])
    }

    private mutating func consumeKeyword(_ word: String) -> Bool {
        guard isKeyword(word) else { return false }
        position += word.count
        return true
    }

    private static func isFieldCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "."
    }

    private mutating func readFieldName() -> String {
        let start = position
        while let character = peek, Self.isFieldCharacter(character) { position += 1 }
        return String(characters[start..<position])
    }

    /// A value: `"quoted"` (with `\"` and `\\`), or everything up to a space
    /// or a closing parenthesis.
    private mutating func readValue() throws(QueryError) -> String {
        let start = position
        if consumeSymbol("\"") {
            var text = ""
            while let character = peek {
                position += 1
                if character == "\"" { return text }
                if character == "\\", let next = peek {
                    position += 1
                    text.append(next)
                } else {
                    text.append(character)
                }
            }
            throw QueryError("the quote is never closed", at: start)
        }
        while let character = peek, !character.isWhitespace, character != ")" { position += 1 }
        guard position > start else { throw QueryError("expected a value", at: start) }
        return String(characters[start..<position])
    }
}

extension Field {
    var isBoolean: Bool { self == .archived || { if case .payload = self { return true } else { return false } }() }
}
