import Foundation
import Glibc
import KioskCore
import Logging
import SystemPackage

/// The file-system side of `BroadcastCgroup`: reads and writes the kernel's cgroup v2 files
/// so that a broadcast the daemon starts runs under the 50 MB cap kioskcam-broadcast.service
/// would give it. The decisions are in KioskCore; this only talks to the kernel.
public enum BroadcastCgroupSetup {
    /// Splits the daemon's delegated cgroup into `daemon` (where the daemon moves itself)
    /// and `broadcast` (`memory.max` = 50 MB, no swap). Call before the daemon starts other
    /// processes and before it tells systemd it is ready (systemd runs ExecReload= in a
    /// `.control` subgroup of a delegated unit, which needs the unit's cgroup to be inner).
    /// - Returns: Whether the cap holds; when it does not, why (logged once, as a warning).
    public static func prepare(logger: Logger) -> BroadcastCap {
        let cap: BroadcastCap
        switch split() {
        case .success(let directory): cap = .enforced(directory: directory, bytes: BroadcastCgroup.capBytes)
        case .failure(let refusal): cap = .notEnforced(refusal)
        }
        switch cap {
        case .enforced: logger.notice("broadcast: memory cap \(cap.line)")
        case .notEnforced: logger.warning("broadcast: memory cap \(cap.line)")
        }
        return cap
    }

    private static func split() -> Result<String, BroadcastCapRefusal> {
        let layout: BroadcastCgroup
        switch BroadcastCgroup.locate(procCgroup: read("/proc/self/cgroup"), mountinfo: read("/proc/self/mountinfo")) {
        case .success(let found): layout = found
        case .failure(let refusal): return .failure(refusal)
        }
        let unit = layout.unitDirectory
        guard access(unit + "/cgroup.subtree_control", W_OK) == 0, access(unit, W_OK) == 0 else {
            return .failure(.notDelegated(directory: unit, reason: Errno(rawValue: errno).description
                                             + " (a read-only /sys/fs/cgroup: ProtectControlGroups=yes, or a container)"))
        }
        if let refusal = layout.refusal(controllers: read(unit + "/cgroup.controllers")) { return .failure(refusal) }
        let others = BroadcastCgroup.otherProcesses(procs: read(unit + "/cgroup.procs") ?? "", own: getpid())
        guard others.isEmpty else {
            let listed = others.prefix(3).map(String.init).joined(separator: ", ") + (others.count > 3 ? ", …" : "")
            return .failure(.notDelegated(directory: unit, reason: "other processes share it (pid \(listed)): it is the cgroup of "
                                             + "whatever started the daemon (a shell, a login session), not a unit of its own"))
        }
        do throws(BroadcastCapRefusal) {
            try makeDirectory(layout.daemonDirectory)
            try write("\(getpid())", to: layout.daemonDirectory + "/cgroup.procs", step: "moving the daemon into \(layout.daemonDirectory)")
            if BroadcastCgroup.needsMemoryEnabled(subtreeControl: read(unit + "/cgroup.subtree_control") ?? "") {
                // EBUSY here: another process still sits in the unit's own cgroup.
                try write("+memory", to: unit + "/cgroup.subtree_control", step: "enabling +memory in \(unit)/cgroup.subtree_control")
            }
            let broadcast = layout.broadcastDirectory
            try makeDirectory(broadcast)
            try write("\(BroadcastCgroup.capBytes)", to: broadcast + "/memory.max", step: "setting \(broadcast)/memory.max")
            // Like MemorySwapMax=0 in the unit: no swap to hide in (absent without swap accounting).
            if FileManager.default.fileExists(atPath: broadcast + "/memory.swap.max") {
                try write("0", to: broadcast + "/memory.swap.max", step: "setting \(broadcast)/memory.swap.max")
            }
            guard let readBack = read(broadcast + "/memory.max"), BroadcastCgroup.holdsCap(memoryMax: readBack) else {
                throw .setupFailed(step: "checking \(broadcast)/memory.max", reason: "it does not read \(BroadcastCgroup.capBytes)")
            }
            return .success(broadcast)
        } catch {
            return .failure(error)
        }
    }

    /// Moves the calling process into `directory` (the broadcast's first act when the
    /// daemon starts it with `--cgroup`).
    /// - Throws: `BroadcastCapRefusal.setupFailed` naming the directory and the errno.
    public static func join(_ directory: String) throws(BroadcastCapRefusal) {
        try write("0", to: directory + "/cgroup.procs", step: "joining the cgroup \(directory)")
    }

    /// The cgroup the calling process is in and the memory limit that holds there (the
    /// smallest `memory.max` from it up to the root; nil: none), for broadcast.json.
    public static func ownLimit() -> (cgroup: String?, bytes: Int64?) {
        guard let path = read("/proc/self/cgroup").flatMap(CgroupFacts.unifiedPath(procCgroup:)) else { return (nil, nil) }
        guard let mount = read("/proc/self/mountinfo").flatMap(CgroupFacts.unifiedMount(mountinfo:)),
              let directory = CgroupFacts.directory(of: path, mountPoint: mount.mountPoint, root: mount.root) else {
            return (path, nil)
        }
        let limits = CgroupFacts.levels(ofDirectory: directory, mountPoint: mount.mountPoint)
            .compactMap { read($0 + "/memory.max").flatMap(CgroupFacts.memoryLimit) }
        return (path, CgroupFacts.effectiveLimit(limits))
    }

    /// How often the kernel's OOM killer ended a process in `directory` (its
    /// `memory.events` oom_kill) since the cgroup was made; nil when unreadable.
    public static func oomKills(in directory: String) -> Int? {
        read(directory + "/memory.events").flatMap { CgroupFacts.counter("oom_kill", in: $0) }
    }

    /// A small kernel file's text; nil when it cannot be read.
    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func makeDirectory(_ path: String) throws(BroadcastCapRefusal) {
        if mkdir(path, 0o755) != 0, errno != EEXIST {
            throw .setupFailed(step: "creating the cgroup \(path)", reason: Errno(rawValue: errno).description)
        }
    }

    /// One write(2) of `text`: a cgroup file takes each write as one command.
    private static func write(_ text: String, to path: String, step: String) throws(BroadcastCapRefusal) {
        do {
            let file = try FileDescriptor.open(path, .writeOnly, options: [.closeOnExec], retryOnInterrupt: true)
            try file.closeAfter { _ = try file.writeAll(Array((text + "\n").utf8)) }
        } catch let error as Errno {
            throw .setupFailed(step: step, reason: error.description)
        } catch {
            throw .setupFailed(step: step, reason: "\(error)")
        }
    }
}
