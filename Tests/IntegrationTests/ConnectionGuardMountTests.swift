import Foundation
import XCTest
import QueryFSTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A `kill -9` of the daemon never leaves a mount that hangs (`ConnectionGuard`):
/// killed while it serves itself (the event replayer's requests to its own
/// mount, as BACKING changes), it used to keep its connection forever (5 of
/// 10 kills). The guard aborts the connection when the daemon dies, and
/// only then: not a later mount that reuses the connection's number, not
/// because someone else signalled it.
final class ConnectionGuardMountTests: MountTestCase {
    private static let bundleCount = 200

    override func setUpWithError() throws {
        fixture = MountedFixture { corpus in
            for number in 0..<Self.bundleCount {
                corpus.bundle("b\(number).hpwebsite", title: "Title \(number)", tags: ["t\(number % 7)"], mtime: 1_000 + number)
            }
        }
        try fixture.mount()
    }

    /// Six rounds: the bundles' payloads touched in BACKING without pause (so
    /// the replayer keeps making requests to the mount), the daemon killed
    /// 50–300 ms in. Each time every thread of the daemon is gone within 5 s,
    /// the mount answers ENOTCONN instead of waiting, and it unmounts and
    /// mounts again. (Without the guard, 6 rounds pass together 1 time in 64.)
    func testKillingTheDaemonWhileItemsChangeNeverLeavesAMountThatHangs() throws {
        var generator = SplitMix64(seed: 26)
        for round in 0..<6 {
            let pid = try XCTUnwrap(fixture.daemonPID(), "round \(round): no daemon")
            let guardPID = try XCTUnwrap(guardProcess(), "round \(round): no guard in the status file")
            let toucher = Toucher(backing: fixture.backing, count: Self.bundleCount)
            toucher.start()
            usleep(50_000 + UInt32(generator.next() % 250_001))
            kill(pid, SIGKILL)
            let gone = waitUntil(seconds: 5) { Self.livingThreads(of: pid) == 0 }
            toucher.stop()
            if !gone {
                XCTFail("round \(round): the killed daemon still has threads after 5 s: \(Self.threadNames(of: pid))")
                MountedFixture.abortConnection(of: fixture.mountPoint)
                _ = waitUntil(seconds: 5) { Self.livingThreads(of: pid) == 0 }
            }
            // A name never looked up: the mount's root may answer a stat
            // from its cached attributes even once the connection is gone.
            var status = stat()
            XCTAssertEqual(stat(fixture.mounted("never-looked-up-\(round)"), &status), -1, "round \(round)")
            XCTAssertEqual(errno, ENOTCONN, "round \(round)")
            XCTAssertTrue(waitUntil(seconds: 5) { Self.livingThreads(of: guardPID) == 0 }, "round \(round): the guard outlived the daemon")
            XCTAssertEqual(QueryfsBinary.run(["unmount", fixture.mountPoint]).status, 0, "round \(round)")
            try fixture.mount()
            XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, Self.bundleCount, "round \(round)")
        }
    }

    /// Unmounted and mounted again at once, five times: the next mount gets
    /// the same connection number, and the guard of the one before, woken by
    /// its daemon's exit, leaves it alone.
    func testTheGuardOfAnUnmountedMountLeavesTheNextMountAlone() throws {
        for round in 0..<5 {
            let before = try XCTUnwrap(guardProcess())
            XCTAssertEqual(QueryfsBinary.run(["unmount", fixture.mountPoint]).status, 0)
            try fixture.mount()
            XCTAssertTrue(waitUntil(seconds: 5) { Self.livingThreads(of: before) == 0 }, "round \(round): the old guard lives on")
            XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, Self.bundleCount, "round \(round)")
            XCTAssertNotNil(guardProcess(), "round \(round)")
        }
    }

    /// SIGUSR1 (its wake-up) from anyone but the kernel, SIGINT and SIGHUP
    /// (a terminal's): the guard stays, and so does the mount — whether they
    /// come while it starts (blocked, then dropped) or once it is set up
    /// (ignored as they are sent: a signal both blocked and ignored stayed
    /// pending for the guard's life, which CI saw once the guard won the race).
    func testSignalsFromOthersNeitherStopTheGuardNorAbort() throws {
        let guardPID = try XCTUnwrap(guardProcess())
        for signal in [SIGUSR1, SIGINT, SIGHUP, SIGUSR1] {
            XCTAssertEqual(kill(guardPID, signal), 0)
        }
        XCTAssertTrue(eventually { ProcessSignals.hasNoPendingSignals(guardPID) }, "the guard never took its signals")
        XCTAssertTrue(eventually { ProcessSignals.ignores(guardPID, SIGINT) && ProcessSignals.ignores(guardPID, SIGHUP) },
                      "the guard never set its signals up")
        for signal in [SIGINT, SIGHUP, SIGUSR1] {
            XCTAssertEqual(kill(guardPID, signal), 0)
        }
        XCTAssertTrue(eventually { ProcessSignals.hasNoPendingSignals(guardPID) }, "the guard kept signals sent once it was set up")
        XCTAssertEqual(Self.livingThreads(of: guardPID), 1)
        XCTAssertEqual(RawFiles.list(fixture.mounted("by-name"))?.count, Self.bundleCount)
        XCTAssertEqual(guardProcess(), guardPID)
    }

    /// The guard the status file names, if it says it runs.
    private func guardProcess() -> pid_t? {
        guard let data = FileManager.default.contents(atPath: fixture.mounted(".queryfs/status")),
              let status = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let guardStatus = status["connectionGuard"] as? [String: Any], guardStatus["running"] as? Bool == true
        else { return nil }
        return (guardStatus["pid"] as? Int).map { pid_t($0) }
    }

    private func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// Threads of `pid` that are neither zombies nor dead.
    private static func livingThreads(of pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { task in
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8)) ?? ""
            // The state follows the command name's last closing parenthesis.
            return stat.split(separator: ")").last?.split(separator: " ").first.map { $0 != "Z" && $0 != "X" } ?? false
        }.count
    }

    private static func threadNames(of pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
}

/// Touches every bundle's payload in BACKING, round after round, on a thread of its own until stopped.
private final class Toucher: @unchecked Sendable {
    private let backing: String
    private let count: Int
    private let stopping = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(backing: String, count: Int) {
        self.backing = backing
        self.count = count
    }

    func start() {
        Thread.detachNewThread { [self] in
            var second = 10_000
            while !stopping.withLock({ stopped }) {
                for number in 0..<count {
                    second += 1
                    var times = [timespec(tv_sec: second, tv_nsec: 0), timespec(tv_sec: second, tv_nsec: 0)]
                    _ = utimensat(AT_FDCWD, "\(backing)/b\(number).hpwebsite/payload.plist", &times, 0)
                }
            }
            done.signal()
        }
    }

    func stop() {
        stopping.withLock { stopped = true }
        done.wait()
    }
}
