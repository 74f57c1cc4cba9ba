// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "queryfs",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "queryfs", targets: ["queryfs"]),
        .library(name: "QueryFS", targets: ["QueryFS"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The configuration file is TOML 1.0, read by toml++ through TOMLKit.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The mount logs through swift-log; the command picks where lines go.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),  // LogHandler.log(event:)
    ],
    targets: [
        // libfuse3 as a Swift module: a module map plus a shim header.
        .systemLibrary(
            name: "CFuse",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        // Linux calls Swift's Glibc module lacks (statx, renameat2).
        .target(name: "CSystemShims"),
        // The library: engine, payload parsers, catalog, live index, watcher,
        // coordination and the FUSE filesystem, each in its own folder.
        .target(
            name: "QueryFS",
            dependencies: ["CFuse", "CSystemShims", .product(name: "TOMLKit", package: "TOMLKit"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The command: argument parsing and wiring only.
        .executableTarget(
            name: "queryfs",
            dependencies: [
                "QueryFS",
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
        // Benchmarks that need in-process measurements (scan, memory).
        .executableTarget(
            name: "queryfs-bench",
            dependencies: ["QueryFS", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/queryfs-bench"
        ),
        // Fixture builders both test targets use.
        .target(
            name: "QueryFSTestSupport",
            path: "Tests/Support"
        ),
        .testTarget(
            name: "QueryFSTests",
            dependencies: ["QueryFS", "CSystemShims", "QueryFSTestSupport"]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["QueryFS", "QueryFSTestSupport"]
        ),
    ]
)
