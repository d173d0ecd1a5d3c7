import ArgumentParser
import Foundation
import Glibc
import KioskCLI
import KioskCore
import KioskMedia
import KioskSources
import Logging

/// The options of a broadcast: the same for `kioskcam broadcast` and `kioskcam-broadcast`.
public struct BroadcastOptions: ParsableArguments {
    public init() {}

    @OptionGroup public var common: CommonOptions

    @Option(help: ArgumentHelp("What to send: screen (what the framebuffer shows) or camera.", valueName: "screen|camera"))
    public var source = "screen"

    @Option(name: .customLong("to"), help: ArgumentHelp(
        "Destination (repeatable): library, rtmp://…, rtsp://… (publish), srt://…, or an absolute folder for HLS (index.m3u8).",
        valueName: "dest"))
    public var destinations: [String] = []

    @Option(help: ArgumentHelp("Stop after this long: 30s, 10m, 1h.", valueName: "time"))
    public var duration: String?

    @Option(help: ArgumentHelp("Frames a second: 2–15 for the screen (default 10); the camera's own rate by default.", valueName: "n"))
    public var fps: Int?

    @Option(help: ArgumentHelp(
        "Picture size to send, e.g. 960x540: even, no larger than the source, its shape (default: the largest that fits the memory budget).",
        valueName: "WxH"))
    public var size: String?

    @Option(help: ArgumentHelp("Microphone: auto, alsa:DEVICE, tone, silence, none, or file:PATH.wav (overrides microphone.source).",
                               valueName: "source"))
    public var mic: String?

    @Option(help: ArgumentHelp("Framebuffer to read: /dev/fbN, file:/path, or auto (overrides screen.framebuffer).", valueName: "source"))
    public var framebuffer: String?

    @Option(help: ArgumentHelp("Where to write the state for the daemon (default <state directory>/broadcast.json).", valueName: "file"))
    public var statusFile: String?

    @Flag(help: "No progress lines.")
    public var quiet = false

    @Option(help: ArgumentHelp("Join this cgroup v2 directory first, then start afresh in it (the daemon passes its capped "
                               + "broadcast leaf).", valueName: "dir"))
    public var cgroup: String?
}

/// Opens the camera for `--source camera` with the configuration the broadcast settled
/// (`--size` and `--fps` applied): the daemon's camera code, which kioskcam-broadcast leaves
/// out to stay small.
public typealias BroadcastCameraOpener = (Configuration, Logger) throws -> VideoSource

/// One broadcast from the command line, start to end.
public enum Broadcast {
    /// The help both programs show.
    public static let abstract = "Send the screen or the camera, with sound, live (RTMP, RTSP, SRT, HLS) and/or into the library."
    public static let discussion = """
    One encode feeds every destination. Each live destination has its own bounded queue: \
    a slow or absent network drops whole GOPs (counted) and is reconnected with backoff, \
    while the library file keeps going. Frame size, rate, bitrate, encoder threads and \
    queue lengths are chosen to stay under a 40 MiB budget (the unit's hard limit is 50 MB). \
    The state (starting, live, reconnecting, stopped, error, bytes, drops) is written to \
    <state directory>/broadcast.json about once a second, where `kioskcam status` reads it.

    The camera can be broadcast only while the daemon is not running (the daemon holds it; \
    use `[stream] url` there instead, which reuses the daemon's one encode).

    Examples:
      kioskcam broadcast --source screen --to rtmp://192.168.1.10/live/kiosk
      kioskcam broadcast --to library --to /var/www/live --duration 10m
      kioskcam broadcast --source camera --to rtsp://mediamtx.local:8554/kiosk
    """

    /// Checks the options, joins the capped cgroup when `--cgroup` asks (the program starts
    /// again there), runs the broadcast and prints the library files it wrote.
    /// - Parameter openCamera: nil where this program has no cameras (`--source camera` is
    ///   then refused, naming the program that has them).
    /// - Throws: `ExitCode`, after printing the reason as one line.
    public static func run(_ options: BroadcastOptions, version: String, openCamera: BroadcastCameraOpener?) throws {
        try runReportingErrors {
            if let cgroup = options.cgroup { try restart(in: cgroup) }
            try broadcast(options, version: version, openCamera: openCamera)
        }
    }

    private static func broadcast(_ options: BroadcastOptions, version: String, openCamera: BroadcastCameraOpener?) throws {
        var configuration = try options.common.loadConfiguration()
        if let mic = options.mic { try configuration.override("microphone.source", .string(mic), origin: "--mic") }
        if let framebuffer = options.framebuffer {
            try configuration.override("screen.framebuffer", .string(framebuffer), origin: "--framebuffer")
        }
        guard options.source == "screen" || options.source == "camera" else {
            throw CLIError("--source \(options.source): use screen or camera", exitCode: 64)
        }
        guard !options.destinations.isEmpty else {
            throw CLIError("give at least one --to: library, rtmp://…, rtsp://…, srt://… or an HLS folder", exitCode: 64)
        }
        let parsed: [BroadcastDestination]
        do throws(BroadcastPlanError) {
            parsed = try options.destinations.map { text throws(BroadcastPlanError) in try BroadcastDestination(parsing: text) }
        } catch {
            throw CLIError(error.description, exitCode: 64)
        }
        // libavformat's HLS muxer does not create its folder: without this every
        // attempt would fail and be retried forever.
        for case .live(let playlist) in parsed where playlist.hasPrefix("/") {
            let folder = (playlist as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw CLIError("--to \(folder): cannot create the HLS folder (\(error.localizedDescription)); "
                               + "create it and let this user write into it", exitCode: 73)
            }
        }
        let requestedSize = try options.size.map { text -> FrameSize in
            guard let parsed = FrameSize(parsing: text) else {
                throw CLIError("--size \(text): use WIDTHxHEIGHT, such as 960x540", exitCode: 64)
            }
            return parsed
        }
        let limit = try options.duration.map { text -> Double in
            guard let seconds = parseDuration(text), seconds > 0, seconds <= 7 * 86_400 else {
                throw CLIError("--duration \(text): use a time such as 30s, 10m or 1h", exitCode: 64)
            }
            return seconds
        }
        guard MediaCapabilities.hasVideoEncoder(configuration.encoder.videoCodec) else {
            throw CLIError("no video encoder named \"\(configuration.encoder.videoCodec)\" in this FFmpeg build; "
                           + "set encoder.video_codec to one of: \(availableH264Encoders().joined(separator: ", "))", exitCode: 64)
        }
        MediaMemory.keepLargeBuffersOutOfTheHeap()
        MediaMemory.avoidTransparentHugePages()
        let logger = options.common.makeLogger(configuration, label: "kioskcam.broadcast")
        let session = try BroadcastSession(configuration: configuration, screen: options.source == "screen", destinations: parsed,
                                           framesPerSecond: options.fps, size: requestedSize, statusFile: options.statusFile,
                                           version: version, openCamera: openCamera, logger: logger)
        let files = try session.run(limit: limit, showProgress: !options.quiet)
        for file in files { print(file) }
    }

    /// Joins `directory` and executes this program again without `--cgroup`: memory a process
    /// touched before it moved stays charged to its old cgroup, so the whole broadcast
    /// (libraries, runtime, buffers) starts over inside the cap.
    /// - Throws: `CLIError` (exit 75) when the cgroup cannot be joined; the daemon promised a cap.
    private static func restart(in directory: String) throws {
        do throws(BroadcastCapRefusal) {
            try BroadcastCgroupSetup.join(directory)
        } catch {
            throw CLIError("\(error); the broadcast does not start without the memory cap the daemon set up", exitCode: 75)
        }
        var arguments: [String] = []
        var rest = CommandLine.arguments.dropFirst()
        while let argument = rest.popFirst() {
            if argument == "--cgroup" { _ = rest.popFirst(); continue }
            if argument.hasPrefix("--cgroup=") { continue }
            arguments.append(argument)
        }
        let program = BroadcastProgram.current
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        execv(program, &argv)
        // Still here: run on in the cgroup (only what the start-up touched is charged outside it).
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        FileHandle.standardError.write(Data("\(program): cannot execute \(program) again (\(reason)); going on in \(directory)\n".utf8))
    }
}

/// Which program runs a broadcast.
public enum BroadcastProgram {
    /// The running program's path (`/proc/self/exe`).
    public static var current: String { RunningProgram.path }

    /// The small program built for the 50 MB cap (scripts/build-release): what the
    /// daemon starts when it is installed beside `program`.
    public static let smallProgramName = "kioskcam-broadcast"

    /// How the daemon starts a broadcast: `kioskcam-broadcast` beside `program` when it is
    /// there, else `program broadcast` (the same options either way).
    public static func command(beside program: String = current) -> [String] {
        let sibling = RunningProgram.sibling(smallProgramName, of: program)
        return access(sibling, X_OK) == 0 ? [sibling] : [program, "broadcast"]
    }
}
