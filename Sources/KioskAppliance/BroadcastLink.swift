import Foundation
import Glibc
import KioskBroadcast
import KioskCore
import KioskMedia
import KioskSources
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
                throw ApplianceError("a broadcast is already running (pid \(child.pid)); stop it first with `kioskcam broadcast stop`")
            }
            var arguments = Array(command.dropFirst()) + ["--source", "screen", "--quiet", "--status-file", statusPath]
            // The child joins the capped cgroup itself and then re-executes, so that everything
            // it maps is charged there (memory charged before a move stays where it was).
            if let directory = cap.directory { arguments += ["--cgroup", directory] }
            for destination in destinations { arguments += ["--to", destination] }
            if let duration { arguments += ["--duration", String(format: "%.0fs", duration.rounded(.up))] }
            if let size { arguments += ["--size", size.description] }
            guard let program = command.first else { throw ApplianceError("no kioskcam program to start the broadcast with") }
            let child: ChildProcess
            do {
                child = try ChildProcess(program: program, arguments: arguments)
            } catch {
                throw ApplianceError("cannot start the broadcast: \(error)")
            }
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
