import XCTest
@testable import QueryFSEngine
@testable import QueryFSCollection

/// The text of desktop entries, and the setting that asks for them.
final class DesktopEntryTextTests: XCTestCase {
    private func text(_ title: String, _ url: String?, path: [UInt8] = Array("/m/bundles/x".utf8), icon: String? = nil) -> String {
        String(decoding: DesktopEntryText.make(title: title, url: url, itemPath: path, icon: icon), as: UTF8.self)
    }

    func testALinkToThePage() {
        XCTAssertEqual(text("Alpha", "https://a.example/?q=1", icon: "/m/bundles/x/image.jpg"),
                       "[Desktop Entry]\nType=Link\nName=Alpha\nURL=https://a.example/?q=1\nIcon=/m/bundles/x/image.jpg\n")
    }

    /// Nothing in a title or URL can start a line of its own.
    func testValuesAreEscapedAndControlCharactersDropped() {
        let made = text(" a\nExec=x\r\t\\b\u{7}\u{7F}c", "https://e.example/\nExec=y")
        XCTAssertEqual(made.split(separator: "\n").map(String.init),
                       ["[Desktop Entry]", "Type=Link", "Name=\\sa\\nExec=x\\r\\t\\\\bc", "URL=file:///m/bundles/x"])
    }

    func testOnlyOfferedSchemesAreHandedOn() {
        for url in ["http://a", "HTTPS://a", "mailto:a@b", "ftp://a", "gemini://a"] { XCTAssertTrue(DesktopEntryText.isOffered(url), url) }
        for url in ["file:///usr/bin/xterm", "javascript:alert(1)", "data:text/html,x", "no scheme", "", "smb://host/share", "https://a\tb"] {
            XCTAssertFalse(DesktopEntryText.isOffered(url), url)
        }
        XCTAssertTrue(text("t", "javascript:alert(1)").contains("URL=file:///m/bundles/x\n"))
    }

    /// The item's path as a file URL, whatever bytes its name holds.
    func testTheItemsPathIsPercentEncoded() {
        XCTAssertEqual(DesktopEntryText.fileURL(path: Array("/m n/b%c/ä".utf8) + [0xFF, 0x0A]), "file:///m%20n/b%25c/%C3%A4%FF%0A")
    }

    func testTheSettingNamesViewsByPattern() throws {
        let configuration = try Configuration(parsing: "desktop-entries = [\"by-name\", \"tag/*\"]\n", file: "q.toml", now: .now)
        let views = configuration.viewSet
        XCTAssertTrue(views.entryTitle(forPath: ["by-name"]).desktopFile)
        XCTAssertTrue(views.entryTitle(forPath: ["tag", "a/b"]).desktopFile, "nested tag folders too")
        XCTAssertFalse(views.entryTitle(forPath: ["by-modified"]).desktopFile)
        XCTAssertTrue(views.fixed.first { $0.path == ["by-name"] }!.entryTitle.desktopFile)
        XCTAssertEqual(views.entryTitle(forPath: ["conflicts"]).source, .clashingItem)
        XCTAssertThrowsError(try Configuration(parsing: "desktop-entries = 3\n", file: "q.toml", now: .now))
        XCTAssertThrowsError(try Configuration(parsing: "desktop-entries = [\"/abs\"]\n", file: "q.toml", now: .now))
    }
}
