import Dispatch
import Foundation
import Glibc
import KioskCore
import Logging
import ServiceLifecycle

/// `kioskcam run`: builds the appliance's services and runs them as one
/// `ServiceGroup` until SIGTERM/SIGINT (or `runFor` seconds, for the demo).
///
/// Start order is the list order; shutdown is the reverse, so the control socket and
/// the screen go first, capture stops next, and the recorder finishes the file last.
public final class ApplianceRunner: Sendable {
    public let appliance: Appliance
    private let reloadConfiguration: (@Sendable () throws -> Configuration)?
    private let logger: Logger
    private let notifier = SystemdNotifier()
    /// What the daemon adds before `run`.
    private struct Parts {
        var extraServices: [any Service] = []
        var watched: [(name: String, beats: @Sendable () -> UInt64)] = []
        var hangup: DispatchSourceSignal?
        var onTick: (@Sendable (ApplianceStatus) -> Void)?
    }
    private let parts = Locked(Parts())

    /// Called on every upkeep tick (twice a second) with the current status.
    public var onTick: (@Sendable (ApplianceStatus) -> Void)? {
        get { parts.withLock { $0.onTick } }
        set { parts.withLock { $0.onTick = newValue } }
    }

    /// - Parameters:
    ///   - reloadConfiguration: Reads the configuration again (file and command-line
    ///     overrides) on SIGHUP.
    public init(appliance: Appliance, reloadConfiguration: (@Sendable () throws -> Configuration)?, logger: Logger) {
        self.appliance = appliance
        self.reloadConfiguration = reloadConfiguration
        self.logger = logger
    }

    /// Adds a service that runs between capture and upkeep (buttons, touch, screen,
    /// control socket), in the order added.
    public func add(_ service: any Service) { parts.withLock { $0.extraServices.append(service) } }

    /// Watches a thread's heartbeat: the watchdog is pinged only while it moves.
    public func watch(_ name: String, beats: @escaping @Sendable () -> UInt64) { parts.withLock { $0.watched.append((name, beats)) } }

    /// Runs until a shutdown signal, or `runFor` seconds if given.
    public func run(runFor: Double? = nil) async throws {
        let appliance = appliance
        let notifier = notifier
        let (onTick, watched, extraServices) = parts.withLock { ($0.onTick, $0.watched, $0.extraServices) }
        let upkeep = Upkeep(appliance: appliance, notifier: notifier, watched: appliance.graph.heartbeats + watched) { status in
            onTick?(status)
        }
        let services: [any Service] = [RecordingService(appliance: appliance), CaptureService(appliance: appliance)]
            + extraServices + [UpkeepService(upkeep: upkeep)]
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        installReload()
        if let runFor {
            Task {
                try? await Task.sleep(for: .seconds(runFor))
                logger.notice("ran for \(Self.clock(runFor)) as asked: shutting down")
                await group.triggerGracefulShutdown()
            }
        }
        let status = appliance.status
        logger.notice("kioskcam is running: camera \(status.cameraName), microphone \(status.microphoneName)")
        notifier.ready(status: Self.statusLine(status))
        do {
            try await group.run()
        } catch {
            notifier.stopping()
            throw error
        }
        notifier.stopping()
        logger.notice("kioskcam stopped")
    }

    static func statusLine(_ status: ApplianceStatus) -> String {
        let recorder = status.recorder
        let recording = recorder.state == .recording
            ? "recording \(Self.clock(recorder.secondsWritten)), \(ByteCountText.text(recorder.bytesWritten))"
            : recorder.state.rawValue
        return "\(recording); camera \(status.cameraState)"
    }

    /// Seconds as H:MM:SS.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        return String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
    }

    /// SIGHUP: read the file again; apply what can change live, report the rest.
    private func installReload() {
        signal(SIGHUP, SIG_IGN)
        parts.withLock { parts in
            let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
            source.setEventHandler { [weak self] in self?.reload() }
            source.resume()
            parts.hangup = source
        }
    }

    /// Reads the configuration again and applies what can change live: SIGHUP, and the web
    /// app's settings page after it saved (the same path, so the same rules).
    /// - Parameter cause: Who asked, for the log ("SIGHUP", "web settings saved by admin ann").
    /// - Returns: What changed, or the error that kept the configuration in effect.
    @discardableResult
    public func reload(cause: String = "SIGHUP") -> Result<ConfigurationReload, ConfigurationReloadFailure> {
        guard let reloadConfiguration else { return .failure(ConfigurationReloadFailure(message: "this daemon was started without a configuration to read again")) }
        notifier.reloading()
        defer { notifier.ready(status: Self.statusLine(appliance.status)) }
        let new: Configuration
        do {
            new = try reloadConfiguration()
        } catch {
            logger.error("\(cause): \(error); keeping the configuration in effect")
            return .failure(ConfigurationReloadFailure(message: "\(error)"))
        }
        let change = ConfigurationReload(from: appliance.configuration, to: new)
        appliance.adopt(new)
        appliance.storage.purgeSoon()   // the new retention and floor apply now
        logger.notice("\(cause): \(change.summary)")
        return .success(change)
    }
}
