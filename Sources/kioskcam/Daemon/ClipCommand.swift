import ArgumentParser
import Foundation
import KioskControl
import KioskCLI
import KioskCore

/// `kioskcam clip FILE --from TIME --to TIME`: the running daemon cuts a clip of a
/// library recording into the library's exports/tmp (what `kioskcam-pull --clip` fetches).
struct ClipCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clip",
        abstract: "Ask the running daemon to cut a clip of a library recording; print where it wrote it.",
        discussion: """
        FILE is a recording as `kioskcam list` names it (video/YYYYMMDD/HHMMSS.mp4 or \
        audio/YYYYMMDD/HHMMSS.m4a). The clip is cut as `kioskcam export` cuts (a smart cut \
        unless --reencode) and written to <media root>/exports/tmp/, never elsewhere; clips \
        there are removed an hour later. scripts/kioskcam-pull --clip does this over SSH \
        and copies the clip home.

        \(DaemonConnection.notRunningHelp)
        """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: ArgumentHelp("The recording, as `kioskcam list` names it.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Where the clip starts (default: the beginning).", valueName: "time"))
    var from: String?

    @Option(help: ArgumentHelp("Where the clip ends (default: the end).", valueName: "time"))
    var to: String?

    @Flag(help: "Re-encode the range, optionally with --size and --bitrate.")
    var reencode = false

    @Option(help: ArgumentHelp("With --reencode: the picture size, even numbers, e.g. 640x360.", valueName: "WxH"))
    var size: String?

    @Option(help: ArgumentHelp("With --reencode: the video bitrate in kbit/s, 50 to 20000.", valueName: "K"))
    var bitrate: Int?

    @Flag(help: "Write the sound as 16-bit WAV.")
    var wav = false

    @Flag(help: "Print the daemon's answer as JSON.")
    var json = false

    func run() throws {
        try runReportingErrors {
            var frameSize: FrameSize?
            if let size {
                guard let parsed = FrameSize(parsing: size), ClipExportRequest.isValidSize(parsed) else {
                    throw CLIError("--size \(size): use even WxH from 16x16 to 4096x4096, e.g. 640x360", exitCode: 64)
                }
                frameSize = parsed
            }
            let request = ClipExportRequest(file: file, from: try ExportCommand.parseTime(from, option: "--from"),
                                            to: try ExportCommand.parseTime(to, option: "--to"), reencode: reencode,
                                            size: frameSize, bitrateKbps: bitrate, wav: wav)
            var client = try DaemonConnection.client(common)
            // A re-encode of a long range takes minutes on a small board.
            client.timeoutSeconds = max(client.timeoutSeconds, 900)
            // The daemon checks every field again; the line round-trip gives its messages here too.
            if case .failure(let failure) = ControlCall.parse(ControlCall(id: 1, request: .clipExport(request)).line()) {
                throw CLIError(failure.error.message, exitCode: 64)
            }
            let result = try DaemonConnection.send(.clipExport(request), with: client)
            if json { return try DaemonConnection.printJSON(.object(result)) }
            if case .array(let notes)? = result["notes"] {
                for case .string(let note) in notes { FileHandle.standardError.write(Data("kioskcam: \(note)\n".utf8)) }
            }
            guard case .string(let path)? = result["path"] else { throw CLIError("the daemon's answer has no path; `--json` shows it") }
            print(path)
        }
    }
}
