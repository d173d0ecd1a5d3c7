import ArgumentParser
import Foundation
import KioskCLI
import KioskCore
import KioskMedia

/// `kioskcam waveform FILE -o OUT.png`: a sound recording's waveform as a PNG.
struct WaveformCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waveform",
        abstract: "Draw an audio recording's waveform as a PNG.",
        discussion: """
        One vertical line per pixel column, from the loudest to the quietest sample in that \
        stretch of the recording, mirrored around a centre line; silence is a flat line. \
        Reads kioskcam's .m4a files, WAV, and the sound of any file FFmpeg reads.
        """
    )

    @Argument(help: ArgumentHelp("The audio recording.", valueName: "file"))
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the PNG (replaced if it exists).", valueName: "out.png"))
    var output: String

    @Option(help: ArgumentHelp("Picture size, \(WaveformRaster.minimumSize) to \(WaveformRaster.maximumSize).", valueName: "WxH"))
    var size: String = WaveformRenderer.defaultSize.description

    @Flag(name: .shortAndLong, help: "Show FFmpeg's own messages.")
    var verbose = false

    func run() throws {
        try runReportingErrors {
            let pictureSize = try Self.parseSize(size)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
                throw CLIError("\(file) does not exist: give the path of an audio recording")
            }
            guard !isDirectory.boolValue else {
                throw CLIError("\(file) is a folder: give the path of an audio recording")
            }
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw CLIError("cannot read \(file): check its permissions")
            }
            MediaLibraryLog.setVerbose(verbose)
            let summary: WaveformSummary
            do throws(MediaError) {
                summary = try WaveformRenderer.render(audioFile: file, to: output, size: pictureSize)
            } catch {
                throw CLIError(error.description)
            }
            if summary.damagedPackets > 0 {
                FileHandle.standardError.write(Data("""
                    kioskcam: warning: \(file): damaged packets drawn as silence: \(summary.damagedPackets) \
                    (-v shows FFmpeg's messages)\n
                    """.utf8))
            }
            print(output)
        }
    }

    /// Parses "800x200" within the picture bounds.
    /// - Throws: `CLIError` with exit status 64 saying what is allowed.
    static func parseSize(_ text: String) throws -> FrameSize {
        let bounds = "use WxH from \(WaveformRaster.minimumSize) to \(WaveformRaster.maximumSize), e.g. 800x200"
        guard let size = FrameSize(parsing: text) else {
            throw CLIError("--size \(text) is not a size; \(bounds)", exitCode: 64)
        }
        guard WaveformRaster.allows(size) else {
            throw CLIError("--size \(text) is out of range; \(bounds)", exitCode: 64)
        }
        return size
    }
}
