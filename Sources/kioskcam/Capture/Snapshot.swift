import ArgumentParser
import Foundation
import KioskControl
import KioskCLI
import KioskCore
import KioskMedia

/// `kioskcam snapshot`: one JPEG from the camera into photo/YYYYMMDD/ — taken by the
/// running daemon when there is one (it holds the camera), else by opening the camera.
struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save one JPEG still from the camera into the media library.",
        discussion: "When the daemon (kioskcam run) is running, it takes the still through its control socket; otherwise this command opens the camera itself."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Camera: test, or file:PATH with raw frames.", valueName: "source"))
    var camera: String?

    @Option(help: ArgumentHelp("Frame size, e.g. 1280x720.", valueName: "WxH"))
    var size: String?

    func run() throws {
        try runReportingErrors {
            var configuration = try common.loadConfiguration()
            if camera == nil, size == nil, let path = try viaDaemon(configuration) {
                print(path)
                return
            }
            if let camera { try configuration.override("camera.source", .string(camera), origin: "--camera") }
            if let size { try configuration.override("camera.size", .string(size), origin: "--size") }
            let logger = common.makeLogger(configuration)
            MediaLibraryLog.setVerbose(common.verbose)
            let session = try ForegroundSession(configuration: configuration, audioOnly: false, realtime: true,
                                                logger: logger, needsMicrophone: false)
            print(try session.snapshot())
        }
    }

    /// The daemon's still, or nil when no daemon answers on the control socket.
    private func viaDaemon(_ configuration: Configuration) throws -> String? {
        guard FileManager.default.fileExists(atPath: configuration.control.socketPath) else { return nil }
        let response: ControlResponse
        do throws(ControlClientError) {
            response = try ControlClient(configuration.control).send(.snapshot)
        } catch {
            if error.exitCode == 69 { return nil }   // a stale socket: nobody runs
            throw CLIError(error.description, exitCode: error.exitCode)
        }
        switch response.outcome {
        case .success(let result):
            guard case .string(let path)? = result["path"] else { throw CLIError("the daemon answered without a path") }
            return path
        case .failure(let error):
            throw CLIError("the daemon could not take the still: \(error.message)")
        }
    }
}
