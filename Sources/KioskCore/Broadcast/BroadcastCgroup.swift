/// Where a broadcast the daemon starts gets its 50 MB memory cap: a leaf of the daemon's own
/// cgroup, which systemd hands to the daemon with `Delegate=memory` in kioskcam.service.
///
/// cgroup v2 lets processes live only in leaves once a cgroup passes controllers to its
/// children (the "no internal processes" rule), so the daemon first moves itself into
/// `<unit>/daemon`, then enables `+memory` in `<unit>/cgroup.subtree_control` and creates
/// `<unit>/broadcast` with `memory.max` = 50 MB. This type holds the decisions; the
/// file-system side is `BroadcastCgroupSetup` in KioskAppliance.
public struct BroadcastCgroup: Equatable, Sendable {
    /// kioskcam-broadcast.service's `MemoryMax=50M`, in bytes.
    public static let capBytes: Int64 = 50 * 1024 * 1024
    public static let daemonLeaf = "daemon"
    public static let broadcastLeaf = "broadcast"

    /// The daemon's cgroup as /proc/self/cgroup names it ("/system.slice/kioskcam.service").
    public let unitPath: String
    /// Its directory in the mounted cgroup2 file system.
    public let unitDirectory: String

    public var daemonDirectory: String { unitDirectory + "/" + Self.daemonLeaf }
    public var broadcastDirectory: String { unitDirectory + "/" + Self.broadcastLeaf }

    /// Finds the daemon's cgroup directory.
    /// - Parameters:
    ///   - procCgroup: `/proc/self/cgroup` (nil: unreadable).
    ///   - mountinfo: `/proc/self/mountinfo` (nil: unreadable).
    /// - Returns: The layout, or why there can be none.
    public static func locate(procCgroup: String?, mountinfo: String?) -> Result<BroadcastCgroup, BroadcastCapRefusal> {
        guard let procCgroup, let path = CgroupFacts.unifiedPath(procCgroup: procCgroup) else { return .failure(.noUnifiedHierarchy) }
        guard let mountinfo, let mount = CgroupFacts.unifiedMount(mountinfo: mountinfo) else { return .failure(.notMounted) }
        guard let directory = CgroupFacts.directory(of: path, mountPoint: mount.mountPoint, root: mount.root) else {
            return .failure(.notVisible(path: path, mountPoint: mount.mountPoint))
        }
        // A daemon restarted in place (exec, or a test) already sits in its own daemon leaf.
        var unitPath = path, unitDirectory = directory
        if path.hasSuffix("/" + daemonLeaf) {
            unitPath = String(path.dropLast(daemonLeaf.count + 1))
            unitDirectory = String(directory.dropLast(daemonLeaf.count + 1))
        }
        // The root cgroup belongs to the system's manager: never split it (systemd's rule too).
        guard unitPath != "/", !unitPath.isEmpty else { return .failure(.rootCgroup) }
        return .success(BroadcastCgroup(unitPath: unitPath, unitDirectory: unitDirectory))
    }

    /// Whether the daemon's cgroup can give the broadcast a memory limit, from its
    /// `cgroup.controllers` text.
    /// - Returns: nil when it can, else why not.
    public func refusal(controllers text: String?) -> BroadcastCapRefusal? {
        guard let text else { return .notDelegated(directory: unitDirectory, reason: "cannot read cgroup.controllers") }
        let available = CgroupFacts.controllers(text)
        guard available.contains("memory") else {
            return .noMemoryController(path: unitPath, available: available.sorted())
        }
        return nil
    }

    /// The processes other than the daemon in the unit's own cgroup (its `cgroup.procs`).
    /// Any at all, and the cgroup is no unit of the daemon's own but, say, the scope of the
    /// shell or login session it was started from: it is left alone, never split.
    /// - Returns: The other process ids, in the order listed (junk lines skipped).
    public static func otherProcesses(procs text: String, own pid: Int32) -> [Int32] {
        text.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }.filter { $0 != pid }
    }

    /// Whether `+memory` still has to be written to `cgroup.subtree_control`.
    public static func needsMemoryEnabled(subtreeControl text: String) -> Bool {
        !CgroupFacts.controllers(text).contains("memory")
    }

    /// Whether a read-back `memory.max` holds the cap.
    public static func holdsCap(memoryMax text: String) -> Bool {
        CgroupFacts.memoryLimit(text) == .bytes(capBytes)
    }
}

/// Why a broadcast the daemon starts runs without its memory cap. Each says what is wrong;
/// `fix` says what to change.
public enum BroadcastCapRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    case noUnifiedHierarchy
    case notMounted
    case notVisible(path: String, mountPoint: String)
    case rootCgroup
    case noMemoryController(path: String, available: [String])
    case notDelegated(directory: String, reason: String)
    case setupFailed(step: String, reason: String)

    public var description: String {
        switch self {
        case .noUnifiedHierarchy:
            "the daemon is in no cgroup v2 hierarchy (/proc/self/cgroup has no 0:: line)"
        case .notMounted:
            "cgroup2 is not mounted (no cgroup2 line in /proc/self/mountinfo)"
        case .notVisible(let path, let mountPoint):
            "the cgroup2 mount at \(mountPoint) does not show the daemon's cgroup \(path)"
        case .rootCgroup:
            "the daemon runs in the root cgroup, which kioskcam never splits"
        case .noMemoryController(let path, let available):
            "the memory controller is not available in the daemon's cgroup \(path) (cgroup.controllers: "
                + (available.isEmpty ? "none" : available.joined(separator: " ")) + ")"
        case .notDelegated(let directory, let reason):
            "the daemon's cgroup \(directory) is not delegated to it: \(reason)"
        case .setupFailed(let step, let reason):
            "\(step): \(reason)"
        }
    }

    /// What to change so that the cap holds.
    public var fix: String {
        "run the daemon as kioskcam.service, whose Delegate=memory (with ProtectControlGroups= off) hands it its cgroup "
            + "(check `systemctl cat kioskcam` for a drop-in that removes them), "
            + "or start broadcasts with `systemctl start kioskcam-broadcast` (MemoryMax=50M)"
    }
}

/// Whether the 50 MB cap holds for a broadcast the daemon starts: shown in `status`.
public enum BroadcastCap: Equatable, Sendable {
    /// Broadcasts run in this cgroup directory, whose `memory.max` is `bytes`.
    case enforced(directory: String, bytes: Int64)
    case notEnforced(BroadcastCapRefusal)

    /// The directory a started broadcast joins; nil when it runs uncapped.
    public var directory: String? {
        if case .enforced(let directory, _) = self { directory } else { nil }
    }

    /// `status`'s line: "50 MiB, enforced by the cgroup /sys/fs/cgroup/…/broadcast", or
    /// "NOT enforced: …; fix: …".
    public var line: String {
        switch self {
        case .enforced(let directory, let bytes):
            "\(bytes >> 20) MiB, enforced by the cgroup \(directory)"
        case .notEnforced(let refusal):
            "NOT enforced (\(refusal)); fix: \(refusal.fix)"
        }
    }
}
