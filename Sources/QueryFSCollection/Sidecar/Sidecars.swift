#if canImport(Glibc)
import Glibc
#endif
import QueryFSEngine

/// Files whose metadata is a sidecar beside them (`sidecars = ["xmp"]`):
/// which names are sidecars, of which file, and how each is read. A sidecar
/// whose file is there is never an item of its own; one left alone is.
package enum SidecarKind: String, CaseIterable, Sendable {
    /// `X.jpg.xmp` (darktable), else `X.xmp` (digiKam, Lightroom).
    case xmp
    /// `X.info.json` (yt-dlp), else `X.json`.
    case json

    /// The names a sidecar of the file `name` may have, in order of preference.
    func candidates(for name: [UInt8]) -> [[UInt8]] {
        let stem = Self.stem(name)
        switch self {
        case .xmp: return [name + Array(".xmp".utf8)] + (stem.count < name.count ? [stem + Array(".xmp".utf8)] : [])
        case .json:
            guard stem.count < name.count else { return [] }
            // What yt-dlp writes beside a video under the video's stem (its
            // thumbnail, description, subtitles, a download in progress) is not
            // the video: `X.info.json` is not theirs, or each was an item with
            // the video's title and tags (found from outside). `X.json` still is.
            if Self.ytDlpSideFileExtensions.contains(Self.extensionLowercased(name)) { return [stem + Array(".json".utf8)] }
            return [stem + Array(".info.json".utf8), stem + Array(".json".utf8)]
        }
    }

    /// Extensions of the files yt-dlp writes beside a video besides its `.info.json`.
    static let ytDlpSideFileExtensions: Set<[UInt8]> = Set(
        ["webp", "jpg", "jpeg", "png", "description", "vtt", "srt", "ass", "ssa", "lrc", "ttml", "srv1", "srv2", "srv3", "json3",
         "part", "ytdl", "temp"].map { Array($0.utf8) })

    private static func extensionLowercased(_ name: [UInt8]) -> [UInt8] {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return [] }
        return Array(name[(dot + 1)...]).lowercasedASCII
    }

    /// Whether `name` has a sidecar's shape (`*.xmp`, `*.json`).
    func isSidecarShaped(_ name: [UInt8]) -> Bool {
        switch self {
        case .xmp: name.lowercasedASCII.hasSuffix(Array(".xmp".utf8))
        case .json: name.lowercasedASCII.hasSuffix(Array(".json".utf8))
        }
    }

    func read(_ bytes: [UInt8]) throws(FrontMatterError) -> PayloadValue {
        switch self {
        case .xmp: return try XMPSidecar.read(bytes)
        case .json:
            do {
                return try JSONParser.parse(bytes)
            } catch {
                throw FrontMatterError(message: "malformed: \(error)")
            }
        }
    }

    /// The name without its last `.ext` (the whole name when it has none).
    static func stem(_ name: [UInt8]) -> [UInt8] {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return name }
        return Array(name[..<dot])
    }
}

/// The sidecar kinds a collection reads, and the rules they make together.
package struct Sidecars: Equatable, Sendable {
    package var kinds: [SidecarKind] = []

    package init(_ kinds: [SidecarKind] = []) { self.kinds = kinds }

    var isEmpty: Bool { kinds.isEmpty }

    /// Every sidecar name the file `name` may have, by preference: none
    /// longer than a name can be (found from outside: a photo with a
    /// 255-byte name stopped at `X.jpg.xmp`'s "File name too long" and never
    /// read its `X.xmp`; one without an extension got that as a problem).
    func candidates(for name: [UInt8]) -> [(SidecarKind, [UInt8])] {
        kinds.flatMap { kind in
            kind.candidates(for: name).filter { $0 != name && $0.count <= Int(NAME_MAX) }.map { (kind, $0) }
        }
    }

    func isSidecarShaped(_ name: [UInt8]) -> Bool { kinds.contains { $0.isSidecarShaped(name) } }

    /// The files among `names` (one folder's) that `sidecar` would belong to.
    func owners(of sidecar: [UInt8], among names: Set<[UInt8]>) -> [[UInt8]] {
        guard isSidecarShaped(sidecar) else { return [] }
        return names.filter { name in name != sidecar && !isSidecarShaped(name) && candidates(for: name).contains { $0.1 == sidecar } }.sorted {
            $0.lexicographicallyPrecedes($1)
        }
    }

    /// The entries of one folder that are sidecars of another entry there: not items.
    func sidecarNames(among names: [[UInt8]]) -> Set<[UInt8]> {
        guard !isEmpty else { return [] }
        let present = Set(names)
        var found = Set<[UInt8]>()
        for name in names where !isSidecarShaped(name) {
            for (_, candidate) in candidates(for: name) where present.contains(candidate) { found.insert(candidate) }
        }
        return found
    }
}

extension Array where Element == UInt8 {
    var lowercasedASCII: [UInt8] { map { (65...90).contains($0) ? $0 + 32 : $0 } }

    func hasSuffix(_ suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}

/// A file's sidecar as read: which kind, its name in the file's folder, and its bytes and status.
struct SidecarRead {
    let kind: SidecarKind
    let name: [UInt8]
    let contents: Result<([UInt8], FileStatus), SystemError>

    /// The first sidecar of `file` in `folderFD` that exists (nil: none).
    /// One open per candidate name: a file without a sidecar costs two or three.
    static func find(for file: [UInt8], in folderFD: Int32, sidecars: Sidecars) -> SidecarRead? {
        for (kind, candidate) in sidecars.candidates(for: file) {
            let limit = kind == .xmp ? XMPSidecar.limit : 16 << 20
            let read = candidate.withCString { cName in
                Result { () throws(SystemError) -> ([UInt8], FileStatus) in
                    let status = try FileStatus(cName, in: folderFD)
                    let bytes = try DirectoryReader.readFile(cName, in: folderFD, expectedSize: Int(clamping: status.size), limit: limit)
                    return (bytes, status)
                }
            }
            if case .failure(let error) = read, error.errno == ENOENT { continue }
            return SidecarRead(kind: kind, name: candidate, contents: read)
        }
        return nil
    }
}
