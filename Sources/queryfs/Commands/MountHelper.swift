import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// The mount(8) helper calling convention, as sshfs and mergerfs follow it:
/// `mount -t fuse.queryfs BACKING MOUNTPOINT -o OPTS`, an fstab line of type
/// `fuse.queryfs`, and `mount.fuse3 'queryfs#BACKING' MOUNTPOINT` all end in
/// `queryfs BACKING MOUNTPOINT [-o OPTS] [-t TYPE] [-s -n -v -f]` (or the
/// binary run as `mount.fuse.queryfs`). That becomes `queryfs mount …`:
/// the options queryfs knows map to its flags, those meant for mount(8) and
/// systemd are dropped, anything else is refused in one line.
enum MountHelper {
    /// The command line to parse: `arguments` as given, or the mount it asks for.
    static func commandLine(from arguments: [String]) throws -> [String] {
        let rest = Array(arguments.dropFirst())
        let invokedAsHelper = (arguments.first?.split(separator: "/").last ?? "").hasPrefix("mount.")
        let subcommands = Set(QueryFSCommand.configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"])
        if rest.first == "mount", !invokedAsHelper { return try ["mount"] + mountOptions(Array(rest.dropFirst())) }
        // `help NOPE` printed the general help and exited 0 (found from outside).
        if !invokedAsHelper, rest.first == "help", rest.count >= 2, !rest[1].hasPrefix("-"), !subcommands.contains(rest[1]) {
            throw ValidationError("unknown command '\(rest[1])' (commands: \(subcommands.subtracting(["help", "connection-guard"]).sorted().joined(separator: ", ")))")
        }
        guard let first = rest.first, invokedAsHelper || (!first.hasPrefix("-") && !subcommands.contains(first)) else { return rest }
        // A mistyped command (`queryfs stauts B`) is no backing directory.
        if !invokedAsHelper, !first.contains("/"), access(first, F_OK) != 0 {
            throw ValidationError("unknown command '\(first)' (commands: \(subcommands.subtracting(["help", "connection-guard"]).sorted().joined(separator: ", ")))")
        }
        return try translate(rest)
    }

    /// `queryfs mount`'s `-o` lists read as the helper reads them, so that
    /// what the README offers as `-o trust_index` works in both forms (found
    /// from outside: `queryfs mount B M -o trust_index` reached libfuse,
    /// which refused it in a garbled line).
    static func mountOptions(_ arguments: [String]) throws -> [String] {
        var kept: [String] = []
        var options: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                kept += arguments[index...]
                break
            }
            if argument == "-o" {
                guard index + 1 < arguments.count else { throw ValidationError("-o needs a value") }
                options += arguments[index + 1].split(separator: ",").map(String.init)
                index += 2
                continue
            }
            if argument.hasPrefix("-o") {
                options += argument.dropFirst(2).split(separator: ",").map(String.init)
            } else {
                kept.append(argument)
            }
            index += 1
        }
        return kept + (options.isEmpty ? [] : try flags(for: options))
    }

    /// `BACKING MOUNTPOINT -o a,b -o c …` → `mount BACKING MOUNTPOINT …`.
    static func translate(_ arguments: [String]) throws -> [String] {
        var positional: [String] = []
        var options: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-o", "-t":
                guard index + 1 < arguments.count else { throw ValidationError("\(argument) needs a value") }
                if argument == "-o" { options += arguments[index + 1].split(separator: ",").map(String.init) }
                index += 2
                continue
            case "-s", "-n", "-v", "-f":
                break  // sloppy, no mtab, verbose, fake: mount(8)'s, not ours
            default:
                if argument.hasPrefix("-o") { options += argument.dropFirst(2).split(separator: ",").map(String.init) }
                else if argument.hasPrefix("-") { throw ValidationError("unknown mount helper flag '\(argument)'") }
                else { positional.append(argument) }
            }
            index += 1
        }
        guard positional.count == 2 else {
            throw ValidationError("as a mount helper: queryfs BACKING MOUNTPOINT [-o OPTIONS] (got \(positional.count) paths)")
        }
        // mount.fuse3's `queryfs#BACKING` form arrives as BACKING already; a
        // source still carrying the type is cut the same way.
        var backing = positional[0]
        if backing.hasPrefix("queryfs#") { backing.removeFirst("queryfs#".count) }
        return ["mount", backing, positional[1]] + (try flags(for: options))
    }

    /// Options meant for mount(8), fstab and systemd: nothing for queryfs to do.
    private static let ignored: Set<String> = [
        "defaults", "_netdev", "nofail", "noauto", "auto", "user", "users", "nouser", "owner", "group", "rw",
        "dev", "nodev", "suid", "nosuid", "exec", "noexec", "atime", "noatime", "relatime", "norelatime",
        "strictatime", "nostrictatime", "diratime", "nodiratime", "lazytime", "nolazytime", "sync", "async",
        "loud", "silent", "default_permissions",  // always on
    ]

    /// FUSE mount options queryfs passes on to the kernel.
    private static let fuseOptions: Set<String> = ["allow_other", "allow_root", "ro", "nonempty", "auto_unmount"]

    /// queryfs's own options, as `-o name` or `-o name=value`, and the flag each is.
    private static let ownFlags: [String: String] = [
        "absolute_links": "--absolute-links", "no_events": "--no-events", "no_passthrough": "--no-passthrough",
        "no_coordination": "--no-coordination", "no_index": "--no-index", "trust_index": "--trust-index",
    ]
    private static let ownOptions: [String: String] = [
        "log": "--log", "config": "--config", "lock_timeout": "--lock-timeout", "query_folders": "--query-folders",
        "payload_key": "--payload-key", "age_recount": "--age-recount", "notify": "--notify", "index": "--index",
        "poll": "--poll", "poll_share": "--poll-share",
    ]

    static func flags(for options: [String]) throws -> [String] {
        var result: [String] = []
        var fuse: [String] = []
        for option in options where !option.isEmpty {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0]
            if ignored.contains(option) || name.hasPrefix("x-") || name == "comment" { continue }
            if fuseOptions.contains(option) { fuse.append(option); continue }
            if let flag = ownFlags[option] { result.append(flag); continue }
            if let flag = ownOptions[name], parts.count == 2 { result += [flag, parts[1]]; continue }
            throw ValidationError("unknown mount option '\(option)' (known: \((fuseOptions.union(ownFlags.keys).union(ownOptions.keys.map { $0 + "=…" })).sorted().joined(separator: ", ")); mount(8) and systemd options are ignored)")
        }
        return (fuse.isEmpty ? [] : ["-o", fuse.joined(separator: ",")]) + result
    }
}
