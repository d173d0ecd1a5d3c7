import ArgumentParser
import KioskCLI
import KioskCore
import KioskMedia

/// `kioskcam`: the camera appliance's one binary. This folder holds only the command
/// line and the wiring, one file per command: Capture/ (run, record, snapshot,
/// screenshot, broadcast, the camera helper), Library/ (list, purge, salvage, export,
/// waveform, play), Daemon/ (status, start, stop, event, watch, camera, clip, upload:
/// requests to the running daemon), Setup/ (config, pin, web-user, probe, motion-tune,
/// input-monitor), and the old spellings (OldNames.swift). The work is done in the
/// library modules.
@main
struct KioskCam: AsyncParsableCommand {
    static let version = KioskCamVersion.version

    static let configuration = CommandConfiguration(
        commandName: "kioskcam",
        abstract: "Camera appliance: records H.264/AAC MP4s from a camera and microphone into a dated media library.",
        discussion: """
        With no camera or microphone present, kioskcam uses its built-in test-pattern camera \
        and tone microphone, and says so.

        Settings come from /etc/kioskcam/kioskcam.toml (or --config FILE); every setting has \
        a default, so no file is needed. Command-line options override the file.
        """,
        version: "kioskcam \(version) (\(MediaCapabilities.libraryVersions))",
        subcommands: [Run.self, Record.self, Snapshot.self, List.self, Purge.self, WaveformCommand.self, PlayCommand.self, ExportCommand.self,
                      Probe.self, Salvage.self, ConfigCommand.self, PinCommand.self, StatusCommand.self, StartCommand.self, StopCommand.self,
                      EventCommand.self, MotionTune.self, CameraCommand.self, WatchCommand.self, InputMonitorCommand.self, Screenshot.self,
                      UploadCommand.self, BroadcastCommand.self, ClipCommand.self, WebUserCommand.self,
                      OldBroadcastStart.self, OldBroadcastStop.self, OldInputEvents.self]
    )
}
