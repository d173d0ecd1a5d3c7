import ArgumentParser
import Foundation
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
        --from lies between keyframes, the clip starts at the keyframe before it, and says so. \
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

    /// What kind of file the clip becomes, from OUT's extension.
    enum Target { case mp4, m4a, wav }

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
            if transcode != nil && target != .mp4 {
                throw CLIError("--exact and --reencode write video (.mp4); sound is cut to the sample as .wav without them", exitCode: 64)
            }
            try checkOutput()
            MediaLibraryLog.setVerbose(verbose)

            let outline: RecordingOutline
            do throws(MediaError) { outline = try ClipExport.outline(of: file) } catch { throw CLIError(error.description) }
            switch target {
            case .mp4 where !outline.hasVideo:
                throw CLIError("\(file) holds sound only: write it as .m4a or .wav (-o clip.m4a)", exitCode: 64)
            case .m4a where outline.hasVideo:
                throw CLIError("\(file) holds video: write it as .mp4 (-o clip.mp4), or its sound as .wav", exitCode: 64)
            case .wav where !outline.hasAudio:
                throw CLIError("\(file) has no sound to write as WAV: write it as .mp4 (-o clip.mp4)", exitCode: 64)
            default: break
            }
            let range: ClipRange
            do throws(ClipRange.Problem) {
                range = try ClipRange(from: fromSeconds, to: toSeconds, length: outline.length)
            } catch {
                throw CLIError(error.description, exitCode: error == .unknownLength ? 1 : 64)
            }
            if range.endWasClamped && to != nil {
                note("--to \(formatClipTime(toSeconds)) is beyond the end of the recording: the clip ends at its end, \(formatClipTime(range.end))")
            }
            do throws(MediaError) {
                switch target {
                case .wav:
                    let report = try WAVExport.write(input: file, output: output, range: range)
                    note("\(formatClipTime(report.seconds)) of sound, \(report.sampleRate) Hz mono 16-bit PCM")
                case .mp4 where transcode != nil:
                    let report = try ClipTranscode.write(input: file, output: output, range: range,
                                                         size: transcode?.size, bitrate: transcode?.bitrate)
                    note("re-encoded \(formatClipTime(range.duration)) frame-exact from \(formatClipTime(range.start)): "
                         + "\(report.videoFrames) frames at \(report.size), \(report.bitrate / 1000) kbit/s")
                case .mp4, .m4a:
                    let report = try ClipExport.copy(input: file, output: output, range: range, outline: outline)
                    let early = range.start - report.start
                    if outline.hasVideo && early > outline.frameDuration / 2 {
                        note("--from \(formatClipTime(range.start)) lies between keyframes: the clip starts \(formatClipTime(early)) "
                             + "earlier, at the keyframe at \(formatClipTime(report.start)) (copied, not re-encoded; --exact starts it at --from)")
                    }
                    note("copied \(formatClipTime(range.end - report.start)): \(report.videoPackets) video and \(report.audioPackets) sound packets, not re-encoded")
                }
            } catch {
                throw CLIError(error.description)
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
    static func target(of output: String) throws -> Target {
        switch (output as NSString).pathExtension.lowercased() {
        case "mp4": return .mp4
        case "m4a": return .m4a
        case "wav": return .wav
        default: throw CLIError("-o \(output): name the clip .mp4 (video), .m4a or .wav (sound)", exitCode: 64)
        }
    }
}
