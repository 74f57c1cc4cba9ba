import QueryFSEngine

/// A TOML front-matter block (Hugo's `+++`) as a payload value, read as
/// `.queryfs.toml` is: the same refusals first (`Configuration.checkTOML`),
/// then toml++ (`TOMLDocument`, which says why not through TOMLKit's types).
enum TOMLFrontMatter {
    static func read(_ text: String) throws(FrontMatterError) -> PayloadValue {
        do {
            _ = try Configuration.checkTOML(text, file: "front matter")
        } catch {
            throw FrontMatterError(message: "not TOML: \(error.message) (line \(error.line))")
        }
        do {
            return .dictionary(try TOMLDocument.read(text))
        } catch {
            throw FrontMatterError(message: "not TOML: \(error.message) (line \(error.line))")
        }
    }
}
