// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "queryfs",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "queryfs", targets: ["queryfs"]),
        .library(name: "QueryFS", targets: ["QueryFS"]),
        // For Fuzz/ only (a package of its own, so it sees only what is
        // public): the collection, whose public face is the `Fuzzing` SPI.
        .library(name: "QueryFSFuzzEntryPoints", targets: ["QueryFSCollection"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The configuration file is TOML 1.0, read by toml++ through TOMLKit.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The mount logs through swift-log; the command picks where lines go.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),  // LogHandler.log(event:)
        // Front matter of Markdown notes is YAML (or TOML, above): read by libyaml through Yams.
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        // `swift package generate-documentation --target QueryFS`: the library's DocC catalog.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libfuse3 as a Swift module: a module map plus a shim header.
        .systemLibrary(
            name: "CFuse",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        // Expat, for XMP sidecars (RDF/XML): a maintained parser; documents
        // with a DTD are refused, so no entity is ever declared (XMPSidecar).
        .systemLibrary(
            name: "CExpat",
            pkgConfig: "expat",
            providers: [.apt(["libexpat1-dev"])]
        ),
        // Linux calls Swift's Glibc module lacks (statx, renameat2).
        .target(name: "CSystemShims"),
        // The one call TOMLKit lacks: deleting a parsed toml++ table (TOMLFrontMatter).
        .target(name: "CTOMLRelease", dependencies: [.product(name: "TOMLKit", package: "TOMLKit")]),
        // The layers, each a module that sees only the ones below it
        // (ARCHITECTURE.md draws the graph). Internals are `package`:
        // visible to the other targets of this package, never to users.
        //
        // The engine: items, fields, payload values and their parsers,
        // queries, views, naming. Bytes in, values out: no files, no threads.
        .target(name: "QueryFSEngine"),
        // The collection: BACKING read, watched, indexed, coordinated and
        // edited (catalog, configuration, live index, index file, watcher,
        // coordination, edits, the system calls they share).
        .target(
            name: "QueryFSCollection",
            dependencies: ["QueryFSEngine", "CSystemShims", "CExpat", "CTOMLRelease", .product(name: "TOMLKit", package: "TOMLKit"),
                           .product(name: "Yams", package: "Yams"), .product(name: "Logging", package: "swift-log")]
        ),
        // The mount: the FUSE filesystem over a live collection.
        .target(
            name: "QueryFSMount",
            dependencies: ["QueryFSEngine", "QueryFSCollection", "CFuse", "CSystemShims",
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The library users import: a live, sorted, filtered collection,
        // its changes ready for a list view, coordinated reads and writes.
        .target(
            name: "QueryFS",
            dependencies: ["QueryFSEngine", "QueryFSCollection", .product(name: "Logging", package: "swift-log")]
        ),
        // The command: argument parsing and wiring only.
        .executableTarget(
            name: "queryfs",
            dependencies: [
                "QueryFS", "QueryFSEngine", "QueryFSCollection", "QueryFSMount",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Deterministic sample reading list (Hipstapaper format).
        .executableTarget(
            name: "queryfs-sample",
            dependencies: [],
            path: "examples/generate"
        ),
        // The library's sample program: a terminal list of a view that
        // animates inserts, moves and deletes, and edits the selected item.
        .executableTarget(
            name: "queryfs-live-list",
            dependencies: ["QueryFS"],
            path: "examples/live-list"
        ),
        // Benchmarks that need in-process measurements (scan, memory).
        .executableTarget(
            name: "queryfs-bench",
            dependencies: ["QueryFSEngine", "QueryFSCollection", "QueryFSMount", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/queryfs-bench"
        ),
        // Fixture builders both test targets use.
        .target(
            name: "QueryFSTestSupport",
            path: "Tests/Support"
        ),
        .testTarget(
            name: "QueryFSTests",
            dependencies: ["QueryFS", "QueryFSEngine", "QueryFSCollection", "QueryFSMount", "CSystemShims", "QueryFSTestSupport"]
        ),
        // The library as its users see it: `import QueryFS`, nothing `@testable`
        // (and the fixture builders every test target shares).
        .testTarget(
            name: "LibraryTests",
            dependencies: ["QueryFS", "QueryFSTestSupport"]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["QueryFS", "QueryFSEngine", "QueryFSCollection", "QueryFSMount", "QueryFSTestSupport"]
        ),
    ]
)
