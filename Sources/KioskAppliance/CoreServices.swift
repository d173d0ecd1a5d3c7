import Foundation
import KioskCore
import KioskSources
import Logging
import ServiceLifecycle

// Each service's `run()` runs on the Swift concurrency pool (two threads on a Pi-class
// board), so everything that blocks — opening devices, joining threads, finishing a file,
// a disk scan — goes through `onBackgroundThread`, and periodic work has its own thread.

/// The recorder as a service. It is listed first, so on shutdown it goes last: by then
/// capture has stopped, and it finishes the file (trailer written, moved into the
/// library) before the process exits. The storage guard runs alongside it.
struct RecordingService: Service {
    let appliance: Appliance

    func run() async throws {
        appliance.storage.start()
        try? await gracefulShutdown()
        await onBackgroundThread("kioskcam.finish") { appliance.finishRecording() }
    }
}

/// Camera and microphone: running from start-up (the screen shows the picture),
/// stopped before the recorder finishes.
struct CaptureService: Service {
    let appliance: Appliance

    /// A camera that cannot start (busy, gone) is logged and tried again every 5 s; the
    /// rest of the appliance keeps running meanwhile.
    func run() async throws {
        var lastError: String?
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await onBackgroundThread("kioskcam.capture-start") { [appliance] in try appliance.startSources() }
                if lastError != nil { appliance.logger.notice("capture started") }
                break
            } catch {
                let message = "\(error)"
                if message != lastError { appliance.logger.error("capture did not start: \(message); trying again every 5 s") }
                lastError = message
                try? await Task.sleep(for: .seconds(5))
            }
        }
        try? await gracefulShutdown()
        // The stream first, while the camera still runs: its last HLS segment is finished
        // to a second (at most 1.5 s more), not cut to the frames of the stop's instant.
        await onBackgroundThread("kioskcam.stream-stop") { [appliance] in appliance.stream?.stop() }
        appliance.logger.info("stopping capture")
        await onBackgroundThread("kioskcam.capture-stop") { [appliance] in appliance.stopSources() }
    }
}

/// Upkeep as a service: its thread runs from start to shutdown.
struct UpkeepService: Service {
    let upkeep: Upkeep

    func run() async throws {
        upkeep.start()
        try? await gracefulShutdown()
        await onBackgroundThread("kioskcam.upkeep-stop") { [upkeep] in upkeep.stop() }
    }
}

/// Twice a second, on its own thread: follow the camera's health (a lost camera ends
/// the file, its return resumes recording — both may block), feed the screen and the
/// status line, and ping systemd's watchdog — only while every watched thread (the
/// encoders, the UI loop) has made progress since the last ping, so a stuck one gets
/// the daemon restarted.
final class Upkeep: Sendable {
    private let thread: RepeatingThread

    /// - Parameters:
    ///   - watched: The threads whose heartbeats gate the watchdog.
    ///   - tick: Work done each round with the current status (screen, socket events).
    init(appliance: Appliance, notifier: SystemdNotifier, watched: [(name: String, beats: @Sendable () -> UInt64)],
         tick: @escaping @Sendable (ApplianceStatus) -> Void) {
        // The upkeep thread's own (it is the only one that uses it).
        let gate = Locked(WatchdogGate(names: watched.map(\.name), now: SystemClock().now()))
        thread = RepeatingThread(name: "kioskcam.upkeep", interval: 0.5) { _ in
            Self.round(appliance: appliance, notifier: notifier, watched: watched, gate: gate, tick: tick)
        }
    }

    func start() { thread.start() }

    /// Ends the thread and waits for it. Blocking.
    func stop() { thread.stop() }

    private static func round(appliance: Appliance, notifier: SystemdNotifier, watched: [(name: String, beats: @Sendable () -> UInt64)],
                              gate: Locked<WatchdogGate>, tick: @Sendable (ApplianceStatus) -> Void) {
        appliance.superviseCamera()
        let beats = watched.map { $0.beats() }
        let now = SystemClock().now()
        let outcome = gate.withLock { $0.observe(beats, now: now) }
        for (name, seconds) in outcome.stalled {
            // A warning: a slow moment (an emulated guest, swap) looks the same; systemd's
            // watchdog, which acts after WatchdogSec, is what decides it is stuck.
            appliance.logger.warning("the \(name) thread has made no progress for \(Int(seconds)) s; systemd's watchdog restarts kioskcam if it stays stuck")
        }
        for name in outcome.recovered { appliance.logger.notice("the \(name) thread is making progress again") }
        if outcome.ping, notifier.watchdogInterval != nil { notifier.watchdog() }
        let status = appliance.status
        tick(status)
        notifier.status(ApplianceRunner.statusLine(status))
    }
}
