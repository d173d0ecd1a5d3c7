import FuzzSupport
import KioskCore

/// The kernel texts the daemon reads to cap a broadcast, split from the input at NUL
/// bytes: `/proc/self/cgroup`, `/proc/self/mountinfo`, then a `memory.max` or controller
/// list. Properties beyond "no trap":
/// - a cgroup path is absolute; a directory under a mount never climbs out of it and never
///   holds "." or ".." components; each level lies under the mount point;
/// - a parsed `memory.max` reads back as its own text (no sign, no overflow, only digits);
/// - the effective limit is the smallest limit given and nil only when none is a number;
/// - a located layout is never the root cgroup, and its leaves lie inside its unit directory.
func fuzzCgroup(_ bytes: UnsafeRawBufferPointer) {
    let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let procCgroup = parts.first ?? ""
    let mountinfo = parts.count > 1 ? parts[1] : ""
    let value = parts.count > 2 ? parts[2] : ""
    Fuzz.trace("cgroup \(procCgroup.debugDescription) mountinfo \(mountinfo.debugDescription) value \(value.debugDescription)")

    let path = CgroupFacts.unifiedPath(procCgroup: procCgroup)
    if let path { Fuzz.require(path.hasPrefix("/"), "relative cgroup path \(path)") }
    let mount = CgroupFacts.unifiedMount(mountinfo: mountinfo)
    if let mount { Fuzz.require(mount.mountPoint.hasPrefix("/") && mount.root.hasPrefix("/"), "relative mount \(mount)") }
    if let path, let mount, let directory = CgroupFacts.directory(of: path, mountPoint: mount.mountPoint, root: mount.root) {
        let components = directory.split(separator: "/")
        Fuzz.require(!components.contains("..") && !components.contains("."), "\(directory) climbs")
        let base = mount.mountPoint.split(separator: "/")
        Fuzz.require(Array(components.prefix(base.count)) == base, "\(directory) is outside \(mount.mountPoint)")
        for level in CgroupFacts.levels(ofDirectory: directory, mountPoint: mount.mountPoint) {
            let parts = level.split(separator: "/")
            Fuzz.require(parts.count > base.count && Array(parts.prefix(base.count)) == base, "level \(level) outside \(mount.mountPoint)")
        }
    }

    if case .bytes(let limit) = CgroupFacts.memoryLimit(value) {
        // Only ASCII digits are read (whitespace around them aside), so they are the number.
        let digits = String(value.unicodeScalars.filter { $0.isASCII && ("0"..."9").contains($0) }.map(Character.init))
        Fuzz.require(limit >= 0 && Int64(digits) == limit, "memory.max \(value.debugDescription) read as \(limit)")
    }
    let limits = value.split(separator: "\n").compactMap { CgroupFacts.memoryLimit(String($0)) }
    let numbers = limits.compactMap { if case .bytes(let bytes) = $0 { bytes } else { nil } }
    Fuzz.require(CgroupFacts.effectiveLimit(limits) == numbers.min(), "effective limit of \(limits)")
    _ = CgroupFacts.controllers(value)
    if let kills = CgroupFacts.counter("oom_kill", in: value) { Fuzz.require(kills >= 0, "oom_kill \(kills)") }

    if case .success(let layout) = BroadcastCgroup.locate(procCgroup: procCgroup, mountinfo: mountinfo) {
        Fuzz.require(layout.unitPath != "/" && layout.broadcastDirectory.hasPrefix(layout.unitDirectory + "/"), "layout \(layout)")
        _ = layout.refusal(controllers: value)
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzCgroup", fuzzCgroup) }
}
