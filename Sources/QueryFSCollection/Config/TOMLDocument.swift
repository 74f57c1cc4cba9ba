#if canImport(Glibc)
import Glibc
#endif
import CTOML
import CTOMLRelease
import QueryFSEngine

/// A TOML document (`.queryfs.toml`, a note's `+++` front matter) parsed by
/// toml++ and walked through its C interface, which TOMLKit ships as the
/// module `CTOML`: every value copied out as a payload value, every
/// allocation freed.
///
/// Why not TOMLKit's Swift types: TOMLKit 0.6.0 frees nothing.
/// `TOMLTable(string:)` never deletes the table it parsed, and every key
/// list, string, number and date it hands out is a `malloc` or `strdup` no
/// one frees. Measured at 100,000 notes (15 % TOML) with every view listed,
/// a mount that scanned held 104 MB where one that took the same items from
/// its index held 62 MB: the leaked toml++ nodes, one small tree per TOML
/// note among the scan's freed memory, kept its pages resident (a census of
/// the heap blocks lying between free ones found toml++ vtables in most);
/// and every edit of a TOML note, every reload of the configuration, leaked
/// again. Read here, the same mount holds 78 MB (83 MB with the nodes freed
/// but the root table left: each leaked root pinned a page of freed memory;
/// `qfs_toml_table_delete` deletes it, as CTOML has no call for that).
///
/// Callers check the text first (`Configuration.checkTOML`): toml++ must
/// not see the inputs its parser assumes away.
enum TOMLDocument {
    struct ParseError: Error {
        let message: String
        let line: Int
        let column: Int
    }

    /// The document's top-level table.
    static func read(_ text: String) throws(ParseError) -> [String: PayloadValue] {
        // Written by CTOML when the parse fails, read only then.
        let error = UnsafeMutablePointer<CTOMLParseError>.allocate(capacity: 1)
        defer { error.deallocate() }
        guard let root = text.withCString({ tableCreateFromString($0, error) }) else {
            let message = String(cString: error.pointee.description)
            free(UnsafeMutableRawPointer(mutating: error.pointee.description))  // strdup'd by CTOML
            throw ParseError(message: message, line: Int(error.pointee.source.begin.line), column: Int(error.pointee.source.begin.column))
        }
        defer { qfs_toml_table_delete(UnsafeMutableRawPointer(root)) }
        guard case .dictionary(let top) = table(root) else { return [:] }
        return top
    }

    /// TOML nests no deeper than its text, which callers bound (`FrontMatter.Limits.headBytes`, the configuration file's size).
    private static func table(_ table: OpaquePointer) -> PayloadValue {
        let count = tableSize(table)
        guard count > 0 else { return .dictionary([:]) }
        // Both malloc'd arrays, the keys strdup'd each, in the same order.
        let keys = tableGetKeys(table)
        let values = tableGetValues(table)
        defer {
            for index in 0..<count { free(UnsafeMutablePointer(mutating: keys[index])) }
            free(UnsafeMutableRawPointer(mutating: keys))
            free(UnsafeMutableRawPointer(mutating: values))
        }
        var dictionary: [String: PayloadValue] = [:]
        dictionary.reserveCapacity(count)
        for index in 0..<count {
            dictionary[String(cString: keys[index])] = value(values[index])
        }
        return .dictionary(dictionary)
    }

    private static func value(_ node: OpaquePointer) -> PayloadValue {
        switch nodeType(node) {
        case .table:
            return nodeAsTable(node).map(table) ?? .null
        case .array:
            guard let array = nodeAsArray(node) else { return .null }
            return .array((0..<arraySize(array)).map { value(arrayGetNode(array, Int64($0))) })
        case .string:
            return taking(nodeAsString(node)) { .string(String(cString: $0)) }
        case .integer:
            return taking(nodeAsInt(node)) { .integer($0.pointee) }
        case .floatingPoint:
            return taking(nodeAsDouble(node)) { .real($0.pointee) }
        case .boolean:
            return taking(nodeAsBool(node)) { .bool($0.pointee) }
        case .date:
            return taking(nodeAsDate(node)) { pointer in
                let text = isoDate(pointer.pointee)
                return ISO8601.parse(text).map(PayloadValue.date) ?? .string(text)
            }
        case .timeType:
            return taking(nodeAsTime(node)) { pointer in
                let time = pointer.pointee
                return .string(pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2))
            }
        case .dateTime:
            return taking(nodeAsDateTime(node)) { pointer in
                let dateTime = pointer.pointee
                let time = dateTime.time
                var text = isoDate(dateTime.date) + "T" + pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2)
                if let offset = dateTime.offset {
                    let minutes = Int(offset.pointee.minutes)
                    text += (minutes < 0 ? "-" : "+") + pad(abs(minutes) / 60, 2) + ":" + pad(abs(minutes) % 60, 2)
                    qfs_toml_offset_delete(offset)  // made with C++ `new`
                }
                return ISO8601.parse(text).map(PayloadValue.date) ?? .string(text)
            }
        }
    }

    /// A value CTOML copied into a fresh allocation, read and then freed.
    private static func taking<T>(_ pointer: UnsafePointer<T>?, _ read: (UnsafePointer<T>) -> PayloadValue) -> PayloadValue {
        guard let pointer else { return .null }
        defer { free(UnsafeMutableRawPointer(mutating: pointer)) }
        return read(pointer)
    }

    private static func isoDate(_ date: CTOMLDate) -> String { pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) }

    private static func pad(_ number: some BinaryInteger, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension PayloadValue {
    /// The value as TOMLKit's accessors gave it: nil when of another type.
    var tomlString: String? { if case .string(let text) = self { text } else { nil } }
    var tomlBool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    var tomlTable: [String: PayloadValue]? { if case .dictionary(let table) = self { table } else { nil } }
    var tomlArray: [PayloadValue]? { if case .array(let elements) = self { elements } else { nil } }
}
