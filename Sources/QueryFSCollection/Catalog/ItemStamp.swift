import QueryFSEngine
/// A fingerprint of everything the file system says about an item without
/// reading it: for each folder and file in it, its name, inode, size, mode,
/// mtime and ctime (ctime moves on every change of content, attributes and
/// extended attributes). Two stamps that differ mean the item changed; the
/// poller compares them to find changes nothing notified (an unwatched
/// bundle, a network file system), at the cost of a stat per file.
///
/// Entries are combined by addition, so the order a folder lists them in
/// does not matter; each field is mixed with splitmix64, so the stamp is
/// the same in every process (it can be kept in an index file).
package struct ItemStamp: Hashable, Sendable {
    package private(set) var value: UInt64 = 0
    /// The latest ctime seen, in nanoseconds since 1970 (not part of equality):
    /// what tells whether a read may have missed a change made in the same
    /// clock tick (`settledValue`).
    private(set) var newestChange: Int64 = .min
    /// Every ctime seen fell on a whole second: a filesystem that keeps
    /// times in seconds (FAT, ext4 with small inodes, some network mounts).
    private(set) var wholeSeconds = true

    package init() {}

    init(value: UInt64) { self.value = value }

    package static func == (a: ItemStamp, b: ItemStamp) -> Bool { a.value == b.value }
    package func hash(into hasher: inout Hasher) { hasher.combine(value) }

    /// How long after its newest ctime a read must start for the stamp to
    /// vouch for what was read. The kernel stamps ctime from a clock that
    /// ticks every 1–10 ms: a write in the same tick as the read, after it,
    /// would leave the same stamp (git's "racily clean" entries).
    static let settleNanoseconds: Int64 = 50_000_000
    /// The same where times are kept in whole seconds (FAT keeps 2 s).
    static let coarseSettleNanoseconds: Int64 = 3_000_000_000

    /// The value to keep in an index for an item whose read started at
    /// `readStart` (ns since 1970): 0 (“unknown: read it again”) unless every
    /// file's ctime is older than the read by `settleNanoseconds`.
    /// Whether a change after `now` is bound to move the stamp (see `settledValue`).
    func isSettled(at now: Int64) -> Bool { settledValue(readStart: now) != 0 }

    func settledValue(readStart: Int64) -> UInt64 {
        let window = wholeSeconds ? Self.coarseSettleNanoseconds : Self.settleNanoseconds
        guard newestChange < readStart &- window else { return 0 }
        return value == 0 ? 1 : value
    }

    /// Whether a file may have changed at or after `time` (ns since 1970),
    /// its ctime read with the same window as `settledValue` (the kernel's
    /// ctime clock lags the precise one by up to a tick; whole seconds by more).
    func mayHaveChanged(since time: Int64) -> Bool {
        let window = wholeSeconds ? Self.coarseSettleNanoseconds : Self.settleNanoseconds
        return newestChange >= time &- window
    }

    /// Adds one file or folder, by its path inside the item (empty for the item itself).
    mutating func add(name: some Collection<UInt8>, status: FileStatus) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a over the name
        for byte in name { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        for field in [status.raw.ino, status.raw.size, UInt64(status.raw.mode),
                      UInt64(bitPattern: status.raw.mtime_sec), UInt64(status.raw.mtime_nsec),
                      UInt64(bitPattern: status.raw.ctime_sec), UInt64(status.raw.ctime_nsec)] {
            hash = Self.mix(hash ^ field)
        }
        value &+= hash
        newestChange = max(newestChange, status.raw.ctime_sec &* 1_000_000_000 &+ Int64(status.raw.ctime_nsec))
        if status.raw.ctime_nsec != 0 { wholeSeconds = false }
    }

    private static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
