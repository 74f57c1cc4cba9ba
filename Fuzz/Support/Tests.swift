import QueryFS

/// One test function per target: what each input goes through.
public enum FuzzTests {
    /// Binary and XML property lists and JSON, as payloads arrive from sync
    /// tools and `git pull`: through the scan's own path, then into views.
    public static let binaryPlist: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        PayloadProbe.check(FuzzDriver.bytes(data, size), fileName: "payload.plist")
        return 0
    }

    public static let xmlPlist = binaryPlist

    public static let json: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        PayloadProbe.check(FuzzDriver.bytes(data, size), fileName: "payload.json")
        return 0
    }

    /// Queries, as anyone may type them as a name under `query/`.
    public static let query: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        QueryProbe.check(String(decoding: FuzzDriver.bytes(data, size), as: UTF8.self))
        return 0
    }

    /// `.queryfs.toml`, as it may be edited (or synced) while mounted.
    public static let configuration: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        let bytes = FuzzDriver.bytes(data, size)
        if let configuration = try? Configuration(bytes: bytes, file: ".queryfs.toml", now: Timestamp(seconds: 1_700_000_000)) {
            _ = LiveIndex(items: FuzzProbeItems.sample, viewSet: configuration.viewSet)
        }
        return 0
    }

    /// The index file, as a disk, a crash or another program may leave it
    /// (checksums not checked, so mutations reach the decoding behind them).
    public static let indexFile: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        IndexFileProbe.check(FuzzDriver.bytes(data, size))
        return 0
    }
}
