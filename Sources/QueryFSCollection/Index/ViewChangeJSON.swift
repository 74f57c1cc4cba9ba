import QueryFSEngine
/// The JSON line `queryfs watch` prints for a view change (SPEC §4): view,
/// deletions (old indexes), insertions (new indexes), moves (from old, to
/// new), updates (old indexes), each with its entry name. Indexes are 0-based.
extension ViewChange {
    package var jsonLine: String {
        func name(_ bytes: [UInt8]?) -> String { JSON.string(String(decoding: bytes ?? [], as: UTF8.self)) }
        let deletions = diff.deletions.map { "{\"index\":\($0),\"name\":\(name(oldNames[$0]))}" }
        let insertions = diff.insertions.map { "{\"index\":\($0),\"name\":\(name(newNames[$0]))}" }
        let moves = diff.moves.map {
            "{\"from\":\($0.from),\"to\":\($0.to),\"name\":\(name(newNames[$0.to])),\"old_name\":\(name(oldNames[$0.from]))}"
        }
        let updates = diff.updates.map { index -> String in
            let newName = updatedTo[index].flatMap { newNames[$0] }
            return "{\"index\":\(index),\"name\":\(name(newName ?? oldNames[index]))}"
        }
        return "{\"view\":\(JSON.string(pathString)),\"deletions\":[\(deletions.joined(separator: ","))],"
            + "\"insertions\":[\(insertions.joined(separator: ","))],\"moves\":[\(moves.joined(separator: ","))],"
            + "\"updates\":[\(updates.joined(separator: ","))]}"
    }
}

package enum JSON {
    /// A JSON string literal. Also a YAML double-quoted scalar and a TOML
    /// basic string (front matter's edits write them with it): what neither
    /// allows raw — DEL, the C1 controls, a byte-order mark — is escaped too.
    package static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // YAML reads U+2028 and U+2029 as line breaks, and U+FFFE/U+FFFF are not printable to it.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0xFEFF
                || scalar.value == 0x2028 || scalar.value == 0x2029 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
