@_spi(Fuzzing) import QueryFSCollection

/// Each target's test function: the input handed to the main package's
/// fuzz entry points (`FuzzEntryPoints`, where the probes live).
public enum FuzzTests {
    public static let binaryPlist: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.payload(FuzzDriver.bytes(data, size), fileName: "payload.plist")
        return 0
    }

    public static let xmlPlist = binaryPlist

    public static let json: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.payload(FuzzDriver.bytes(data, size), fileName: "payload.json")
        return 0
    }

    public static let query: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.query(String(decoding: FuzzDriver.bytes(data, size), as: UTF8.self))
        return 0
    }

    public static let configuration: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.configuration(FuzzDriver.bytes(data, size))
        return 0
    }

    public static let frontMatter: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.frontMatter(FuzzDriver.bytes(data, size))
        return 0
    }

    public static let xmp: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.xmpSidecar(FuzzDriver.bytes(data, size))
        return 0
    }

    public static let indexFile: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        FuzzEntryPoints.indexFile(FuzzDriver.bytes(data, size))
        return 0
    }
}
