import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Views whose entries are freedesktop links (issue 32, "Open the item"):
/// `desktop-entries` in `.queryfs.toml` makes `NNNN Title.desktop` files of
/// `Type=Link`, which a file manager's double-click opens in the browser;
/// `rm`, `mv` and `ln -s` edit through them as through symlinks.
final class DesktopEntryMountTests: MountTestCase {
    private static let configuration = "desktop-entries = [\"by-name\", \"tag/*\"]\n"

    /// A Hipstapaper payload with a web address.
    private static func payload(title: String, url: String?, tags: [String]) -> [UInt8] {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        }
        let location = url.map { "<key>webLocation</key><dict><key>relative</key><string>\(escaped($0))</string></dict>" } ?? ""
        let tagXML = tags.map { "<string>\(escaped($0))</string>" }.joined()
        return Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>isArchived</key><false/>
            <key>tags</key><array>\(tagXML)</array>
            <key>webTitle</key><string>\(escaped(title))</string>\(location)
            </dict></plist>
            """.utf8)
    }

    /// A title a saved page could carry: a leading space, a line break and a would-be launcher line.
    private static let hostileTitle = " Two\nExec=touch /tmp/queryfs-desktop-pwned\\x"

    private func mount(configured: Bool = true) throws {
        fixture = MountedFixture { corpus in
            func item(_ name: String, _ title: String, _ url: String?, _ tags: [String], _ mtime: Int) {
                mkdir(corpus.path + "/" + name, 0o755)
                corpus.write(corpus.path + "/\(name)/payload.plist", Self.payload(title: title, url: url, tags: tags))
                corpus.setMTime(corpus.path + "/\(name)/payload.plist", mtime)
            }
            item("a.hpwebsite", "Alpha", "https://a.example/page?q=1&r=2", ["t"], 5_000)
            corpus.write(corpus.path + "/a.hpwebsite/image.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
            item("b.hpwebsite", Self.hostileTitle, "file:///usr/bin/xterm", ["t", "u"], 4_000)
            item("c.hpwebsite", "Gamma", nil, [], 3_000)
            if configured { corpus.write(corpus.path + "/.queryfs.toml", Array(Self.configuration.utf8)) }
        }
        try fixture.mount(["--log", fixture.root + "/mount.log"])
    }

    /// The desktop file's keys as Python's configparser reads it (an
    /// independent reader of the INI syntax), with `Desktop Entry` its only group.
    private func keys(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let script = """
            import configparser, json, sys
            parser = configparser.ConfigParser(interpolation=None, strict=True)
            parser.optionxform = str
            parser.read(sys.argv[1], encoding="utf-8")
            print(json.dumps({"groups": parser.sections(), "keys": dict(parser["Desktop Entry"])}))
            """
        let result = Program.run(["python3", "-c", script, path])
        XCTAssertEqual(result.status, 0, result.stderrText, file: file, line: line)
        let parsed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdoutText.utf8)) as? [String: Any], file: file, line: line)
        XCTAssertEqual(parsed["groups"] as? [String], ["Desktop Entry"], file: file, line: line)
        return try XCTUnwrap(parsed["keys"] as? [String: String], file: file, line: line)
    }

    private func entry(_ view: String, _ suffix: String) throws -> String {
        try XCTUnwrap((RawFiles.list(fixture.mounted(view)) ?? []).map(\.text).first { $0.hasSuffix(suffix) }, "\(suffix) in \(view)")
    }

    private func tags(_ item: String) throws -> [String] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.backed("\(item)/payload.plist")))
        let plist = try XCTUnwrap(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        return plist["tags"] as? [String] ?? []
    }

    private func title(_ item: String) throws -> String? {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: fixture.backed("\(item)/payload.plist")))
        return try XCTUnwrap(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])["webTitle"] as? String
    }

    private func assertEveryViewIsCurrent(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ViewComparison.settle(backing: fixture.backing, mountPoint: fixture.mountPoint, timeout: 15), [], what,
                       file: file, line: line)
    }

    func testConfiguredViewsHoldDesktopLinksToTheirPages() throws {
        try mount()
        // (The title's leading space sorts it first.)
        XCTAssertEqual(ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "by-name"),
                       ["0001 Two Exec=touch ∕tmp∕queryfs-desktop-pwned\\x.desktop", "0002 Alpha.desktop", "0003 Gamma.desktop"])
        // Views not named keep their symlinks.
        XCTAssertNotNil(RawFiles.linkTarget(fixture.mounted("by-modified/0001 Alpha.hpwebsite")))
        assertEveryViewIsCurrent("queryfs ls names the entries as the mount does")

        let alpha = fixture.mounted("by-name/0002 Alpha.desktop")
        var status = stat()
        XCTAssertEqual(lstat(alpha, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG)
        XCTAssertEqual(status.st_mode & 0o7777, 0o444, "never executable: a shell would run it as a script")
        let text = try XCTUnwrap(FileManager.default.contents(atPath: alpha))
        XCTAssertEqual(Int(status.st_size), text.count, "the size is the text's")
        XCTAssertEqual(try keys(alpha), ["Type": "Link", "Name": "Alpha", "URL": "https://a.example/page?q=1&r=2",
                                         "Icon": fixture.mounted("bundles/a.hpwebsite/image.jpg")])
        // No address: the item itself; a file: address is not handed on.
        XCTAssertEqual(try keys(fixture.mounted("by-name/0003 Gamma.desktop"))["URL"], "file://" + fixture.mounted("bundles/c.hpwebsite"))
        let hostile = try keys(fixture.mounted("by-name/" + (try entry("by-name", "pwned\\x.desktop"))))
        XCTAssertEqual(Set(hostile.keys), ["Type", "Name", "URL", "Icon"], "a title adds no key")
        XCTAssertEqual(hostile["Name"], "\\sTwo\\nExec=touch /tmp/queryfs-desktop-pwned\\\\x", "escaped as the specification's strings")
        XCTAssertEqual(hostile["URL"], "file://" + fixture.mounted("bundles/b.hpwebsite"))
        XCTAssertEqual(hostile["Icon"], "text-html")
        XCTAssertEqual(try keys(fixture.mounted("tag/t/" + (try entry("tag/t", " Alpha.desktop"))))["Type"], "Link")

        // Read-only, and no link.
        XCTAssertEqual(open(alpha, O_WRONLY), -1)
        XCTAssertEqual(errno, EACCES)
        XCTAssertEqual(truncate(alpha, 0), -1)
        var buffer = [CChar](repeating: 0, count: 64)
        XCTAssertEqual(readlink(alpha, &buffer, buffer.count), -1)
        XCTAssertEqual(errno, EINVAL)
        XCTAssertEqual(try title("a.hpwebsite"), "Alpha", "nothing written")
    }

    func testEditsWorkOnDesktopEntriesAsOnSymlinks() throws {
        try mount()
        // rm in a tag folder untags.
        XCTAssertEqual(unlink(fixture.mounted("tag/u/" + (try entry("tag/u", ".desktop")))), 0, String(cString: strerror(errno)))
        XCTAssertEqual(try tags("b.hpwebsite"), ["t"])
        XCTAssertEqual(rmdir(fixture.mounted("tag/u")), 0, "emptied by rm, the folder stays until rmdir")
        // mv within a view retitles: the rank and `.desktop` are not the title.
        XCTAssertEqual(rename(fixture.mounted("by-name/0003 Gamma.desktop"), fixture.mounted("by-name/0003 Delta.desktop")), 0)
        XCTAssertEqual(try title("c.hpwebsite"), "Delta")
        XCTAssertNotNil(RawFiles.lstat(fixture.mounted("by-name/0003 Delta.desktop")))
        // ln -s into a desktop view joins; the entry then reads as a desktop file.
        XCTAssertEqual(symlink("../../bundles/c.hpwebsite", fixture.mounted("tag/t/any name")), 0, String(cString: strerror(errno)))
        XCTAssertEqual(try tags("c.hpwebsite"), ["t"])
        let delta = fixture.mounted("tag/t/" + (try entry("tag/t", " Delta.desktop")))
        var status = stat()
        XCTAssertEqual(lstat(delta, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG, "the node the kernel made for the link is replaced")
        XCTAssertEqual(try keys(delta)["Name"], "Delta")
        // mv from a view into a tag folder joins (by-name/ cannot be left).
        XCTAssertEqual(mkdir(fixture.mounted("tag/new"), 0o755), 0)
        XCTAssertEqual(rename(fixture.mounted("by-name/0002 Alpha.desktop"), fixture.mounted("tag/new/0002 Alpha.desktop")), 0)
        XCTAssertEqual(try tags("a.hpwebsite"), ["t", "new"])
        assertEveryViewIsCurrent("after the edits")
        // Each edit journaled: undo takes the last back.
        XCTAssertEqual(QueryfsBinary.run(["undo", fixture.backing]).status, 0)
        XCTAssertEqual(try tags("a.hpwebsite"), ["t"])
    }

    func testADesktopViewRaisesEventsForItsEntries() throws {
        try mount()
        let watch = EventWatch([fixture.mounted("by-name")])
        Corpus(path: fixture.backing).bundle("n.hpwebsite", title: "Aardvark", mtime: 6_000)
        XCTAssertTrue(watch.waitFor(in: fixture.mounted("by-name"), timeout: 15) { $0.kinds.contains("CREATE") && $0.name == "0002 Aardvark.desktop" },
                      "\(watch.events(in: fixture.mounted("by-name")))")
        var status = stat()
        XCTAssertEqual(lstat(fixture.mounted("by-name/0002 Aardvark.desktop"), &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG)
        XCTAssertEqual(try keys(fixture.mounted("by-name/0002 Aardvark.desktop"))["Name"], "Aardvark")
    }

    func testTheConfigurationTurnsViewsIntoDesktopEntriesAndBack() throws {
        try mount(configured: false)
        XCTAssertNotNil(RawFiles.linkTarget(fixture.mounted("tag/t/0001 Alpha.hpwebsite")))
        Corpus(path: fixture.backing).write(fixture.backed(".queryfs.toml"), Array(Self.configuration.utf8))
        // (A reload waits for the file to settle; a busy machine takes its time.)
        XCTAssertTrue(eventually(timeout: 15) { ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "tag/t").first == "0001 Alpha.desktop" },
                      "\(ViewComparison.mounted(mountPoint: fixture.mountPoint, view: "tag/t"))")
        XCTAssertEqual(try keys(fixture.mounted("tag/t/0001 Alpha.desktop"))["Name"], "Alpha")
        assertEveryViewIsCurrent("desktop entries configured while mounted")
        XCTAssertEqual(unlink(fixture.backed(".queryfs.toml")), 0)
        XCTAssertTrue(eventually(timeout: 15) { RawFiles.linkTarget(fixture.mounted("by-name/0001 Alpha.hpwebsite")) != nil })
        assertEveryViewIsCurrent("back to symlinks")
    }

    func testABadPatternIsOneClearLine() throws {
        try mount(configured: false)
        Corpus(path: fixture.backing).write(fixture.backed(".queryfs.toml"), Array("desktop-entries = [\"\"]\n".utf8))
        let result = QueryfsBinary.run(["views", fixture.backing])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderrText.contains(".queryfs.toml:1:"), result.stderrText)
        XCTAssertTrue(result.stderrText.contains("view path pattern"), result.stderrText)
    }
}
