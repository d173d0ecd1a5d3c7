import ArgumentParser
import Foundation
import KioskCLI
import KioskCore
import KioskMedia

/// `kioskcam export FILE --from TIME --to TIME -o OUT`: cuts a clip out of a recording.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Cut a clip out of a recording, without re-encoding (or re-encoded, frame-exact and smaller).",
        discussion: """
        Video (.mp4 → .mp4) is copied packet for packet, so nothing is lost and it is fast. \
        A copy can only begin on a keyframe (one a second in kioskcam's recordings): when \
        --from lies between keyframes, the pictures from --from to the next keyframe are \
        re-encoded (libx264) and the rest is copied ("smart cut"), so the clip starts at \
        --from to the frame. --keyframe-start copies only, from the keyframe before --from. \
        Where a smart cut is not possible (no libx264, a recording of another H.264 \
        profile), the clip starts at the keyframe before --from, and says why. \
        Sound (.m4a → .m4a) is copied the same way, to within one AAC frame (about 21 ms). \
        Any recording's sound can be written as 16-bit PCM WAV (-o OUT.wav), cut to the sample.

        --exact re-encodes the range so the clip starts at --from to the frame; --reencode \
        does the same and takes --size and --bitrate, for sending a small copy. Both cost \
        CPU time (libx264) and a little quality.

        TIME is seconds (1.5), a duration as the other commands take it (1.5s, 2m, 1m30s) \
        or a clock reading (hh:mm:ss.xx or mm:ss). Without --from the clip starts at the \
        beginning, without --to it runs to the end; a --to beyond the end is moved to the end.

        Examples:
          kioskcam export media/video/20260101/120000.mp4 --from 10 --to 25 -o clip.mp4
          kioskcam export media/audio/20260101/120000.m4a --from 0:05 --to 0:20 -o clip.wav
          kioskcam export media/video/20260101/120000.mp4 --from 1:02.5 --to 1:30 --reencode --size 640x360 --bitrate 500 -o small.mp4
        """
    )

    @Argument(help: ArgumentHelp("The recording (.mp4 or .m4a).", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Where the clip starts (default: the beginning).", valueName: "time"))
    var from: String?

    @Option(help: ArgumentHelp("Where the clip ends (default: the end).", valueName: "time"))
    var to: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The clip to write: .mp4 for video, .m4a or .wav for sound.", valueName: "out"))
    var output: String

    @Flag(help: "Re-encode the range so the clip starts exactly at --from (video).")
    var exact = false

    @Flag(help: "Copy only: start at the keyframe at or before --from instead of re-encoding up to the next one (video).")
    var keyframeStart = false

    @Flag(help: "Re-encode the range (frame-exact), optionally with --size and --bitrate (video).")
    var reencode = false

    @Option(help: ArgumentHelp("With --reencode: the clip's picture size, even numbers, e.g. 640x360.", valueName: "WxH"))
    var size: String?

    @Option(help: ArgumentHelp("With --reencode: the video bitrate in kbit/s, 50 to 20000.", valueName: "K"))
    var bitrate: Int?

    @Flag(help: "Replace OUT if it exists.")
    var force = false

    @Flag(name: .shortAndLong, help: "Show FFmpeg's own messages.")
    var verbose = false

    func run() throws {
        try runReportingErrors {
            let fromSeconds = try Self.parseTime(from, option: "--from") ?? 0
            let toSeconds = try Self.parseTime(to, option: "--to") ?? .greatestFiniteMagnitude
            if fromSeconds >= toSeconds {
                throw CLIError(ClipRange.Problem.emptyRange(from: fromSeconds, to: toSeconds).description, exitCode: 64)
            }
            let transcode = try transcodeOptions()
            try checkInput()
            let target = try Self.target(of: output)
            try checkOutput()
            MediaLibraryLog.setVerbose(verbose)
            let options = ClipExportOptions(from: from == nil ? nil : fromSeconds, to: to == nil ? nil : toSeconds,
                                            reencode: transcode, keyframeStart: keyframeStart)
            do throws(ClipExportError) {
                let result = try ClipExporter.export(input: file, output: output, target: target, options: options)
                result.notes.forEach(note)
            } catch {
                throw CLIError(error.message, exitCode: error.isUsage ? 64 : 1)
            }
            print(output)
        }
    }

    /// The re-encode settings, nil for a stream copy.
    /// - Throws: `CLIError` (64) for a size or bitrate out of range or given without --reencode.
    private func transcodeOptions() throws -> (size: FrameSize?, bitrate: Int?)? {
        guard reencode || exact else {
            if size != nil || bitrate != nil { throw CLIError("--size and --bitrate need --reencode", exitCode: 64) }
            return nil
        }
        var frameSize: FrameSize? = nil
        if let size {
            guard let parsed = FrameSize(parsing: size), (16...4096).contains(parsed.width), (16...4096).contains(parsed.height),
                  parsed.width % 2 == 0, parsed.height % 2 == 0 else {
                throw CLIError("--size \(size): use even WxH from 16x16 to 4096x4096, e.g. 640x360", exitCode: 64)
            }
            frameSize = parsed
        }
        if let bitrate, !(50...20_000).contains(bitrate) {
            throw CLIError("--bitrate \(bitrate): use kbit/s from 50 to 20000, e.g. 500", exitCode: 64)
        }
        return (frameSize, bitrate.map { $0 * 1000 })
    }

    private func note(_ text: String) {
        FileHandle.standardError.write(Data("kioskcam: \(text)\n".utf8))
    }

    /// A TIME option's value in seconds; nil when the option was not given.
    /// - Throws: `CLIError` (64) naming the forms allowed.
    static func parseTime(_ text: String?, option: String) throws -> Double? {
        guard let text else { return nil }
        guard let seconds = parseClipTime(text) else {
            throw CLIError("\(option) \(text) is not a time: use seconds (1.5), a duration (1.5s, 2m) or hh:mm:ss.xx", exitCode: 64)
        }
        return seconds
    }

    /// - Throws: `CLIError` (1) for a missing, unreadable or foreign input.
    private func checkInput() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw CLIError("\(file) does not exist: give the path of a recording (kioskcam list shows them)")
        }
        guard !isDirectory.boolValue else { throw CLIError("\(file) is a folder: give the path of a recording") }
        guard FileManager.default.isReadableFile(atPath: file) else { throw CLIError("cannot read \(file): check its permissions") }
        let suffix = (file as NSString).pathExtension.lowercased()
        guard suffix == "mp4" || suffix == "m4a" else {
            throw CLIError("\(file) is not a recording: export reads kioskcam's .mp4 and .m4a files")
        }
    }

    /// - Throws: `CLIError` (64) for an OUT that exists without --force, is the input, or
    ///   is a folder.
    private func checkOutput() throws {
        let out = URL(fileURLWithPath: output).standardizedFileURL.resolvingSymlinksInPath().path
        let input = URL(fileURLWithPath: file).standardizedFileURL.resolvingSymlinksInPath().path
        guard out != input else { throw CLIError("-o \(output) is the recording itself: give another file name", exitCode: 64) }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw CLIError("-o \(output) is a folder: give a file name such as \(output)/clip.mp4", exitCode: 64) }
            guard force else { throw CLIError("\(output) exists: give --force to replace it, or another -o", exitCode: 64) }
        }
    }

    /// - Throws: `CLIError` (64) for an extension export cannot write.
    static func target(of output: String) throws -> ClipTarget {
        guard let target = ClipTarget(fileName: output) else {
            throw CLIError("-o \(output): name the clip .mp4 (video), .m4a or .wav (sound)", exitCode: 64)
        }
        return target
    }
}
