// swift-tools-version: 6.0
// libFuzzer targets for every parser that reads what users and sync tools
// hand queryfs (scripts/fuzz.sh builds and runs them). A package of its
// own, so the fuzzer's instrumentation never reaches the normal build.
import Foundation
import PackageDescription

// A path dependency is known by its folder's name, whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

func target(_ name: String, _ folder: String) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport", .product(name: "QueryFSFuzzEntryPoints", package: root)], path: "Targets/\(folder)")
}

let package = Package(
    name: "queryfs-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // What every target does with its input once parsed: the paths a real mount takes.
        .target(name: "FuzzSupport", dependencies: [.product(name: "QueryFSFuzzEntryPoints", package: root)], path: "Support"),
        target("fuzz-binary-plist", "BinaryPlist"),
        target("fuzz-xml-plist", "XMLPlist"),
        target("fuzz-json", "JSON"),
        target("fuzz-query", "Query"),
        target("fuzz-configuration", "Configuration"),
        target("fuzz-index-file", "IndexFile"),
        target("fuzz-front-matter", "FrontMatter"),
        target("fuzz-xmp", "XMP"),
    ]
)
