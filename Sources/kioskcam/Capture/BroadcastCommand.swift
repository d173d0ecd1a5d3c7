import ArgumentParser
import KioskAppliance
import KioskBroadcast
import KioskCLI

/// `kioskcam broadcast`: the broadcasts, by what they do. `kioskcam broadcast --to …`
/// (the default, `send`) broadcasts from this process; `start` and `stop` ask the daemon.
/// The daemon and the unit run `kioskcam broadcast --config …` when the small
/// `kioskcam-broadcast` is not installed: that spelling stays the default subcommand's.
struct BroadcastCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast", abstract: Broadcast.abstract,
        discussion: Broadcast.discussion + "\n\n`kioskcam broadcast start|stop` ask the running daemon instead.",
        subcommands: [Send.self, BroadcastStartCommand.self, BroadcastStopCommand.self], defaultSubcommand: Send.self)

    /// The screen (or the camera) with sound, live to one or more destinations and/or
    /// into the library — a process of its own under a hard memory limit, like the seed's
    /// broadcast extension. The small `kioskcam-broadcast` program does the same for the
    /// screen with the FFmpeg of scripts/build-release (what the unit and the daemon run
    /// when it is installed); this one also has the cameras.
    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Broadcast from this process (the default: `kioskcam broadcast --to …`).",
            discussion: Broadcast.discussion)

        @OptionGroup var options: BroadcastOptions

        func run() throws {
            try Broadcast.run(options, version: KioskCam.version) { configuration, logger in
                try SourceFactory.camera(configuration, realtime: true, logger: logger)
            }
        }
    }
}
