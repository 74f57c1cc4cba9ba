import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Mounted by root with `-o allow_other` (the systemd case), what other
/// users do through `bundles/` must go as it goes in a plain folder: the same
/// operations, run by the same users (`setpriv`) in a plain folder and
/// through the mount, give the same errors and leave the same owners,
/// groups and modes — files belong to whoever made them, setgid folders
/// hand down their group, sticky folders protect their files, and only an
/// owner sets explicit times.
final class OwnershipMountTests: MountTestCase {
    private static let userA = (uid: 65534, gid: 65534)
    private static let userB = (uid: 65533, gid: 65533)
    private static let sharedGroup = 4242

    override func setUpWithError() throws {
        try XCTSkipIf(getuid() != 0, "needs root to act as other users")
        fixture = MountedFixture { _ in }
    }

    /// The starting tree, made by root: folders of every kind, files of A's and root's.
    private func makeTree(in root: String) {
        func make(_ path: String, directory: Bool, mode: mode_t, uid: Int = 0, gid: Int = 0) {
            let full = root + "/" + path
            if directory { mkdir(full, 0o700) } else { close(open(full, O_CREAT | O_WRONLY, 0o600)) }
            chown(full, uid_t(uid), gid_t(gid))
            chmod(full, mode)  // after chown, which clears set-id bits
        }
        make("shared", directory: true, mode: 0o777)
        make("sticky", directory: true, mode: 0o1777)
        make("sticky/owned-by-a", directory: false, mode: 0o644, uid: Self.userA.uid, gid: Self.userA.gid)
        make("setgid", directory: true, mode: 0o2775, gid: Self.sharedGroup)
        make("mine", directory: true, mode: 0o755, uid: Self.userA.uid, gid: Self.userA.gid)
        make("a-file", directory: false, mode: 0o644, uid: Self.userA.uid, gid: Self.userA.gid)
        make("writable-by-all", directory: false, mode: 0o666)
        make("readonly", directory: false, mode: 0o644)
    }

    private static let stepsOfA = """
        touch shared/a-new; echo "touch new $?"
        mkdir shared/a-dir; echo "mkdir $?"
        ln -s target shared/a-link; echo "symlink $?"
        mkfifo shared/a-fifo; echo "mkfifo $?"
        touch setgid/a-in-setgid; echo "touch in setgid $?"
        mkdir setgid/a-subdir; echo "mkdir in setgid $?"
        chmod 600 a-file; echo "chmod own $?"
        chmod 600 readonly; echo "chmod root's $?"
        chown 65533 a-file; echo "chown to another user $?"
        chgrp 4242 a-file; echo "chgrp to a group of mine $?"
        chgrp 0 a-file; echo "chgrp to another group $?"
        chmod g+s a-file; echo "chmod g+s $?"
        truncate -s 0 readonly; echo "truncate root's read-only $?"
        truncate -s 3 writable-by-all; echo "truncate writable $?"
        touch -m -d @100 writable-by-all; echo "explicit time, not owner $?"
        touch writable-by-all; echo "time now, writable $?"
        touch readonly; echo "time now, not writable $?"
        touch -m -d @100 a-file; echo "explicit time, owner $?"
        ln a-file shared/a-hardlink; echo "hard link $?"
        mv shared/a-new shared/a-renamed; echo "rename $?"
        setfattr -n user.note -v x a-file; echo "setfattr own $?"
        echo data > shared/a-written; echo "create and write $?"
        """

    private static let stepsOfB = """
        rm -f sticky/owned-by-a; echo "unlink another's file in a sticky folder $?"
        mv sticky/owned-by-a sticky/moved; echo "rename another's file in a sticky folder $?"
        touch sticky/b-file; echo "create in a sticky folder $?"
        rm -f shared/a-renamed; echo "unlink in a shared folder $?"
        chmod 777 mine; echo "chmod another's folder $?"
        touch mine/b; echo "create in another's folder $?"
        rmdir shared/a-dir; echo "rmdir in a shared folder $?"
        setfattr -n user.note -v y a-file; echo "setfattr another's $?"
        cat readonly > /dev/null; echo "read root's $?"
        echo more >> writable-by-all; echo "append writable $?"
        """

    private static let lastStepsOfA = """
        rm -f sticky/owned-by-a; echo "unlink own file in a sticky folder $?"
        rm -f sticky/b-file; echo "unlink another's in a sticky folder $?"
        """

    /// Runs `script` as `user` (with the shared group) in `folder`; its output, as the user saw it.
    private func run(_ script: String, as user: (uid: Int, gid: Int), in folder: String) -> String {
        let result = Program.run(["setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--groups=\(Self.sharedGroup)", "--",
                                  "sh", "-c", "cd \"$0\" && { \(script)\n} 2>&1", folder])
        return result.stdoutText
    }

    /// Every path under `root` with its type, owner, group and mode.
    private func tree(_ root: String) -> [String] {
        let find = Program.run(["find", root, "-mindepth", "1", "-printf", "%P %y %U %G %m\\n"])
        return find.stdoutText.split(separator: "\n").map(String.init).sorted()
    }

    func testOtherUsersActAsThemselvesThroughTheMount() throws {
        let native = fixture.root + "/native"
        mkdir(native, 0o755)
        makeTree(in: native)
        makeTree(in: fixture.backing)
        try fixture.mount(["-o", "allow_other"])
        let mounted = fixture.mounted("bundles")
        for (script, user) in [(Self.stepsOfA, Self.userA), (Self.stepsOfB, Self.userB), (Self.lastStepsOfA, Self.userA)] {
            let expected = run(script, as: user, in: native)
            let actual = run(script, as: user, in: mounted)
            XCTAssertEqual(actual.split(separator: "\n"), expected.split(separator: "\n"), "as uid \(user.uid)")
        }
        XCTAssertEqual(tree(fixture.backing), tree(native))
        // And the plain folder did what we think it did (so the comparison means something).
        let owners = Dictionary(uniqueKeysWithValues: tree(fixture.backing).map { line -> (String, String) in
            let fields = line.split(separator: " ")
            return (String(fields[0]), fields.dropFirst().joined(separator: " "))
        })
        XCTAssertEqual(owners["shared/a-renamed"], nil, "B removed it")
        XCTAssertEqual(owners["shared/a-link"], "l 65534 65534 777")
        XCTAssertEqual(owners["shared/a-fifo"], "p 65534 65534 644")
        XCTAssertEqual(owners["shared/a-written"], "f 65534 65534 644")
        XCTAssertEqual(owners["setgid/a-in-setgid"], "f 65534 4242 644")
        XCTAssertEqual(owners["setgid/a-subdir"], "d 65534 4242 2755")
        XCTAssertEqual(owners["sticky/b-file"], "f 65533 65533 644", "A may not remove B's file from a sticky folder")
    }

    /// Issue 30 (pjdfstest chmod/12.t): a write, a truncation or a
    /// truncating open by another user than the owner clears the
    /// set-user-ID bit, and the set-group-ID bit of a group-executable file,
    /// as in a plain folder — and the mount shows the mode at once.
    func testAnotherUsersWriteClearsTheSetIDBits() throws {
        let native = fixture.root + "/native"
        mkdir(native, 0o755)
        let files = ["suid": 0o4777, "sgid": 0o2777, "both": 0o6777, "sgid-no-exec": 0o2767, "suid-truncated": 0o4777,
                     "suid-opened-truncating": 0o6777]
        for folder in [native, fixture.backing] {
            for (name, mode) in files {
                let path = folder + "/" + name
                close(open(path, O_CREAT | O_WRONLY, 0o600))
                chown(path, uid_t(Self.userA.uid), gid_t(Self.userA.gid))
                chmod(path, mode_t(mode))  // after chown, which clears them
            }
        }
        try fixture.mount(["-o", "allow_other"])
        let steps = """
            for f in suid sgid both sgid-no-exec; do echo x >> $f; echo "append $f $? $(stat -c %a $f)"; done
            truncate -s 1 suid-truncated; echo "truncate $? $(stat -c %a suid-truncated)"
            : > suid-opened-truncating; echo "open O_TRUNC $? $(stat -c %a suid-opened-truncating)"
            """
        let expected = run(steps, as: Self.userB, in: native)
        XCTAssertEqual(run(steps, as: Self.userB, in: fixture.mounted("bundles")).split(separator: "\n"), expected.split(separator: "\n"))
        XCTAssertTrue(expected.contains("append both 0 777"), expected)
        XCTAssertTrue(expected.contains("append sgid-no-exec 0 767"), "the writer is not in the file's group: \(expected)")
        XCTAssertEqual(tree(fixture.backing).filter { files.keys.contains(String($0.split(separator: " ")[0])) },
                       tree(native).filter { files.keys.contains(String($0.split(separator: " ")[0])) })
        // The owner's own write clears them too (Linux keeps them only for
        // CAP_FSETID); root's keeps them.
        for folder in [native, fixture.mounted("bundles")] { XCTAssertEqual(chmod(folder + "/suid", 0o4777), 0) }
        XCTAssertEqual(run("echo y >> suid; stat -c %a suid", as: Self.userA, in: fixture.mounted("bundles")),
                       run("echo y >> suid; stat -c %a suid", as: Self.userA, in: native))
        XCTAssertEqual(chmod(fixture.mounted("bundles/suid"), 0o4777), 0)
        XCTAssertEqual(Program.run(["sh", "-c", "echo z >> \"$0\"; stat -c %a \"$0\"", fixture.mounted("bundles/suid")]).stdoutText, "4777\n")
    }

    /// The umask of the user who creates is the one applied, not the daemon's.
    func testTheCallersUmaskDecidesTheMode() throws {
        chmod(fixture.backing, 0o777)
        try fixture.mount(["-o", "allow_other"])
        let script = "umask 002; touch f; mkdir d; echo done"
        XCTAssertEqual(run(script, as: Self.userA, in: fixture.mounted("bundles")), "done\n")
        XCTAssertEqual(tree(fixture.backing), ["d d 65534 65534 775", "f f 65534 65534 664"])
    }

    /// The edit journal is its owner's alone (0600: it holds every edited
    /// file as it was), goes to BACKING's owner when root makes it (who
    /// edits there next), and is replayed only while no one else may write
    /// it; a command edits only a file the caller may write itself, not one
    /// of another's in a folder the caller may write. Found from outside:
    /// a 0644 journal gave other users 0600 payloads; a root-made journal
    /// locked the folder's owner out; a group member took over another's payload.
    func testTheJournalIsPrivateAndAnEditNeedsTheRightToWriteTheFile() throws {
        let corpus = Corpus(path: fixture.backing)
        corpus.bundle("a.hpwebsite", title: "Alpha", mtime: 1_000)
        corpus.bundle("b.hpwebsite", title: "Beta", mtime: 2_000)
        XCTAssertEqual(Program.run(["chown", "-R", "\(Self.userA.uid):\(Self.userA.gid)", fixture.backing]).status, 0)
        let journal = fixture.backed(".queryfs-journal")

        XCTAssertEqual(QueryfsBinary.run(["tag", fixture.backing, "a.hpwebsite", "--add", "x"]).status, 0)
        let made = try XCTUnwrap(RawFiles.lstat(journal))
        XCTAssertEqual(made.st_mode & 0o777, 0o600)
        XCTAssertEqual(Int(made.st_uid), Self.userA.uid, "BACKING's owner's")
        let undo = QueryfsBinary.run(["undo", fixture.backing])
        XCTAssertEqual(undo.status, 0, "root undoes a journal of BACKING's owner: \(undo.stderrText)")

        // Another's payload in a folder everyone may write: refused, left as it was.
        let payload = fixture.backed("b.hpwebsite/payload.plist")
        XCTAssertEqual(chown(payload, 0, 0), 0)
        XCTAssertEqual(chmod(payload, 0o644), 0)
        XCTAssertEqual(chmod(fixture.backed("b.hpwebsite"), 0o777), 0)
        let before = RawFiles.read(payload)
        let queryfs = try ReachableCopies(for: self).queryfs()
        let refused = Program.run(["setpriv", "--reuid=\(Self.userA.uid)", "--regid=\(Self.userA.gid)", "--clear-groups", "--",
                                   queryfs, "tag", fixture.backing, "b.hpwebsite", "--add", "y"])
        XCTAssertEqual(refused.status, 2, refused.stderrText)
        XCTAssertTrue(refused.stderrText.contains("Permission denied"), refused.stderrText)
        XCTAssertEqual(RawFiles.read(payload), before)
        XCTAssertEqual(RawFiles.lstat(payload)?.st_uid, 0, "still root's")
        // Even one the user may write: replaced, it would become theirs.
        XCTAssertEqual(chmod(payload, 0o666), 0)
        let takeover = Program.run(["setpriv", "--reuid=\(Self.userA.uid)", "--regid=\(Self.userA.gid)", "--clear-groups", "--",
                                    queryfs, "tag", fixture.backing, "b.hpwebsite", "--add", "y"])
        XCTAssertEqual(takeover.status, 2, takeover.stderrText)
        XCTAssertTrue(takeover.stderrText.contains("belongs to user 0"), takeover.stderrText)
        XCTAssertEqual(RawFiles.lstat(payload)?.st_uid, 0, "still root's")

        // A journal others may write is not replayed.
        XCTAssertEqual(QueryfsBinary.run(["tag", fixture.backing, "a.hpwebsite", "--add", "z"]).status, 0)
        XCTAssertEqual(chmod(journal, 0o620), 0)
        let writable = QueryfsBinary.run(["undo", fixture.backing])
        XCTAssertEqual(writable.status, 2)
        XCTAssertTrue(writable.stderrText.contains("chmod go-w"), writable.stderrText)
    }

    /// A bundle its reader may list but not search (a folder without x) is
    /// said to be one, not to have no payload (found from outside).
    func testABundleThatCannotBeSearchedIsSaidToBeOne() throws {
        let corpus = Corpus(path: fixture.backing)
        corpus.bundle("n.hpwebsite", title: "N", mtime: 1_000)
        XCTAssertEqual(Program.run(["chown", "-R", "\(Self.userA.uid):\(Self.userA.gid)", fixture.backing]).status, 0)
        XCTAssertEqual(chmod(fixture.backed("n.hpwebsite"), 0o600), 0)
        let queryfs = try ReachableCopies(for: self).queryfs()
        let status = Program.run(["setpriv", "--reuid=\(Self.userA.uid)", "--regid=\(Self.userA.gid)", "--clear-groups", "--",
                                  "env", "HOME=\(fixture.root)", queryfs, "status", fixture.backing, "--no-index"])
        XCTAssertTrue(status.stdoutText.contains("n.hpwebsite: cannot look into bundle: Permission denied"), status.stdoutText + status.stderrText)
        XCTAssertFalse(status.stdoutText.contains("no payload"), status.stdoutText)
    }
}
