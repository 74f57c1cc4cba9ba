// queryfs-sample: writes a deterministic sample collection for the README's
// demo, for benchmarks and for trying queryfs on the shapes of folders people
// already have. The default is a Hipstapaper reading list —
// `<UUID>.hpwebsite/payload.plist`, sometimes `image.jpg`.
//
//   queryfs-sample [--shape SHAPE] [--count N] [--seed S] [--folders N] OUTDIR
//
// The same shape, count, seed and folders always give the same names,
// contents and mtimes. Each shape lives in a file of its own here
// (Hipstapaper.swift, Notes.swift, ArchiveBox.swift, Photos.swift,
// YtDlp.swift); Support.swift holds what they share.

#if canImport(Glibc)
import Glibc
#endif

let usage = "usage: queryfs-sample [--shape SHAPE] [--count N] [--seed S] [--folders N] OUTDIR"

let help = """
    \(usage)

    Writes COUNT items (default 48) of a sample collection into OUTDIR; the
    same arguments always give the same files, contents and mtimes.

    Shapes:
      hipstapaper  <UUID>.hpwebsite/payload.plist bundles (the default)
      notes        an Obsidian-like vault: Markdown notes in nested folders with
                   YAML or TOML front matter, .obsidian/, .trash/, attachments/,
                   and a .queryfs.toml with recursive = true
      archivebox   archive/<timestamp>/index.json and index.html
      photos       YYYY/MM/IMG_NNNN.jpg with darktable (.jpg.xmp) and
                   digiKam (.xmp) sidecars
      ytdlp        Title [ID].mp4 beside Title [ID].info.json

    --folders N    notes: the number of folders (default COUNT/100, at least 1);
                   photos: the dates span the last N months (default 24)
    """

/// The shapes, in the order help lists them.
enum Shape: String, CaseIterable {
    case hipstapaper, notes, archivebox, photos, ytdlp
}

struct Options {
    var shape = Shape.hipstapaper
    var count = 48
    var seed: UInt64 = 1
    var folders: Int?  // nil: the shape's default
    var output = ""
}

/// One clear line and exit status 2 for anything wrong, as before shapes existed.
func parseOptions(_ arguments: ArraySlice<String>) -> Options {
    var options = Options()
    var output: String?
    var arguments = arguments.makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--shape":
            let names = Shape.allCases.map(\.rawValue).joined(separator: ", ")
            guard let value = arguments.next() else { die("--shape takes one of: \(names)") }
            guard let shape = Shape(rawValue: value) else { die("unknown shape '\(value)' (shapes: \(names))") }
            options.shape = shape
        case "--count":
            guard let value = arguments.next().flatMap({ Int($0) }), value >= 0 else { die("--count takes a number") }
            options.count = value
        case "--seed":
            guard let value = arguments.next().flatMap({ UInt64($0) }) else { die("--seed takes a number") }
            options.seed = value
        case "--folders":
            guard let value = arguments.next().flatMap({ Int($0) }), value >= 1 else {
                die("--folders takes a number of at least 1")
            }
            options.folders = value
        case "-h", "--help":
            print(help)
            exit(0)
        default:
            guard output == nil, !argument.hasPrefix("-") else { die("unexpected argument '\(argument)'") }
            output = argument
        }
    }
    guard let output else { die(usage) }
    // Refused rather than ignored: a --folders that changes nothing would
    // look like a bug in the output.
    if options.folders != nil && options.shape != .notes && options.shape != .photos {
        die("--folders applies to --shape notes and --shape photos")
    }
    options.output = output
    return options
}

let options = parseOptions(CommandLine.arguments.dropFirst())
switch options.shape {
case .hipstapaper:
    writeHipstapaper(to: options.output, count: options.count, seed: options.seed)
case .notes:
    writeNotes(to: options.output, count: options.count, seed: options.seed,
               folders: options.folders ?? max(1, options.count / 100))
case .archivebox:
    writeArchiveBox(to: options.output, count: options.count, seed: options.seed)
case .photos:
    writePhotos(to: options.output, count: options.count, seed: options.seed, months: options.folders ?? 24)
case .ytdlp:
    writeYtDlp(to: options.output, count: options.count, seed: options.seed)
}
