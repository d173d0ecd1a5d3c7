import ArgumentParser
import Foundation
import KioskCLI
import KioskCore
import KioskMedia
import KioskRecording
import KioskSources

/// `kioskcam record`: a foreground recording with a live progress line.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record video and sound (or sound only) into the media library.",
        discussion: """
        Stops after --duration, at the end of a file source, or on Ctrl-C/SIGTERM — always \
        finishing the file so it plays. Whatever an earlier crash left unfinished is salvaged first.

        Examples:
          kioskcam record --duration 10s --root ./media
          kioskcam record --audio-only --mic tone --duration 5s --root ./media
          kioskcam record --camera file:frames.yuv --size 1280x720 --mic file:sound.wav --root ./media
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Stop after this long: 10s, 1.5m, 1h, 250ms.", valueName: "time"))
    var duration: String?

    @Flag(help: "Record sound only, as AAC in .m4a under audio/.")
    var audioOnly = false

    @Option(help: ArgumentHelp("Camera: auto, test, a device such as /dev/video0, libcamera or libcamera:ID, or file:PATH with raw frames.", valueName: "source"))
    var camera: String?

    @Option(help: ArgumentHelp("Microphone: auto, alsa:DEVICE (alsa:hw:1,0, alsa:plughw:1,0), tone, silence, none, or file:PATH.wav.", valueName: "source"))
    var mic: String?

    @Option(help: ArgumentHelp("Frame size, e.g. 1280x720.", valueName: "WxH"))
    var size: String?

    @Option(help: ArgumentHelp("Frames per second.", valueName: "n"))
    var fps: Int?

    @Option(help: ArgumentHelp("Pixel layout, a V4L2 fourcc: auto, or one of \(PixelFormat.allCases.map(\.rawValue).joined(separator: ", ")) "
                               + "(a camera prefers it among equal offers; a raw file's frames are in it).", valueName: "fourcc"))
    var pixelFormat: String?

    @Option(help: ArgumentHelp("libavcodec H.264 encoder, e.g. libx264 or h264_v4l2m2m.", valueName: "name"))
    var encoder: String?

    @Option(help: ArgumentHelp("Start a new file after this long (e.g. 5m).", valueName: "time"))
    var segment: String?

    @Option(help: ArgumentHelp("Start a new file before this many MiB.", valueName: "MiB"))
    var segmentMb: Int?

    @Option(name: .customLong("control"), help: ArgumentHelp(
        "A camera control, NAME=VALUE (repeatable): zoom, focus, exposure, white_balance, brightness, contrast; focus/exposure/white_balance also take auto.",
        valueName: "name=value"))
    var controls: [String] = []

    @Flag(help: "Replay file sources in real time instead of as fast as possible.")
    var realtime = false

    @Flag(help: "No progress line.")
    var quiet = false

    func run() throws {
        try runReportingErrors {
            var configuration = try common.loadConfiguration()
            try applyOverrides(&configuration)
            let logger = common.makeLogger(configuration)
            MediaLibraryLog.setVerbose(common.verbose)
            MediaMemory.keepLargeBuffersOutOfTheHeap()   // an encoder's buffers, freed, go back to the system
            MediaMemory.avoidTransparentHugePages()      // resident memory that does not jump
            let limit = try duration.map { text -> Double in
                guard let seconds = parseDuration(text), seconds > 0 else {
                    throw CLIError("--duration \(text): use a time such as 10s, 1.5m or 1h", exitCode: 64)
                }
                return seconds
            }
            guard audioOnly || MediaCapabilities.hasVideoEncoder(configuration.encoder.videoCodec) else {
                throw CLIError("no video encoder named \"\(configuration.encoder.videoCodec)\" in this FFmpeg build; "
                               + "set encoder.video_codec (or --encoder) to one of: \(availableH264Encoders().joined(separator: ", "))", exitCode: 64)
            }
            let session = try ForegroundSession(configuration: configuration, audioOnly: audioOnly, realtime: realtime, logger: logger)
            let files = try session.record(limit: limit, showProgress: !quiet)
            for file in files { print(file) }
        }
    }

    private func applyOverrides(_ configuration: inout Configuration) throws {
        if let camera { try configuration.override("camera.source", .string(camera), origin: "--camera") }
        if let mic { try configuration.override("microphone.source", .string(mic), origin: "--mic") }
        if let size { try configuration.override("camera.size", .string(size), origin: "--size") }
        if let fps { try configuration.override("camera.fps", .integer(Int64(fps)), origin: "--fps") }
        if let pixelFormat {
            let value = pixelFormat.lowercased() == "auto" ? "auto" : pixelFormat.uppercased()
            try configuration.override("camera.pixel_format", .string(value), origin: "--pixel-format")
        }
        if let encoder { try configuration.override("encoder.video_codec", .string(encoder), origin: "--encoder") }
        if let segment {
            guard let seconds = parseDuration(segment) else {
                throw CLIError("--segment \(segment): use a time such as 30s or 5m", exitCode: 64)
            }
            try configuration.override("storage.segment_seconds", .float(seconds), origin: "--segment")
        }
        if let segmentMb { try configuration.override("storage.segment_max_megabytes", .integer(Int64(segmentMb)), origin: "--segment-mb") }
        for control in controls {
            let parts = control.split(separator: "=", maxSplits: 1).map(String.init)
            let names = ["zoom", "focus", "exposure", "white_balance", "brightness", "contrast"]
            guard parts.count == 2, names.contains(parts[0]) else {
                throw CLIError("--control \(control): use NAME=VALUE with NAME one of \(names.joined(separator: ", "))", exitCode: 64)
            }
            let value: TOMLValue = Int64(parts[1]).map { .integer($0) } ?? .string(parts[1])
            try configuration.override("camera." + parts[0], value, origin: "--control \(parts[0])")
        }
        if audioOnly, case .none = configuration.microphone.source {
            throw CLIError("--audio-only needs a microphone; use --mic tone, silence or file:PATH.wav", exitCode: 64)
        }
    }
}
