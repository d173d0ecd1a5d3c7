import Foundation
import Glibc
import KioskCLI
import KioskControl
import KioskCore
import KioskFramebuffer
import KioskMedia
import KioskMicrophones
import KioskRecording
import KioskSources
import Logging

/// One broadcast: a source, the microphone, one encode, and its destinations.
struct BroadcastSession {
    let version: String
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
         size requestedSize: FrameSize?, statusFile: String?, version: String, openCamera: BroadcastCameraOpener?,
         logger: Logger) throws {
        self.configuration = configuration
        self.version = version
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
            guard let openCamera else {
                throw CLIError("\(BroadcastProgram.smallProgramName) sends the screen only; for the camera run `kioskcam broadcast "
                               + "--source camera`, or set [stream] url in the daemon's configuration (its one encode)", exitCode: 64)
            }
            // The daemon holds the camera while it runs; its own stream reuses its encode.
            if (try? ControlClient(configuration.control).send(.status)) != nil {
                throw CLIError("the daemon is running and holds the camera; set [stream] url in its configuration "
                               + "(one encode, no second process), or stop the daemon first", exitCode: 75)
            }
            var camera = configuration
            // The camera delivers the size itself: nothing to scale.
            if let requestedSize { try camera.override("camera.size", .string(requestedSize.description), origin: "--size") }
            if let framesPerSecond { try camera.override("camera.fps", .integer(Int64(framesPerSecond)), origin: "--fps") }
            let opened = try openCamera(camera, logger)
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
        do throws(MicrophoneError) {
            microphone = try MicrophoneChoice.open(configuration, realtime: true, logger: logger)
        } catch {
            throw CLIError(error.description)
        }
        let plan = plan
        logger.notice("""
            broadcast plan: \(plan.size) \(plan.framesPerSecond) fps, \(plan.videoBitrate / 1000) kbit/s, \
            \(plan.encoderThreads) encoder thread, \(plan.queueBytesPerDestination / 1024) KiB a destination, \
            about \(plan.estimatedBytes >> 20) MiB in all
            """)
    }

    private func recorderSettings(storage: StorageGuard?) -> RecorderSettings {
        var settings = RecorderSettings(configuration, video: video.format, audio: microphone?.format, version: version)
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
        let live = destinations.compactMap { destination -> GraphPlan.StreamPlan? in
            guard case .live(let url) = destination else { return nil }
            return GraphPlan.StreamPlan(url: url, queueBytes: plan.queueBytesPerDestination, audio: microphone != nil)
        }
        let recorder = Recorder(settings: recorderSettings(storage: storage), clock: SystemClock(), logger: logger, overflow: .dropOldest,
                                videoKind: isScreen ? .screen : .video, streams: live, onEvent: { log.record($0) })
        let streams = recorder.streams
        recorder.startStreams()
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
            case .failed: state = .error
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
