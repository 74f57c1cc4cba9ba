#if canImport(Glibc)
import Glibc
#endif
import CFuse
import CSystemShims
import Synchronization
import QueryFSEngine
import QueryFSCollection

/// Reads a view's link targets through the mount, several at a time, once a
/// program starts reading them one by one: the kernel keeps each target it
/// was told (FUSE_CAP_CACHE_SYMLINKS), so `ls -l` or a file manager finds
/// most of them cached instead of waiting for a round trip per entry.
///
/// Why: every readlink of an entry is a round trip to the daemon, about
/// 28 µs on the 2-core machine we measure on, almost all of it the two
/// context switches; the first `ls -l` of a 100,000-entry view spent 2.8 of
/// its 4.1 s there (the next, cached, 0.4 s in all). Round trips made in
/// parallel overlap; one at a time they cannot. The kernel offers no way to
/// hand it targets ahead (FUSE_NOTIFY_STORE refuses anything but regular
/// files since Linux 6.x).
///
/// A folder is read once per state of its listing, starting when a program
/// other than the warmer reads one of its links while the folder is being
/// listed (a plain `ls` reads none, and costs nothing; a script reading one
/// link now and then starts nothing). Only entries the kernel was already given by a
/// readdirplus reply are read (`ViewFolder.listedCount`): `ls -l` reads a
/// link right after each batch of names, and reading ahead of it would cost
/// a lookup round trip per entry on top. The cost is what the reader would
/// have caused anyway: a round trip and a page of kernel cache per entry.
final class LinkWarmer: @unchecked Sendable {
    /// Round trips are waits, not work (the daemon's handler is a few µs of
    /// a 25–45 µs trip here): more in flight overlap more. First `ls -l` of
    /// 100,000 entries after a plain `ls`: 4 threads 1.32–1.52 s, 8 1.09–1.18,
    /// 16 0.90–1.09, 32 1.01–1.16 (the daemon serves 16 requests at once).
    static let threadCount = 16
    /// At most this many folders are read at once; others wait for their reader.
    static let concurrentFolders = 2
    /// A readlink this soon after the folder's last readdir batch is a listing's.
    static let listingSeconds = 1.0

    private let root: MountRoot
    private let state = Mutex<State>(State())
    private let stopping = Atomic<Bool>(false)
    /// Folders being read now (read without the lock first: see `noteReadlink`).
    private let running = Atomic<Int>(0)

    private struct State {
        /// The warmer's own threads (their requests start nothing).
        var threads: Set<pid_t> = []
    }

    init(root: MountRoot) {
        self.root = root
    }

    /// A readlink of an entry of `folder` was answered: starts reading the
    /// rest of its targets, unless that listing was read already or the
    /// request is the warmer's own.
    ///
    /// Called after every readlink reply, on sixteen request threads at
    /// once during a first `ls -l`: the usual answer ("this listing is read
    /// already") comes from two atomic loads. Under one lock for every call,
    /// the lock's slow path was 9.7 % of all CPU samples of a first `ls -l`
    /// of 100,000 entries (perf, both cores busy).
    /// `pid`: the requesting thread's id, read from the request before it was answered.
    func noteReadlink(from pid: pid_t, folder: ViewFolder) {
        let generation = folder.generation.load(ordering: .acquiring)
        guard folder.linksWarmedGeneration.load(ordering: .relaxed) != generation,
              running.load(ordering: .relaxed) < Self.concurrentFolders,
              !stopping.load(ordering: .relaxed)
        else { return }
        // Only while the folder is being listed: a lone readlink long after
        // (a script polling one entry) would read every link for nothing.
        guard monotonicSeconds() - folder.lastListed < Self.listingSeconds else { return }
        // Starts are decided under the lock, so each listing is read once.
        let start = state.withLock { state -> Bool in
            guard !state.threads.contains(pid), running.load(ordering: .relaxed) < Self.concurrentFolders,
                  folder.linksWarmedGeneration.load(ordering: .relaxed) != generation
            else { return false }
            folder.linksWarmedGeneration.store(generation, ordering: .relaxed)
            running.add(1, ordering: .relaxed)
            return true
        }
        if start { warm(folder) }
    }

    /// Ends the reading (before the session goes).
    func stop() { stopping.store(true, ordering: .relaxed) }

    /// One folder's reading, shared by its threads.
    private final class Job: Sendable {
        let folder: ViewFolder
        let listing: ViewListing
        let next = Atomic<Int>(0)
        let finishedThreads = Atomic<Int>(0)
        init(folder: ViewFolder, listing: ViewListing) {
            self.folder = folder
            self.listing = listing
        }
    }

    private func warm(_ folder: ViewFolder) {
        let job = Job(folder: folder, listing: folder.listing)
        for _ in 0..<Self.threadCount {
            startThread(named: Self.threadName) { [self] in read(job) }
        }
    }

    /// What `ps -L` and /proc/PID/task/*/comm call the reading threads.
    static let threadName = "queryfs-links"

    private func read(_ job: Job) {
        let tid = qfs_thread_id()
        state.withLock { _ = $0.threads.insert(tid) }
        // The folder opened beneath the mount's own root (see `MountRoot`).
        _ = root.withRoot { rootFD in
            let folders = ConfinedFolders(root: rootFD)
            defer { folders.close() }
            guard let folderFD = folders.folder(job.folder.path.map { Array($0.utf8) }) else { return }
            read(job, in: folderFD)
        }
        state.withLock { _ = $0.threads.remove(tid) }
        if job.finishedThreads.add(1, ordering: .relaxed).newValue == Self.threadCount {
            running.subtract(1, ordering: .relaxed)
        }
    }

    private func read(_ job: Job, in folderFD: Int32) {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        reading: while !stopping.load(ordering: .relaxed) {
            let index = job.next.add(1, ordering: .relaxed).oldValue
            guard index < job.listing.count else { break }
            // Wait for the reader's next batch of names; give up when it
            // stops listing (for a second) or the view changes.
            var waited = 0
            while true {
                guard let listed = job.folder.listedCount(of: job.listing), waited < 2_000 else { break reading }
                if index < listed { break }
                usleep(500)
                waited += 1
            }
            _ = job.listing.name(at: index).withCString { readlinkat(folderFD, $0, &buffer, buffer.count) }
        }
    }
}
