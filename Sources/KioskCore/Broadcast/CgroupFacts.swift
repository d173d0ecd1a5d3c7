import Foundation

/// What the kernel's cgroup v2 files say, parsed without trusting them: `/proc/self/cgroup`,
/// `/proc/self/mountinfo`, `cgroup.controllers` and `memory.max`. Every parser returns nil
/// (or an empty set) on text it does not understand; none of them traps, whatever the input.
public enum CgroupFacts {
    /// The cgroup v2 path of a process from its `/proc/PID/cgroup` text: the `0::/path` line
    /// (hierarchy 0, no controller list). Nil when there is none (a cgroup v1-only machine)
    /// or the path is not absolute.
    public static func unifiedPath(procCgroup text: String) -> String? {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            // "ID:CONTROLLERS:PATH" — the path itself may contain ':'.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[0] == "0", fields[1].isEmpty else { continue }
            let path = String(fields[2])
            // A cgroup removed under the process reads "/path (deleted)" on some kernels.
            guard path.hasPrefix("/"), !path.hasSuffix(" (deleted)") else { return nil }
            return path
        }
        return nil
    }

    /// Where the cgroup v2 file system is mounted: the mount point and the cgroup path it
    /// shows (its root, "/" unless a cgroup namespace or a bind mount shows only a subtree),
    /// from `/proc/self/mountinfo`. The first cgroup2 mount wins.
    public static func unifiedMount(mountinfo text: String) -> (mountPoint: String, root: String)? {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTIONS"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let dash = fields.firstIndex(of: "-"), dash >= 5, dash + 1 < fields.count,
                  fields[dash + 1] == "cgroup2" else { continue }
            guard let root = unescapedMountField(fields[3]), let point = unescapedMountField(fields[4]),
                  root.hasPrefix("/"), point.hasPrefix("/") else { continue }
            return (point, root)
        }
        return nil
    }

    /// The directory of cgroup `path` under a cgroup2 mount, or nil when the mount does not
    /// show that cgroup (it shows another subtree) or the path tries to climb out of it.
    public static func directory(of path: String, mountPoint: String, root: String) -> String? {
        let components = path.split(separator: "/")
        let rootComponents = root.split(separator: "/")
        for part in components + rootComponents + mountPoint.split(separator: "/") where part == ".." || part == "." { return nil }
        guard components.count >= rootComponents.count, Array(components.prefix(rootComponents.count)) == rootComponents else {
            return nil
        }
        let rest = components.dropFirst(rootComponents.count).joined(separator: "/")
        let base = mountPoint.hasSuffix("/") && mountPoint.count > 1 ? String(mountPoint.dropLast()) : mountPoint
        if rest.isEmpty { return base }
        return (base == "/" ? "" : base) + "/" + rest
    }

    /// The controller names in a `cgroup.controllers` or `cgroup.subtree_control` text
    /// ("cpuset cpu io memory pids").
    public static func controllers(_ text: String) -> Set<String> {
        Set(text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init))
    }

    /// A `memory.max` (or `memory.swap.max`) value: `.unlimited` for "max", else the bytes.
    /// Nil for anything else (negative, not a number, more than Int64 holds).
    public static func memoryLimit(_ text: String) -> MemoryLimit? {
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if value == "max" { return .unlimited }
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let bytes = Int64(value) else { return nil }
        return .bytes(bytes)
    }

    /// One counter of a flat-keyed cgroup file such as `memory.events` ("oom_kill 2"); nil
    /// when the key is absent or its value is not a count.
    public static func counter(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, fields[0] == name, fields[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { continue }
            return Int(fields[1])
        }
        return nil
    }

    /// The limit that holds for a cgroup: the smallest `memory.max` on its path from the
    /// root (each level's value, in any order); nil when every level says "max" (or none
    /// could be read).
    public static func effectiveLimit(_ levels: [MemoryLimit]) -> Int64? {
        levels.compactMap { if case .bytes(let bytes) = $0 { bytes } else { nil } }.min()
    }

    /// A cgroup directory and every ancestor below the mount point, innermost first: where to
    /// read the `memory.max` values whose smallest holds for it.
    public static func levels(ofDirectory directory: String, mountPoint: String) -> [String] {
        let base = mountPoint.split(separator: "/"), parts = directory.split(separator: "/")
        guard directory.hasPrefix("/"), parts.count > base.count, Array(parts.prefix(base.count)) == base else { return [] }
        // cgroup trees are shallow; bound the walk anyway.
        return stride(from: parts.count, to: max(base.count, parts.count - 64), by: -1).map { "/" + parts.prefix($0).joined(separator: "/") }
    }

    /// "\040" in a mountinfo field is a space (and "\011" a tab, "\012" a newline, "\134" a
    /// backslash): the kernel escapes them so that fields split on spaces. Nil on a bad escape.
    static func unescapedMountField(_ field: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(field.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "\\") else { bytes.append(byte); continue }
            guard iterator.count >= 3 else { return nil }
            var value = 0
            for _ in 0..<3 {
                guard let digit = iterator.popFirst(), digit >= 0x30, digit <= 0x37 else { return nil }
                value = value * 8 + Int(digit - 0x30)
            }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// One `memory.max` value.
public enum MemoryLimit: Equatable, Sendable {
    case unlimited
    case bytes(Int64)
}
