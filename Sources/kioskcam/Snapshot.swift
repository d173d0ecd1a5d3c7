import ArgumentParser
import KioskCore
import KioskMedia

/// `kioskcam snapshot`: one JPEG from the camera into photo/YYYYMMDD/.
struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Save one JPEG still from the camera into the media library.")

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Camera: test, or file:PATH with raw frames.", valueName: "source"))
    var camera: String?

    @Option(help: ArgumentHelp("Frame size, e.g. 1280x720.", valueName: "WxH"))
    var size: String?

    func run() throws {
        try runReportingErrors {
            var configuration = try common.loadConfiguration()
            if let camera { try configuration.override("camera.source", .string(camera), origin: "--camera") }
            if let size { try configuration.override("camera.size", .string(size), origin: "--size") }
            let logger = common.makeLogger(configuration)
            MediaLibraryLog.setVerbose(common.verbose)
            let session = try ForegroundSession(configuration: configuration, audioOnly: false, realtime: true,
                                                logger: logger, needsMicrophone: false)
            print(try session.snapshot())
        }
    }
}
