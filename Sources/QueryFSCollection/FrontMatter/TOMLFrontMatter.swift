import QueryFSEngine
import TOMLKit

/// A TOML front-matter block (Hugo's `+++`) as a payload value, read as
/// `.queryfs.toml` is (`Configuration.parseTOML`: the same checks before
/// toml++ sees the text).
enum TOMLFrontMatter {
    static func read(_ text: String) throws(FrontMatterError) -> PayloadValue {
        let table: TOMLTable
        do {
            table = try Configuration.parseTOML(text, file: "front matter").0
        } catch {
            throw FrontMatterError(message: "not TOML: \(error.message) (line \(error.line))")
        }
        var depth = 0
        return value(of: table, depth: &depth)
    }

    /// TOML nests no deeper than its text, which is bounded (`FrontMatter.Limits.headBytes`).
    private static func value(of value: any TOMLValueConvertible, depth: inout Int) -> PayloadValue {
        switch value.type {
        case .table:
            var dictionary: [String: PayloadValue] = [:]
            for (key, element) in value.table! { dictionary[key] = self.value(of: element, depth: &depth) }
            return .dictionary(dictionary)
        case .array:
            return .array(value.array!.map { self.value(of: $0, depth: &depth) })
        case .string: return .string(value.string!)
        case .int: return .integer(Int64(value.int!))
        case .double: return .real(value.double!)
        case .bool: return .bool(value.bool!)
        case .date:
            let date = value.date!
            return ISO8601.parse(isoDate(date)).map(PayloadValue.date) ?? .string(isoDate(date))
        case .dateTime:
            let dateTime = value.dateTime!
            let time = dateTime.time
            var text = isoDate(dateTime.date) + "T" + pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2)
            if let offset = dateTime.offset {
                let minutes = offset.offset
                text += (minutes < 0 ? "-" : "+") + pad(abs(minutes) / 60, 2) + ":" + pad(abs(minutes) % 60, 2)
            }
            return ISO8601.parse(text).map(PayloadValue.date) ?? .string(text)
        case .time:
            let time = value.time!
            return .string(pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2))
        }
    }

    private static func isoDate(_ date: TOMLDate) -> String { pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) }

    private static func pad(_ number: some BinaryInteger, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
