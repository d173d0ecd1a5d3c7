import Foundation
import KioskCore
import Logging
import ServiceLifecycle

/// The recorder as a service. It is listed first, so on shutdown it goes last: by then
/// capture has stopped, and it finishes the file (trailer written, moved into the
/// library) before the process exits.
struct RecordingService: Service {
    let appliance: Appliance

    func run() async throws {
        try? await gracefulShutdown()
        appliance.finishRecording()
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
                try appliance.startSources()
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
        appliance.logger.info("stopping capture")
        appliance.stopSources()
    }
}

/// Twice a second: follow the camera's health, ping the watchdog; every few seconds the
/// metrics file; hourly retention.
struct UpkeepService: Service {
    let appliance: Appliance
    let notifier: SystemdNotifier
    /// Work done on every tick besides the camera (metrics, status text).
    let tick: @Sendable (_ now: Date) -> Void

    func run() async throws {
        var lastPurge = Date()
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let now = Date()
            appliance.superviseCamera()
            if notifier.watchdogInterval != nil { notifier.watchdog() }
            if now.timeIntervalSince(lastPurge) >= 3600 {
                lastPurge = now
                let configuration = appliance.configuration
                LibraryStorage.purge(configuration, logger: appliance.logger,
                                     protecting: [CalendarDate(LocalTimestamp(now))])
            }
            tick(now)
            try? await Task.sleep(for: .milliseconds(500))
        }
    }
}
