import ArgumentParser
import KioskBroadcast
import KioskCLI

/// `kioskcam-broadcast`: `kioskcam broadcast --source screen` as a program of its own, for
/// the 50 MB cap of kioskcam-broadcast.service and the daemon's capped broadcast cgroup.
/// It links the framebuffer, the microphone and an FFmpeg with only the broadcast's
/// codecs, muxers and protocols (scripts/build-release), and none of the daemon's
/// other devices: what it maps while it loads stays under the cap.
@main
struct KioskCamBroadcast: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: BroadcastProgram.smallProgramName, abstract: Broadcast.abstract,
        discussion: Broadcast.discussion + "\n\nThis program sends the screen; `kioskcam broadcast` has the cameras too.",
        version: KioskCamVersion.version)

    @OptionGroup var options: BroadcastOptions

    func run() throws {
        try Broadcast.run(options, version: KioskCamVersion.version, openCamera: nil)
    }
}
