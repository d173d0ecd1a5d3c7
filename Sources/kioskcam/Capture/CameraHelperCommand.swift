import ArgumentParser
import Foundation
import Glibc
import KioskCore
import KioskLibcamera
import KioskSources

/// `kioskcam camera-helper`: the daemon's camera in a process of its own. Started by
/// the daemon (and `record`) with a channel on its standard input, never by hand: it
/// opens the camera, says so, and serves frames and control calls until told to stop,
/// until the camera ends, or until the daemon is gone. libcamera cameras run here so
/// that libcamera aborting ends this process, not the daemon (see `HelperCamera`); the
/// test pattern runs here too, so the tests drive the same path without a camera.
struct CameraHelperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera-helper", abstract: "A camera in a process of its own (started by kioskcam itself).", shouldDisplay: false)

    @Option(help: "libcamera or test-pattern.")
    var source: String

    @Option(help: "libcamera's camera id (default: its first camera).")
    var id: String?

    @Option(help: "Frame size, WIDTHxHEIGHT.")
    var size: String

    @Option(help: "Frames per second.")
    var fps: Int

    @Option(name: .customLong("pixel-format"), help: "A fourcc to prefer.")
    var pixelFormat: String?

    @Option(name: .customLong("lost-after"), help: "Seconds without a frame before the camera counts as lost.")
    var lostAfter: Double = 5

    @Option(help: "Shared frame slots.")
    var slots: Int = 8

    func run() throws {
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

    private func serve(_ channel: CameraHelperChannel) throws -> Int32 {
        guard let frameSize = FrameSize(parsing: size), (1...240).contains(fps), (1...64).contains(slots),
              lostAfter.isFinite, lostAfter > 0 else {
            throw CameraHelperError("camera-helper: bad --size, --fps, --slots or --lost-after (\(size), \(fps), \(slots), \(lostAfter))")
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
            throw CameraHelperError("camera-helper: --source is libcamera or test-pattern, not \(source)")
        }
        return service.serve()
    }
}
