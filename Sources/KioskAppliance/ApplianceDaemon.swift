import Foundation
import KioskCore
import Logging
import ServiceLifecycle

/// The whole appliance wired together: the capture and recording core, and around it
/// the buttons, touch, screen and control socket as services.
public final class ApplianceDaemon: @unchecked Sendable {
    public let appliance: Appliance
    private let runner: ApplianceRunner
    private let logger: Logger

    /// Opens what the configuration names (falling back to built-in devices, and saying so).
    /// - Parameters:
    ///   - reloadConfiguration: Reads the configuration again on SIGHUP.
    /// - Throws: `ApplianceError` when the media root or a named source is unusable.
    public init(configuration: Configuration, reloadConfiguration: (@Sendable () throws -> Configuration)?,
                version: String, logger: Logger) throws {
        self.logger = logger
        appliance = try Appliance(configuration: configuration, version: version, deviceID: nil, logger: logger)
        runner = ApplianceRunner(appliance: appliance, reloadConfiguration: reloadConfiguration, logger: logger)
    }

    /// Runs until SIGTERM/SIGINT (or `runFor` seconds).
    public func run(runFor: Double? = nil) async throws {
        try await runner.run(runFor: runFor)
    }
}
