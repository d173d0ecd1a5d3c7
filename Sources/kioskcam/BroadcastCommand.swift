import ArgumentParser
import Foundation
import Glibc
import KioskAppliance
import KioskControl
import KioskCore
import KioskMedia
import KioskRecording
import KioskScreen
import KioskSources
import Logging

/// `kioskcam broadcast`: the screen (or the camera) with sound, live to one or more
/// destinations and/or into the library — a process of its own under a hard memory limit
/// (`kioskcam-broadcast.service`, `MemoryMax=50M`), like the seed's broadcast extension.
struct BroadcastCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Send the screen or the camera, with sound, live (RTMP, RTSP, SRT, HLS) and/or into the library.",
        discussion: """
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
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("What to send: screen (what the framebuffer shows) or camera.", valueName: "screen|camera"))
    var source = "screen"

    @Option(name: .customLong("to"), help: ArgumentHelp(
        "Destination (repeatable): library, rtmp://…, rtsp://… (publish), srt://…, or an absolute folder for HLS (index.m3u8).",
        valueName: "dest"))
    var destinations: [String] = []

    @Option(help: ArgumentHelp("Stop after this long: 30s, 10m, 1h.", valueName: "time"))
    var duration: String?

    @Option(help: ArgumentHelp("Frames a second: 2–15 for the screen (default 10); the camera's own rate by default.", valueName: "n"))
    var fps: Int?

    @Option(help: ArgumentHelp(
        "Picture size to send, e.g. 960x540: even, no larger than the source, its shape (default: the largest that fits the memory budget).",
        valueName: "WxH"))
    var size: String?

    @Option(help: ArgumentHelp("Microphone: auto, alsa:DEVICE, tone, silence, none, or file:PATH.wav (overrides microphone.source).",
                               valueName: "source"))
    var mic: String?

    @Option(help: ArgumentHelp("Framebuffer to read: /dev/fbN, file:/path, or auto (overrides screen.framebuffer).", valueName: "source"))
    var framebuffer: String?

    @Option(help: ArgumentHelp("Where to write the state for the daemon (default <state directory>/broadcast.json).", valueName: "file"))
    var statusFile: String?

    @Flag(help: "No progress lines.")
    var quiet = false

    @Option(help: ArgumentHelp("Join this cgroup v2 directory first, then start afresh in it (the daemon passes its capped "
                               + "broadcast leaf).", valueName: "dir"))
    var cgroup: String?

    func run() throws {
        try runReportingErrors {
            if let cgroup { try Self.restart(in: cgroup) }
            var configuration = try common.loadConfiguration()
            if let mic { try configuration.override("microphone.source", .string(mic), origin: "--mic") }
            if let framebuffer { try configuration.override("screen.framebuffer", .string(framebuffer), origin: "--framebuffer") }
            guard source == "screen" || source == "camera" else {
                throw CLIError("--source \(source): use screen or camera", exitCode: 64)
            }
            guard !destinations.isEmpty else {
                throw CLIError("give at least one --to: library, rtmp://…, rtsp://…, srt://… or an HLS folder", exitCode: 64)
            }
            let parsed: [BroadcastDestination]
            do throws(BroadcastPlanError) {
                parsed = try destinations.map { text throws(BroadcastPlanError) in try BroadcastDestination(parsing: text) }
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
            let requestedSize = try size.map { text -> FrameSize in
                guard let parsed = FrameSize(parsing: text) else {
                    throw CLIError("--size \(text): use WIDTHxHEIGHT, such as 960x540", exitCode: 64)
                }
                return parsed
            }
            let limit = try duration.map { text -> Double in
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
            let logger = common.makeLogger(configuration, label: "kioskcam.broadcast")
            let session = try BroadcastSession(configuration: configuration, screen: source == "screen", destinations: parsed,
                                               framesPerSecond: fps, size: requestedSize, statusFile: statusFile, logger: logger)
            let files = try session.run(limit: limit, showProgress: !quiet)
            for file in files { print(file) }
        }
    }
}

extension BroadcastCommand {
    /// Joins `directory` and executes this program again without `--cgroup`: memory a process
    /// touched before it moved stays charged to its old cgroup, so the whole broadcast
    /// (libraries, runtime, buffers) starts over inside the cap.
    /// - Throws: `CLIError` (exit 75) when the cgroup cannot be joined; the daemon promised a cap.
    static func restart(in directory: String) throws {
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
        let program = BroadcastLink.thisProgram
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        execv(program, &argv)
        // Still here: run on in the cgroup (only what the start-up touched is charged outside it).
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        FileHandle.standardError.write(Data("kioskcam broadcast: cannot execute \(program) again (\(reason)); going on in \(directory)\n".utf8))
    }
}

/// One broadcast: a source, the microphone, one encode, and its destinations.
struct BroadcastSession {
    let configuration: Configuration
    let isScreen: Bool
    let destinations: [BroadcastDestination]
    let plan: BroadcastPlan
    let logger: Logger
    private let video: VideoSource
    private let framebuffer: Framebuffer?
    private let microphone: AudioSource?
    private let statusPath: String
    /// Where the kernel counts this process's memory, and the limit there (for broadcast.json).
    private let memoryLimit = BroadcastCgroupSetup.ownLimit()

    /// - Parameter size: `--size`, or nil for the largest picture that fits the budget.
    init(configuration: Configuration, screen: Bool, destinations: [BroadcastDestination], framesPerSecond: Int?,
         size requestedSize: FrameSize?, statusFile: String?, logger: Logger) throws {
        self.configuration = configuration
        self.isScreen = screen
        self.destinations = destinations
        self.logger = logger
        statusPath = statusFile ?? configuration.control.stateDirectory + "/" + BroadcastStatus.fileName
        let network = destinations.filter(\.isNetwork).count
        let audioBitrate = min(configuration.encoder.audioBitrate, 96_000)
        if screen {
            let opened: Framebuffer
            do throws(ScreenError) {
                opened = try Framebuffer.openForReading(config: configuration)
            } catch {
                throw CLIError(error.description)
            }
            let size = FrameSize(width: opened.size.width, height: opened.size.height)
            do throws(BroadcastPlanError) {
                plan = try BroadcastPlan.choose(sourceSize: size, bytesPerSourcePixel: opened.format.bytesPerPixel,
                                                framesPerSecond: framesPerSecond, isScreen: true, networkDestinations: network,
                                                audioBitrate: audioBitrate,
                                                copiesFrames: !FramebufferCapture.readsByReference(opened, rotation: configuration.screen.rotation),
                                                requestedSize: requestedSize)
            } catch {
                opened.close()
                throw CLIError(error.description, exitCode: 64)
            }
            do throws(ScreenError) {
                video = try FramebufferCapture(framebuffer: opened, rotation: configuration.screen.rotation,
                                               framesPerSecond: plan.framesPerSecond, framesInFlight: plan.framesInFlight,
                                               size: plan.size, clock: SystemClock())
            } catch {
                opened.close()
                throw CLIError(error.description)
            }
            framebuffer = opened
            logger.notice("broadcast: \(opened) at \(plan.framesPerSecond) fps")
            if plan.isScaled {
                let why = requestedSize == nil ? "the largest that fits the \(BroadcastPlan.defaultBudgetBytes >> 20) MiB budget" : "--size"
                logger.notice("broadcast: the screen's \(plan.sourceSize) is scaled to \(plan.size) (\(why))")
            }
        } else {
            // The daemon holds the camera while it runs; its own stream reuses its encode.
            if (try? ControlClient(configuration.control).send(.status)) != nil {
                throw CLIError("the daemon is running and holds the camera; set [stream] url in its configuration "
                               + "(one encode, no second process), or stop the daemon first", exitCode: 75)
            }
            var camera = configuration
            // The camera delivers the size itself: nothing to scale.
            if let requestedSize { try camera.override("camera.size", .string(requestedSize.description), origin: "--size") }
            if let framesPerSecond { try camera.override("camera.fps", .integer(Int64(framesPerSecond)), origin: "--fps") }
            let opened = try SourceFactory.camera(camera, realtime: true, logger: logger)
            do throws(BroadcastPlanError) {
                plan = try BroadcastPlan.choose(sourceSize: opened.format.size, bytesPerSourcePixel: 2,
                                                framesPerSecond: opened.format.framesPerSecond, isScreen: false,
                                                networkDestinations: network, audioBitrate: audioBitrate)
            } catch {
                throw CLIError(error.description, exitCode: 64)
            }
            guard plan.size == opened.format.size else {
                throw CLIError("the camera delivers \(opened.format.size); within the broadcast's memory budget it would have to be "
                               + "\(plan.size) or smaller: pass --size \(plan.size) (or set camera.size)", exitCode: 64)
            }
            video = opened
            framebuffer = nil
        }
        microphone = try SourceFactory.microphone(configuration, realtime: true, logger: logger)
        let plan = plan
        logger.notice("""
            broadcast plan: \(plan.size) \(plan.framesPerSecond) fps, \(plan.videoBitrate / 1000) kbit/s, \
            \(plan.encoderThreads) encoder thread, \(plan.queueBytesPerDestination / 1024) KiB a destination, \
            about \(plan.estimatedBytes >> 20) MiB in all
            """)
    }

    private func recorderSettings(storage: StorageGuard?) -> RecorderSettings {
        var settings = SourceFactory.recorderSettings(configuration, video: video.format, audio: microphone?.format,
                                                      version: KioskCam.version)
        // A library file obeys the disk guard like any recording (frees old days, stops before the disk fills).
        settings.storageCheck = storage?.check
        // Chosen for the memory cap: one thread, no lookahead (zerolatency), a short GOP.
        settings.video?.bitrate = plan.videoBitrate
        settings.video?.threads = plan.encoderThreads
        settings.video?.tune = "zerolatency"
        settings.video?.preset = "veryfast"
        settings.video?.keyframeInterval = plan.keyframeInterval
        settings.audio?.bitrate = plan.audioBitrate
        return settings
    }

    /// Broadcasts until `limit` seconds, a signal, or the source ends.
    /// - Returns: The library files written.
    func run(limit: Double?, showProgress: Bool) throws -> [String] {
        defer { framebuffer?.close() }
        let log = SessionLog()
        let configuration = configuration
        let storage = destinations.contains(.library) ? StorageGuard(configuration: { configuration }, logger: logger) : nil
        storage?.start()
        defer { storage?.stop() }
        let recorder = Recorder(settings: recorderSettings(storage: storage), clock: SystemClock(), logger: logger, overflow: .dropOldest,
                                videoKind: isScreen ? .screen : .video, onEvent: { log.record($0) })
        let streams = destinations.compactMap { destination -> StreamOutput? in
            guard case .live(let url) = destination else { return nil }
            return StreamOutput(url: url, queueBytes: plan.queueBytesPerDestination, audio: microphone != nil,
                                clock: SystemClock(), logger: logger)
        }
        for stream in streams {
            recorder.encoder.add(stream)
            stream.start()
        }
        let started = Date().timeIntervalSince1970
        let stopSignal = StopSignal()
        let toLibrary = destinations.contains(.library)
        var fatal: String?
        do {
            try video.start(into: recorder)
            try microphone?.start(into: recorder)
        } catch {
            fatal = "\(error)"
        }
        if fatal == nil, toLibrary {
            do { try recorder.start(maximumSeconds: limit) } catch { fatal = error.description }
        }
        var lastWritten = 0.0, lastShown = 0.0
        var reason = "done"
        while fatal == nil {
            Thread.sleep(forTimeInterval: 0.2)
            let now = Date().timeIntervalSince1970
            if now - lastWritten >= 1 {
                lastWritten = now
                let status = report(recorder: recorder, streams: streams, started: started, fatal: nil, finished: false)
                write(status)
                if showProgress, now - lastShown >= 5 {
                    lastShown = now
                    FileHandle.standardError.write(Data((status.line(now: now) + "\n").utf8))
                }
            }
            if let name = stopSignal.signalName { reason = "\(name) received"; break }
            if let limit, now - started >= limit { reason = "duration reached"; break }
            if let end = log.end(of: video.name) {
                if case .failed(let message) = end { fatal = "\(video.name) failed: \(message)" }
                reason = "\(video.name) ended"
                break
            }
            if toLibrary, let failure = log.failureMessages.first { fatal = failure; break }
        }
        logger.info("broadcast: stopping (\(fatal ?? reason))")
        video.stop()
        microphone?.stop()
        for stream in streams { stream.stop() }
        if toLibrary, (try? recorder.stop(.now)) != nil, recorder.waitUntilIdle(timeout: 30) != .idle {
            logger.error("the library file did not finish within 30 s")
        }
        let final = report(recorder: recorder, streams: streams, started: started, fatal: fatal, finished: true)
        recorder.shutdown()
        write(final)
        if showProgress { FileHandle.standardError.write(Data((final.line(now: Date().timeIntervalSince1970) + "\n").utf8)) }
        if let fatal { throw CLIError(fatal) }
        return log.finishedFiles
    }

    /// The state now, from the library output and each stream.
    private func report(recorder: Recorder, streams: [StreamOutput], started: Double, fatal: String?,
                        finished: Bool) -> BroadcastStatus {
        var destinations: [BroadcastStatus.Destination] = []
        if self.destinations.contains(.library) {
            let status = recorder.status
            let state: BroadcastStatus.State
            switch status.state {
            case .recording, .stopping: state = .live
            case .starting: state = .starting
            case .idle: state = status.lastError == nil ? (finished ? .stopped : .starting) : .error
            }
            destinations.append(BroadcastStatus.Destination(name: status.currentFile ?? "library", state: finished ? .stopped : state,
                                                           bytes: status.bytesWritten, lastError: status.lastError))
        }
        for stream in streams {
            let status = stream.status
            let state: BroadcastStatus.State
            switch status.state {
            case .connecting: state = .starting
            case .live: state = .live
            case .reconnecting: state = .reconnecting
            case .stopped: state = .stopped
            }
            destinations.append(BroadcastStatus.Destination(name: status.destination, state: state, bytes: status.bytesSent,
                                                           droppedGOPs: status.droppedGOPs, lastError: status.lastError))
        }
        let skipped = (video as? FramebufferCapture)?.skippedFrames ?? 0
        let overall = BroadcastStatus.overall(destinations.map(\.state), failed: fatal != nil, finished: finished)
        return BroadcastStatus(state: overall, source: isScreen ? "screen" : "camera", pid: getpid(), startedAt: started,
                               updatedAt: Date().timeIntervalSince1970, width: plan.size.width, height: plan.size.height,
                               framesPerSecond: plan.framesPerSecond, videoBitrate: plan.videoBitrate,
                               droppedFrames: recorder.status.droppedVideoFrames + skipped, destinations: destinations, error: fatal,
                               cgroup: memoryLimit.cgroup, memoryMaxBytes: memoryLimit.bytes)
    }

    /// Replaces the status file (renamed into place, so a reader never sees half of it).
    private func write(_ status: BroadcastStatus) {
        do {
            try status.encoded().write(to: URL(fileURLWithPath: statusPath), options: .atomic)
        } catch {
            logger.debug("broadcast: cannot write \(statusPath): \(error.localizedDescription)")
        }
    }
}
