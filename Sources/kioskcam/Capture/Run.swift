import ArgumentParser
import Foundation
import Glibc
import KioskAppliance
import KioskBroadcast
import KioskCLI
import KioskCore
import KioskMedia

extension Run {
    /// A flood of connections to the web app (refused beyond `[web] max_connections`, but
    /// each holds a descriptor until it is closed) must never leave the recorder unable to
    /// open its next segment: the soft limit of open files goes up to the hard one (at
    /// most 65,536), as servers do. The corresponding C function is `setrlimit`.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 65_536)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = wanted
        _ = setrlimit(RLIMIT_NOFILE_VALUE, &limit)
    }

    private static var RLIMIT_NOFILE_VALUE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}

/// `kioskcam run`: the appliance daemon.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the appliance: capture, recording, library upkeep, buttons, touch, screen and the control socket.",
        discussion: """
        Runs in the foreground until SIGTERM or Ctrl-C, which finish the recording in progress \
        (the file plays and is in the library) before exiting 0. SIGHUP reloads the configuration \
        file and logs what changed and what needs a restart. Under systemd (Type=notify) it reports \
        readiness and pings the watchdog.

        With no devices present it runs on the built-in test-pattern camera, tone microphone and \
        a file-backed screen, and says so.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("for"), help: ArgumentHelp("Shut down by itself after this long (demo, tests): 20s, 1m.", valueName: "time"))
    var runFor: String?

    func run() async throws {
        try await runReportingErrorsAsync {
            let configuration = try common.loadConfiguration()
            let logger = common.makeLogger(configuration)
            MediaLibraryLog.setVerbose(common.verbose)
            MediaMemory.keepLargeBuffersOutOfTheHeap()   // an encoder's buffers, freed, go back to the system
            MediaMemory.avoidTransparentHugePages()      // resident memory that does not jump
            Self.raiseDescriptorLimit()
            let limit = try runFor.map { text -> Double in
                guard let seconds = parseDuration(text), seconds > 0 else {
                    throw CLIError("--for \(text): use a time such as 20s or 1m", exitCode: 64)
                }
                return seconds
            }
            let common = common
            // The broadcast the daemon starts reads the same configuration file.
            let broadcast = BroadcastProgram.command() + (common.config.map { ["--config", $0] } ?? [])
                + (common.root.map { ["--root", $0] } ?? [])
            // Opening devices and salvaging what a crash left block: not on the concurrency pool.
            let daemon = try await onBackgroundThread("kioskcam.start") {
                try ApplianceDaemon(configuration: configuration, reloadConfiguration: { try common.loadConfiguration() },
                                    version: KioskCam.version, broadcastCommand: broadcast, logger: logger)
            }
            try await daemon.run(runFor: limit)
        }
    }
}
