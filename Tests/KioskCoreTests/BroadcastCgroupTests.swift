import Foundation
import XCTest
@testable import KioskCore

/// The decisions behind a daemon-started broadcast's 50 MB cap: reading /proc/self/cgroup,
/// mountinfo, controller lists and memory.max, and where the leaves go.
final class BroadcastCgroupTests: XCTestCase {
    /// A Debian bookworm board (unified hierarchy) running kioskcam.service.
    static let boardCgroup = "0::/system.slice/kioskcam.service\n"
    static let boardMountinfo = """
        22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
        25 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
        28 1 179:2 / / rw,relatime shared:1 - ext4 /dev/root rw

        """
    /// This build machine: hybrid (cgroup v1 controllers, a controller-less v2 at …/unified).
    static let hybridCgroup = "9:name=systemd:/\n4:memory:/process_api/23d4\n1:cpu:/\n0::/\n"
    static let hybridMountinfo = """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        36 31 0:33 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw

        """

    func testTheUnifiedLineIsFoundAmongV1Lines() {
        XCTAssertEqual(CgroupFacts.unifiedPath(procCgroup: Self.boardCgroup), "/system.slice/kioskcam.service")
        XCTAssertEqual(CgroupFacts.unifiedPath(procCgroup: Self.hybridCgroup), "/")
        // A path may hold ':'; only the first two split.
        XCTAssertEqual(CgroupFacts.unifiedPath(procCgroup: "0::/a:b/c"), "/a:b/c")
    }

    func testNoUnifiedLineOrABadPathGivesNil() {
        XCTAssertNil(CgroupFacts.unifiedPath(procCgroup: "4:memory:/x\n1:cpu:/\n"))   // cgroup v1 only
        XCTAssertNil(CgroupFacts.unifiedPath(procCgroup: "0:memory:/x"))             // hierarchy 0 with controllers is not v2
        XCTAssertNil(CgroupFacts.unifiedPath(procCgroup: "0::relative"))
        XCTAssertNil(CgroupFacts.unifiedPath(procCgroup: "0::/gone (deleted)"))
        XCTAssertNil(CgroupFacts.unifiedPath(procCgroup: ""))
        XCTAssertNil(CgroupFacts.unifiedPath(procCgroup: "::::"))
    }

    func testTheCgroup2MountIsFoundWithOptionalFieldsAndEscapes() throws {
        let board = try XCTUnwrap(CgroupFacts.unifiedMount(mountinfo: Self.boardMountinfo))
        XCTAssertEqual(board.mountPoint, "/sys/fs/cgroup")
        XCTAssertEqual(board.root, "/")
        let hybrid = try XCTUnwrap(CgroupFacts.unifiedMount(mountinfo: Self.hybridMountinfo))
        XCTAssertEqual(hybrid.mountPoint, "/sys/fs/cgroup/unified")
        let spaced = try XCTUnwrap(CgroupFacts.unifiedMount(mountinfo: "5 1 0:9 /ns\\040root /mnt/cg\\0402 rw - cgroup2 none rw\n"))
        XCTAssertEqual(spaced.mountPoint, "/mnt/cg 2")
        XCTAssertEqual(spaced.root, "/ns root")
        XCTAssertNil(CgroupFacts.unifiedMount(mountinfo: "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n"))
        XCTAssertNil(CgroupFacts.unifiedMount(mountinfo: "5 1 0:9 / /mnt\\09 rw - cgroup2 none rw\n"), "a bad escape is no mount")
        XCTAssertNil(CgroupFacts.unifiedMount(mountinfo: "- cgroup2"))
    }

    func testDirectoriesUnderAMountThatShowsASubtree() {
        XCTAssertEqual(CgroupFacts.directory(of: "/system.slice/k.service", mountPoint: "/sys/fs/cgroup", root: "/"),
                       "/sys/fs/cgroup/system.slice/k.service")
        XCTAssertEqual(CgroupFacts.directory(of: "/", mountPoint: "/sys/fs/cgroup/unified", root: "/"), "/sys/fs/cgroup/unified")
        XCTAssertEqual(CgroupFacts.directory(of: "/box/app", mountPoint: "/sys/fs/cgroup", root: "/box"), "/sys/fs/cgroup/app")
        XCTAssertNil(CgroupFacts.directory(of: "/other/app", mountPoint: "/sys/fs/cgroup", root: "/box"))
        XCTAssertNil(CgroupFacts.directory(of: "/a/../../etc", mountPoint: "/sys/fs/cgroup", root: "/"))
    }

    func testMemoryMaxValues() {
        XCTAssertEqual(CgroupFacts.memoryLimit("max\n"), .unlimited)
        XCTAssertEqual(CgroupFacts.memoryLimit("52428800\n"), .bytes(52_428_800))
        XCTAssertEqual(CgroupFacts.memoryLimit("0"), .bytes(0))
        for bad in ["", "-1", "50M", "12 34", "99999999999999999999", "max max", "+5", "\u{0660}"] {
            XCTAssertNil(CgroupFacts.memoryLimit(bad), bad)
        }
        XCTAssertEqual(CgroupFacts.effectiveLimit([.unlimited, .bytes(80 << 20), .bytes(50 << 20)]), 50 << 20)
        XCTAssertNil(CgroupFacts.effectiveLimit([.unlimited, .unlimited]))
        XCTAssertNil(CgroupFacts.effectiveLimit([]))
        XCTAssertTrue(BroadcastCgroup.holdsCap(memoryMax: "52428800\n"))
        XCTAssertFalse(BroadcastCgroup.holdsCap(memoryMax: "max\n"))
        XCTAssertFalse(BroadcastCgroup.holdsCap(memoryMax: "52424704\n"))   // rounded to pages by an odd kernel: not the cap
    }

    func testLevelsRunFromTheCgroupUpToTheMount() {
        XCTAssertEqual(CgroupFacts.levels(ofDirectory: "/sys/fs/cgroup/a.slice/b.service/broadcast", mountPoint: "/sys/fs/cgroup"),
                       ["/sys/fs/cgroup/a.slice/b.service/broadcast", "/sys/fs/cgroup/a.slice/b.service", "/sys/fs/cgroup/a.slice"])
        XCTAssertEqual(CgroupFacts.levels(ofDirectory: "/sys/fs/cgroup", mountPoint: "/sys/fs/cgroup"), [])
        XCTAssertEqual(CgroupFacts.levels(ofDirectory: "/elsewhere/x", mountPoint: "/sys/fs/cgroup"), [])
        XCTAssertEqual(CgroupFacts.levels(ofDirectory: "/sys/fs/cgroupx/y", mountPoint: "/sys/fs/cgroup"), [])
    }

    func testCountersOfMemoryEvents() {
        let events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n"
        XCTAssertEqual(CgroupFacts.counter("oom_kill", in: events), 1)
        XCTAssertEqual(CgroupFacts.counter("max", in: events), 12)
        XCTAssertNil(CgroupFacts.counter("oom_kil", in: events))
        XCTAssertNil(CgroupFacts.counter("oom_kill", in: "oom_kill -1\n"))
        XCTAssertNil(CgroupFacts.counter("oom_kill", in: "oom_kill 99999999999999999999999\n"))
        XCTAssertNil(CgroupFacts.counter("oom_kill", in: ""))
    }

    func testControllerLists() {
        XCTAssertEqual(CgroupFacts.controllers("cpuset cpu io memory pids\n"), ["cpuset", "cpu", "io", "memory", "pids"])
        XCTAssertEqual(CgroupFacts.controllers("\n"), [])
        XCTAssertTrue(BroadcastCgroup.needsMemoryEnabled(subtreeControl: "cpu pids\n"))
        XCTAssertFalse(BroadcastCgroup.needsMemoryEnabled(subtreeControl: "memory\n"))
    }

    func testTheLayoutOfADelegatedUnit() throws {
        let layout = try BroadcastCgroup.locate(procCgroup: Self.boardCgroup, mountinfo: Self.boardMountinfo).get()
        XCTAssertEqual(layout.unitPath, "/system.slice/kioskcam.service")
        XCTAssertEqual(layout.daemonDirectory, "/sys/fs/cgroup/system.slice/kioskcam.service/daemon")
        XCTAssertEqual(layout.broadcastDirectory, "/sys/fs/cgroup/system.slice/kioskcam.service/broadcast")
        XCTAssertNil(layout.refusal(controllers: "cpu memory pids\n"))
        XCTAssertEqual(layout.refusal(controllers: "cpu pids\n"),
                       .noMemoryController(path: "/system.slice/kioskcam.service", available: ["cpu", "pids"]))
        XCTAssertEqual(BroadcastCgroup.capBytes, 52_428_800, "kioskcam-broadcast.service's MemoryMax=50M")
    }

    func testADaemonAlreadyInItsLeafFindsTheSameUnit() throws {
        let layout = try BroadcastCgroup.locate(procCgroup: "0::/system.slice/kioskcam.service/daemon\n",
                                                mountinfo: Self.boardMountinfo).get()
        XCTAssertEqual(layout.unitPath, "/system.slice/kioskcam.service")
        XCTAssertEqual(layout.broadcastDirectory, "/sys/fs/cgroup/system.slice/kioskcam.service/broadcast")
    }

    /// A cgroup shared with other processes (a shell's or login session's scope) is never
    /// split; the daemon alone, or already in its leaf (an empty list), may be.
    func testOnlyACgroupOfTheDaemonsOwnIsSplit() {
        XCTAssertEqual(BroadcastCgroup.otherProcesses(procs: "812\n", own: 812), [])
        XCTAssertEqual(BroadcastCgroup.otherProcesses(procs: "", own: 812), [])
        XCTAssertEqual(BroadcastCgroup.otherProcesses(procs: "401\n812\n977\n", own: 812), [401, 977])
        XCTAssertEqual(BroadcastCgroup.otherProcesses(procs: "junk\n812\n-\n99999999999\n", own: 812), [])
    }

    func testRefusalsSayWhatIsWrongAndTheFix() {
        XCTAssertEqual(BroadcastCgroup.locate(procCgroup: Self.hybridCgroup, mountinfo: Self.hybridMountinfo), .failure(.rootCgroup))
        XCTAssertEqual(BroadcastCgroup.locate(procCgroup: "0::/daemon\n", mountinfo: Self.boardMountinfo), .failure(.rootCgroup))
        XCTAssertEqual(BroadcastCgroup.locate(procCgroup: "4:memory:/x\n", mountinfo: Self.boardMountinfo), .failure(.noUnifiedHierarchy))
        XCTAssertEqual(BroadcastCgroup.locate(procCgroup: nil, mountinfo: Self.boardMountinfo), .failure(.noUnifiedHierarchy))
        XCTAssertEqual(BroadcastCgroup.locate(procCgroup: Self.boardCgroup, mountinfo: "1 0 0:1 / / rw - ext4 x rw\n"), .failure(.notMounted))
        XCTAssertEqual(BroadcastCgroup.locate(procCgroup: Self.boardCgroup,
                                              mountinfo: "5 1 0:9 /box /sys/fs/cgroup rw - cgroup2 none rw\n"),
                       .failure(.notVisible(path: "/system.slice/kioskcam.service", mountPoint: "/sys/fs/cgroup")))
        let cap = BroadcastCap.notEnforced(.noMemoryController(path: "/", available: ["hugetlb"]))
        XCTAssertNil(cap.directory)
        XCTAssertTrue(cap.line.hasPrefix("NOT enforced (the memory controller is not available in the daemon's cgroup / (cgroup.controllers: hugetlb))"), cap.line)
        XCTAssertTrue(cap.line.contains("Delegate=memory"), cap.line)
        XCTAssertTrue(cap.line.contains("systemctl start kioskcam-broadcast"), cap.line)
        let enforced = BroadcastCap.enforced(directory: "/sys/fs/cgroup/k.service/broadcast", bytes: BroadcastCgroup.capBytes)
        XCTAssertEqual(enforced.directory, "/sys/fs/cgroup/k.service/broadcast")
        XCTAssertEqual(enforced.line, "50 MiB, enforced by the cgroup /sys/fs/cgroup/k.service/broadcast")
    }

    func testStatusShowsTheCapAndOldStatusFilesStillDecode() throws {
        var report = StatusReport(state: .idle)
        report.broadcastCap = BroadcastCap.notEnforced(.rootCgroup).line
        report.broadcastMemoryMax = 52_428_800
        XCTAssertTrue(report.lines.contains { $0.hasPrefix("broadcast cap: NOT enforced (the daemon runs in the root cgroup") })
        let json = try XCTUnwrap(String(data: JSONEncoder().encode(report), encoding: .utf8))
        XCTAssertTrue(json.contains("\"broadcast_cap\":\"NOT enforced"), json)
        XCTAssertTrue(json.contains("\"broadcast_memory_max\":52428800"), json)
        // broadcast.json from a broadcast of before (no cgroup fields) reads as "not reported".
        let old = #"{"state":"live","source":"screen","pid":7,"startedAt":1,"updatedAt":2,"width":800,"height":480,"#
            + #""framesPerSecond":10,"videoBitrate":900000,"droppedFrames":0,"destinations":[]}"#
        let decoded = try XCTUnwrap(BroadcastStatus.decode(Data(old.utf8)))
        XCTAssertNil(decoded.memoryMaxBytes)
        XCTAssertNil(decoded.cgroup)
        var capped = decoded
        capped.cgroup = "/k.service/broadcast"
        capped.memoryMaxBytes = 52_428_800
        XCTAssertEqual(BroadcastStatus.decode(capped.encoded()), capped)
    }

    /// Random and mutated kernel texts: every parser answers (nil is fine), none traps.
    func testParsersNeverTrapOnOddInput() {
        var rng = ControlFuzzTests.SplitMix(state: 0xC6_0F)
        let seeds = [Self.boardCgroup, Self.hybridCgroup, Self.boardMountinfo, Self.hybridMountinfo, "max\n", "52428800\n",
                     "cpu memory\n", "0::/a\\040b (deleted)\n", "5 1 0:9 /\\1 /\\777 rw - cgroup2 x rw\n"]
        let alphabet = Array("0123456789:/- \\\n\tmaxcgroup2()é\u{0}".utf8)
        var answered = 0
        for _ in 0..<4000 {
            var bytes = Array(seeds.randomElement(using: &rng)!.utf8)
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let at = Int.random(in: 0...bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes.insert(alphabet.randomElement(using: &rng)!, at: at)
                case 1 where at < bytes.count: bytes.remove(at: at)
                default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let path = CgroupFacts.unifiedPath(procCgroup: text)
            let mount = CgroupFacts.unifiedMount(mountinfo: text)
            _ = CgroupFacts.memoryLimit(text)
            _ = CgroupFacts.controllers(text)
            _ = CgroupFacts.counter("oom_kill", in: text)
            if let path, let mount {
                _ = CgroupFacts.directory(of: path, mountPoint: mount.mountPoint, root: mount.root)
            }
            _ = CgroupFacts.levels(ofDirectory: text, mountPoint: mount?.mountPoint ?? "/")
            _ = BroadcastCgroup.locate(procCgroup: text, mountinfo: text)
            answered += 1
        }
        XCTAssertEqual(answered, 4000)
    }
}
