import XCTest
@testable import QueryFSEngine

/// `TerminalText`: no name or value printed by a command can forge a line
/// or a field, or reach the terminal as a control sequence.
final class TerminalTextTests: XCTestCase {
    func testControlsAreEscapedAndTheRestKept() {
        XCTAssertEqual(TerminalText.escaped("a\tb\nc\r\\d\u{1B}[2J\u{7F}é"), "a\\tb\\nc\\r\\\\d\\x1b[2J\\x7fé")
        XCTAssertEqual(TerminalText.escaped("say \"hi\"", quoting: true), "say \\\"hi\\\"")
        XCTAssertEqual(TerminalText.escaped("C:\\dir", backslashes: false), "C:\\dir")
        // C1 controls (U+009B is a CSI, U+0085 a line break) and the line separators.
        XCTAssertEqual(TerminalText.escaped("a\u{9B}2J\u{85}b\u{2028}c\u{2029}"), "a\\u{9b}2J\\u{85}b\\u{2028}c\\u{2029}")
        XCTAssertEqual(TerminalText.escaped("plain"), "plain")
    }

    func testBytesOfAnyKindAreEscapedAlike() {
        let name: [UInt8] = Array("a\n".utf8) + [0xFF] + Array("\u{9B}x\u{2028}".utf8) + [0xC2]
        XCTAssertEqual(TerminalText.escaped(name), Array("a\\n".utf8) + [0xFF] + Array("\\u{9b}x\\u{2028}".utf8) + [0xC2])
    }
}
