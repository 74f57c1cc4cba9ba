import CSystemShims
import QueryFSEngine
import QueryFSCollection

/// How many requests of each kind the kernel sent since the mount, for the
/// status file's `kernelRequests`: what a walk, a listing or a file manager
/// costs in round trips is read from two snapshots of it (Benchmarks/).
enum KernelRequests {
    /// linux/fuse.h's opcodes, by number.
    private static let names: [UInt32: String] = [
        1: "LOOKUP", 2: "FORGET", 3: "GETATTR", 4: "SETATTR", 5: "READLINK", 6: "SYMLINK", 8: "MKNOD",
        9: "MKDIR", 10: "UNLINK", 11: "RMDIR", 12: "RENAME", 13: "LINK", 14: "OPEN", 15: "READ",
        16: "WRITE", 17: "STATFS", 18: "RELEASE", 20: "FSYNC", 21: "SETXATTR", 22: "GETXATTR",
        23: "LISTXATTR", 24: "REMOVEXATTR", 25: "FLUSH", 26: "INIT", 27: "OPENDIR", 28: "READDIR",
        29: "RELEASEDIR", 30: "FSYNCDIR", 31: "GETLK", 32: "SETLK", 33: "SETLKW", 34: "ACCESS",
        35: "CREATE", 36: "INTERRUPT", 37: "BMAP", 38: "DESTROY", 39: "IOCTL", 40: "POLL",
        41: "NOTIFY_REPLY", 42: "BATCH_FORGET", 43: "FALLOCATE", 44: "READDIRPLUS", 45: "RENAME2",
        46: "LSEEK", 47: "COPY_FILE_RANGE", 50: "SYNCFS", 51: "TMPFILE", 52: "STATX",
    ]

    /// The kinds received at least once, by name ("OPCODE_n" for one this
    /// table does not know), as a JSON object.
    static func json() -> String {
        var fields: [String] = []
        for opcode in UInt32(0)..<64 {
            let count = qfs_request_count(opcode)
            guard count > 0 else { continue }
            fields.append("\(JSON.string(names[opcode] ?? "OPCODE_\(opcode)")): \(count)")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }
}
