import ArgumentParser
import KioskAppliance
import KioskBroadcast
import KioskCLI

/// `kioskcam broadcast`: the screen (or the camera) with sound, live to one or more
/// destinations and/or into the library — a process of its own under a hard memory limit,
/// like the seed's broadcast extension. The small `kioskcam-broadcast` program does the
/// same for the screen with the FFmpeg of scripts/build-broadcast-ffmpeg (what the unit and
/// the daemon run when it is installed); this one also has the cameras.
struct BroadcastCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "broadcast", abstract: Broadcast.abstract,
                                                    discussion: Broadcast.discussion)

    @OptionGroup var options: BroadcastOptions

    func run() throws {
        try Broadcast.run(options, version: KioskCam.version) { configuration, logger in
            try SourceFactory.camera(configuration, realtime: true, logger: logger)
        }
    }
}
