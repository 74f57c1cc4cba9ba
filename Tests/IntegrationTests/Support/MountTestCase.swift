import XCTest

/// A test case that mounts: `fixture` is unmounted after each test, however
/// the test ended, and a mount left behind is a failure.
class MountTestCase: XCTestCase {
    var fixture: MountedFixture!

    override func tearDown() {
        fixture?.unmount()
        if let fixture { XCTAssertFalse(MountTable.isMounted(fixture.mountPoint), "left mounted") }
        fixture = nil
        super.tearDown()
    }
}
