import XCTest
@testable import QueryFSEngine
@testable import QueryFSMount

/// Which names `mkdir query/NAME` takes for a file manager's placeholder
/// (an empty draft) rather than a mistyped query (EINVAL).
final class QueryDraftNameTests: XCTestCase {
    private func isDraft(_ name: String) -> Bool {
        do {
            _ = try Query(parsing: name, now: .now)
            return false  // a query is saved, never a draft
        } catch {
            return QueryDrafts.isPlaceholder(name, error: error)
        }
    }

    func testEachProgramsPlaceholderInSeveralLanguages() {
        for name in ["Untitled Folder", "untitled folder", "New Folder", "New folder", "Untitled Folder 2",
                     "New Folder (1)", "Neuer Ordner", "Neuer Ordner (2)", "Nouveau dossier", "Nuova cartella",
                     "Новая папка", "Nowy folder 3"] {
            XCTAssertTrue(isDraft(name), name)
        }
    }

    func testMistypedQueriesAndOtherNamesAreNot() {
        for name in ["archived", "tag:linux -archived",  // queries
                     "archived unread", "tags work",        // a field first: a mistyped query
                     "foo", "Untitled", "新建文件夹",          // one word
                     "(tag:a", "Untitled:Folder", "Untitled  Folder", " Untitled Folder", "Untitled Folder ",
                     "Untitled Folder (x)", "Untitled Folder ()", "Untitled-Folder", "Untitled Folder/x", ""] {
            XCTAssertFalse(isDraft(name), "'\(name)'")
        }
    }
}
