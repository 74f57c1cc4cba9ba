/// The view a mistyped VIEW most likely meant (`by-nmae` → `by-name`): for
/// the one line a command fails with (found from outside: it said only
/// "unknown field 'by'", read as a query).
package enum NearestView {
    /// The path among `paths` within two edits of `typed` (letters added,
    /// removed, changed or swapped), the closest; nil when none is, or when
    /// `typed` reads as a query (it holds a blank or a `:`).
    package static func suggestion(for typed: String, among paths: [String]) -> String? {
        guard !typed.contains(" "), !typed.contains(":") else { return nil }
        let typedCharacters = Array(typed)
        var best: (path: String, distance: Int)?
        for path in paths {
            let distance = Self.distance(typedCharacters, Array(path))
            if distance <= 2, distance < best?.distance ?? .max { best = (path, distance) }
        }
        return best?.path
    }

    /// Optimal string alignment distance (Damerau–Levenshtein without
    /// repeated edits of one stretch): two rows, the names are short.
    package static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], before[j - 2] + 1) }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
