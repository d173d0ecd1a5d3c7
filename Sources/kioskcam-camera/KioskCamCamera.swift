import ArgumentParser
import Foundation
import Glibc
import KioskCore
import KioskLibcamera
import KioskSources

/// `kioskcam-camera`: the daemon's camera in a process of its own, and the only program
/// that loads libcamera. Started by kioskcam (the daemon, `record`, `probe`) with a
/// channel on its standard input, never by hand: it opens the camera, says so, and
/// serves frames and control calls until told to stop, until the camera ends, or until
/// the daemon is gone; or, with `--list` / `--describe`, prints libcamera's cameras as
/// JSON and ends. libcamera aborting (0.0.3 does when a camera module comes back,
/// "duplicated ID") ends this process, not the daemon (see `HelperCamera`), and kioskcam
/// itself links none of libcamera's libraries (LTTng, libdw, GnuTLS …). The test pattern
/// runs here too, so the tests drive the same path without a camera.
@main
struct KioskCamCamera: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskcam-camera", abstract: "kioskcam's camera in a process of its own (started by kioskcam itself).")

    @Flag(help: "Print libcamera's camera ids as JSON, and end.")
    var list = false

    @Flag(help: "Print libcamera's cameras with their formats and controls as JSON, and end.")
    var describe = false

    @Option(help: "libcamera or test-pattern.")
    var source: String?

    @Option(help: "libcamera's camera id (default: its first camera).")
    var id: String?

    @Option(help: "Frame size, WIDTHxHEIGHT.")
    var size: String?

    @Option(help: "Frames per second.")
    var fps: Int?

    @Option(name: .customLong("pixel-format"), help: "A fourcc to prefer.")
    var pixelFormat: String?

    @Option(name: .customLong("lost-after"), help: "Seconds without a frame before the camera counts as lost.")
    var lostAfter: Double = 5

    @Option(help: "Shared frame slots.")
    var slots: Int = 8

    func run() throws {
        if list || describe { printListing() }
        let channel = CameraHelperChannel(descriptor: STDIN_FILENO)
        var status: Int32 = 1
        do {
            status = try serve(channel)
        } catch {
            channel.send(.openFailed("\(error)"))
        }
        // Straight out: libcamera's teardown at exit is what this process exists to keep
        // away from the daemon, and there is nothing left to flush but the log.
        fflush(nil)
        _exit(status)
    }

    /// libcamera's cameras, as `LibcameraListing` JSON on standard output; then exits.
    private func printListing() -> Never {
        var listing = LibcameraListing(version: LibcameraManager.version, cameras: [])
        do {
            let manager = try LibcameraManager()
            listing.cameras = describe ? manager.describeCameras() : manager.cameraIDs.map { LibcameraCameraDescription(id: $0) }
        } catch {
            listing.error = "\(error)"
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: (try? encoder.encode(listing)) ?? Data(), as: UTF8.self))
        fflush(nil)
        _exit(0)
    }

    private func serve(_ channel: CameraHelperChannel) throws -> Int32 {
        guard let size, let frameSize = FrameSize(parsing: size), let fps, (1...240).contains(fps), (1...64).contains(slots),
              lostAfter.isFinite, lostAfter > 0 else {
            throw CameraHelperError("kioskcam-camera: bad --size, --fps, --slots or --lost-after (\(size ?? "none"), \(fps.map(String.init) ?? "none"), \(slots), \(lostAfter))")
        }
        let request = CameraFormatRequest(size: frameSize, framesPerSecond: fps, preferredFourCC: pixelFormat)
        let service: CameraHelperService
        switch source {
        case "libcamera":
            let manager = try LibcameraManager()
            let camera = try LibcameraCamera(manager: manager, id: id, request: request, noFrameTimeout: lostAfter)
            service = try CameraHelperService(camera: camera, channel: channel, slotCount: slots, details: camera.helperDetails,
                                              answer: { camera.answerHelperCall($0) })
        case "test-pattern":
            let camera = TestPatternCamera(format: VideoFormat(size: frameSize, pixelFormat: .yuv420, framesPerSecond: fps))
            service = try CameraHelperService(camera: camera, channel: channel, slotCount: slots)
        default:
            throw CameraHelperError("kioskcam-camera: --source is libcamera or test-pattern, not \(source ?? "none")")
        }
        return service.serve()
    }
}
