import QueryFSEngine

/// A TOML front-matter block (Hugo's `+++`) as a payload value, read as
/// `.queryfs.toml` is: the same refusals first (`Configuration.checkTOML`),
/// then toml++ (`TOMLDocument`, which says why not through TOMLKit's types).
enum TOMLFrontMatter {
    /// `firstLine`: the note's line the block starts on, so that a mistake
    /// is reported at its line in the note, not in the block.
    static func read(_ text: String, firstLine: Int = 1) throws(FrontMatterError) -> PayloadValue {
        do {
            _ = try Configuration.checkTOML(text, file: "front matter")
        } catch {
            throw FrontMatterError(message: "not TOML: \(error.message) (line \(error.line + firstLine - 1))")
        }
        do {
            return .dictionary(try TOMLDocument.read(text))
        } catch {
            throw FrontMatterError(message: "not TOML: \(error.message) (line \(error.line + firstLine - 1))")
        }
    }
}
