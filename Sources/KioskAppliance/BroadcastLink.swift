import Foundation
import Glibc
import KioskBroadcast
import KioskCore
import KioskMedia
import Logging

/// The daemon's side of the broadcast (the seed's app ↔ extension messages): it starts
/// and stops one `kioskcam broadcast --source screen` process, and reads what that process
/// reports in its status file, for `status`, `watch` events and the screen.
///
/// The broadcast is a separate process so that its memory limit is its own: started here it
/// joins the `broadcast` leaf of the daemon's delegated cgroup (`memory.max` = 50 MB, see
/// `BroadcastCgroupSetup`), as `kioskcam-broadcast.service`'s `MemoryMax=50M` would cap it;
/// where the cgroup is not delegated it runs uncapped and `status` says so. The daemon
/// never waits on it except to stop it.
public final class BroadcastLink: Sendable {
    /// The program and its leading arguments: `[/usr/bin/kioskcam, broadcast, --config, FILE]`.
    private let command: [String]
    private let statusPath: String
    /// Whether the 50 MB cap holds for what `start` starts, and where.
    public let cap: BroadcastCap
    private let logger: Logger
    private struct State {
        var child: ChildProcess?
        var lastRead = 0.0
        var status: BroadcastStatus?
        var lastPublished: BroadcastStatus.State?
    }
    private let state = Locked(State())

    /// - Parameters:
    ///   - command: How to run `kioskcam broadcast` with the daemon's configuration.
    ///   - stateDirectory: Where the broadcast writes `broadcast.json`.
    ///   - cap: The cgroup a started broadcast joins (`BroadcastCgroupSetup.prepare`).
    public init(command: [String], stateDirectory: String, cap: BroadcastCap, logger: Logger) {
        self.command = command
        statusPath = stateDirectory + "/" + BroadcastStatus.fileName
        self.cap = cap
        self.logger = logger
    }

    /// Starts a screen broadcast.
    /// - Returns: The process id.
    /// - Throws: `ApplianceError` when one already runs or the program cannot start.
    /// - Parameter size: `--size` (nil: the largest that fits the memory budget); a size the
    ///   screen cannot give ends the child with exit 64, which broadcast.json reports.
    public func start(destinations: [String], duration: Double?, size: FrameSize? = nil) throws(ApplianceError) -> Int32 {
        try state.withLock { state throws(ApplianceError) -> Int32 in
            if let child = state.child, child.isRunning {
                throw ApplianceError("a broadcast is already running (pid \(child.pid)); stop it first with `kioskcam broadcast-stop`")
            }
            var arguments = Array(command.dropFirst()) + ["--source", "screen", "--quiet", "--status-file", statusPath]
            // The child joins the capped cgroup itself and then re-executes, so that everything
            // it maps is charged there (memory charged before a move stays where it was).
            if let directory = cap.directory { arguments += ["--cgroup", directory] }
            for destination in destinations { arguments += ["--to", destination] }
            if let duration { arguments += ["--duration", String(format: "%.0fs", duration.rounded(.up))] }
            if let size { arguments += ["--size", size.description] }
            guard let program = command.first else { throw ApplianceError("no kioskcam program to start the broadcast with") }
            let child = try ChildProcess(program: program, arguments: arguments)
            state.child = child
            state.status = nil
            logger.notice("broadcast: started pid \(child.pid) to \(destinations.map { PacketStreamWriter.redacted($0) }.joined(separator: ", "))")
            return child.pid
        }
    }

    /// Stops the broadcast (SIGTERM: it finishes its library file) and waits up to
    /// `timeout` seconds, then kills it. Blocking.
    /// - Returns: False when none was running.
    public func stop(timeout: Double = 20) -> Bool {
        guard let child = state.withLock({ $0.child }), child.isRunning else { return false }
        child.signal(SIGTERM)
        if !child.wait(timeout: timeout) {
            logger.warning("broadcast: pid \(child.pid) did not stop within \(Int(timeout)) s; killing it")
            child.signal(SIGKILL)
            _ = child.wait(timeout: 5)
        }
        state.withLock { $0.lastRead = 0 }
        return true
    }

    /// What the broadcast last reported (re-read at most once a second), or nil when
    /// there never was one.
    public func current(now: Double = Date().timeIntervalSince1970) -> BroadcastStatus? {
        let path = statusPath
        return state.withLock { state in
            if now - state.lastRead >= 1 {
                state.lastRead = now
                state.status = FileManager.default.contents(atPath: path).flatMap(BroadcastStatus.decode)
            }
            return state.status
        }
    }

    /// A `broadcast` event when the state changed since the last call (the daemon's tick).
    public func stateEvent(now: Double = Date().timeIntervalSince1970) -> ControlEvent? {
        guard let status = current(now: now) else { return nil }
        let effective = status.effectiveState(now: now)
        let changed = state.withLock { state -> Bool in
            defer { state.lastPublished = effective }
            return state.lastPublished != effective
        }
        guard changed else { return nil }
        var data: [String: JSONValue] = ["state": .string(effective.rawValue), "bytes": .integer(status.bytes),
                                         "dropped_gops": .integer(Int64(status.droppedGOPs)), "source": .string(status.source)]
        if let error = status.error { data["error"] = .string(error) }
        return ControlEvent(.broadcast, data)
    }

    /// Fills the broadcast fields of a status report.
    public func fill(_ report: inout StatusReport, now: Double = Date().timeIntervalSince1970) {
        report.broadcastCap = cap.line
        // Over the cap the kernel kills the broadcast without a word: say so where people look.
        let kills = cap.directory.flatMap(BroadcastCgroupSetup.oomKills(in:))
        report.broadcastOOMKills = kills
        defer {
            if let kills, kills > 0, let line = report.broadcastCap {
                report.broadcastCap = line + "; the kernel killed a broadcast \(kills) time(s) for going over it (memory.events oom_kill)"
            }
        }
        guard let status = current(now: now) else { return }
        report.broadcastMemoryMax = status.memoryMaxBytes
        let limit: String = status.memoryMaxBytes.map { "under memory.max \($0 >> 20) MiB" } ?? "with no memory limit"
        let place: String = status.cgroup.map { " in the cgroup \($0)" } ?? ""
        report.broadcastCap = "\(cap.line); the last broadcast (pid \(status.pid)) ran \(limit)\(place)"
        report.broadcastState = status.effectiveState(now: now).rawValue
        report.broadcastBytes = status.bytes
        report.broadcastDroppedGOPs = status.droppedGOPs
        report.broadcast = status.line(now: now)
    }

    /// Stops a running broadcast when the daemon ends.
    public func shutdown() { _ = stop() }
}

/// A child process with one owner: started, signalled, waited for (reaped) once.
///
/// Spawned and reaped here with `posix_spawn` and `waitpid(WNOHANG)` rather than through
/// Foundation's `Process`, whose exit monitoring runs on a run-loop thread of its own: in
/// the guest that thread never saw the broadcast end (its wake-up socket pair could not be
/// made), so a stopped broadcast stayed "running" and the next start was refused.
final class ChildProcess: Sendable {
    let pid: Int32
    /// The wait status once reaped; nil while it runs.
    private let exitStatus = Locked<Int32?>(nil)

    init(program: String, arguments: [String]) throws(ApplianceError) {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // No input, the daemon's output for its log, and none of the daemon's other
        // descriptors (camera, sound card, sockets): the broadcast opens its own.
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        Self.closeFromThree(&actions)
        // Signals as a fresh process has them: the daemon's blocked or ignored ones
        // (SIGTERM is taken by its own handler) must not keep the child from stopping.
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([program] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { pointers -> Int32 in
            guard let base = pointers.baseAddress else { return EINVAL }
            return posix_spawn(&child, program, &actions, &attributes, base, environ)
        }
        guard result == 0 else {
            throw ApplianceError("cannot start \(program) broadcast: \(String(cString: strerror(result)))")
        }
        pid = child
    }

    /// Adds "close every descriptor from 3 up": glibc ≥ 2.34's
    /// `posix_spawn_file_actions_addclosefrom_np` (declared only under _GNU_SOURCE, which
    /// Swift's Glibc module does not set, so looked up by name), else one close per
    /// descriptor open now.
    private static func closeFromThree(_ actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in open {
            if let fd = Int32(name), fd >= 3 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    var isRunning: Bool {
        exitStatus.withLock { status in
            if status != nil { return false }
            var waitStatus: Int32 = 0
            let reaped = waitpid(pid, &waitStatus, WNOHANG)
            if reaped == pid {
                status = waitStatus
                return false
            }
            // ECHILD: already reaped elsewhere; either way it is gone.
            if reaped < 0 && errno != EINTR {
                status = -1
                return false
            }
            return true
        }
    }

    func signal(_ number: Int32) { if isRunning { kill(pid, number) } }

    /// Waits until it exits or `timeout` passes; whether it exited.
    func wait(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return !isRunning
    }
}
