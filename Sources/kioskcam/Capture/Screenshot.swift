import ArgumentParser
import Foundation
import KioskCLI
import KioskCore
import KioskScreen

/// `kioskcam screenshot -o OUT.png`: what the screen shows right now, as a PNG.
struct Screenshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenshot",
        abstract: "Save what the screen shows as a PNG.",
        discussion: """
        Reads the framebuffer screen.framebuffer names: /dev/fb0 (or the device given), or, on a \
        board without one, the file-backed framebuffer the daemon draws into. Works while the \
        daemon runs and without it (then the picture is what was shown last). The picture is \
        turned back by screen.rotation, so it looks as the user sees it.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the PNG (replaced if it exists).", valueName: "out.png"))
    var output: String

    @Option(help: ArgumentHelp("Framebuffer to read: /dev/fbN, file:/path, or auto (overrides screen.framebuffer).",
                               valueName: "source"))
    var framebuffer: String?

    @Option(help: ArgumentHelp("How the panel is turned: 0, 90, 180 or 270 (overrides screen.rotation).", valueName: "degrees"))
    var rotation: Int?

    func run() throws {
        try runReportingErrors {
            var configuration = try common.loadConfiguration()
            if let framebuffer { try configuration.override("screen.framebuffer", .string(framebuffer), origin: "--framebuffer") }
            if let rotation { try configuration.override("screen.rotation", .integer(Int64(rotation)), origin: "--rotation") }
            let png: [UInt8]
            let source: Framebuffer
            do throws(ScreenError) {
                source = try Framebuffer.openForReading(config: configuration)
                defer { source.close() }
                png = try KioskScreen.Screenshot.png(of: source, rotation: configuration.screen.rotation)
            } catch {
                throw CLIError(error.description)
            }
            do {
                try Data(png).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw CLIError("cannot write \(output): \(error.localizedDescription); check the folder exists and is writable")
            }
            print(output)
        }
    }
}
