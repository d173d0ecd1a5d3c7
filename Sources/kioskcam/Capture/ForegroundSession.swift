import Foundation
import KioskAppliance
import KioskCLI
import KioskCore
import KioskMicrophones
import KioskRecording
import KioskSources
import Logging

/// One foreground run of the pipeline (for `record` and `snapshot`): salvage, open
/// sources, record until told to stop, finish cleanly.
struct ForegroundSession {
    let configuration: Configuration
    let audioOnly: Bool
    let realtime: Bool
    let logger: Logger
    private let camera: VideoSource?
    private let microphone: AudioSource?
    private let fileReplay: Bool
    /// Free space and retention, measured and purged on their own thread.
    private let storage: StorageGuard
    /// `[privacy]`: read before any source opens, so that a bad mask PNG stops the start.
    private let privacy: PrivacyMask

    init(configuration: Configuration, audioOnly: Bool, realtime: Bool, logger: Logger, needsMicrophone: Bool = true) throws {
        self.configuration = configuration
        switch PrivacyMask.configured(configuration) {
        case .success(let mask): privacy = mask
        case .failure(let error):
            throw CLIError("privacy.mask_png: \(error); fix the file, or set privacy.mask_png = \"\" to go without it")
        }
        self.audioOnly = audioOnly
        self.realtime = realtime
        self.logger = logger
        camera = audioOnly ? nil : try SourceFactory.camera(configuration, realtime: realtime, logger: logger)
        microphone = needsMicrophone ? try MicrophoneChoice.open(configuration, realtime: realtime, logger: logger) : nil
        fileReplay = (camera is RawFileCamera || microphone is WAVFileMicrophone) && !realtime
        storage = StorageGuard(configuration: { configuration }, logger: logger)
    }

    /// `[stream] url`: the same packets go live too (one encode, not two).
    private func makeRecorder(_ log: SessionLog, withStream: Bool = false) -> Recorder {
        var settings = RecorderSettings(configuration, video: camera?.format, audio: microphone?.format,
                                                    version: KioskCam.version)
        settings.storageCheck = storage.check
        settings.overlay = OverlaySpec.configured(configuration, fields: OverlayFields.configured(configuration, deviceID: nil))
        settings.privacy = privacy
        let stream = withStream && !audioOnly
            ? GraphPlan.StreamPlan.configured(configuration, withSound: microphone != nil, replay: fileReplay) : nil
        return Recorder(settings: settings, clock: SystemClock(), logger: logger,
                        overflow: fileReplay ? .block : .dropOldest, streams: stream.map { [$0] } ?? [],
                        onEvent: { log.record($0) })
    }

    /// Salvages leftovers from a crash; reports what it found.
    private func salvageLeftovers() throws {
        let files = LibraryFiles(layout: LibraryLayout(root: configuration.storage.mediaRoot))
        do {
            try files.prepare()
        } catch {
            throw CLIError(error.description)
        }
        for (file, outcome) in IncomingSalvage(files: files, logger: logger).salvageAll() {
            if case .recovered(let path, let seconds) = outcome {
                logger.notice("recovered \(String(format: "%.1f", seconds)) s from \(file) into \(path)")
            }
        }
    }

    /// Records until `limit` seconds, a source's end, or a signal.
    /// - Returns: The library paths written.
    func record(limit: Double?, showProgress: Bool) throws -> [String] {
        try salvageLeftovers()
        let log = SessionLog()
        let recorder = makeRecorder(log, withStream: true)
        let stopSignal = StopSignal()
        // A file replayed as fast as it reads is started after the recording, whose
        // encoder opens on demand: otherwise its first frames went by before anyone
        // wanted them. A live camera runs first, so that the file starts at once. The
        // stream connects before a file replay starts, so that it has its first GOP too.
        recorder.startStreams()
        if !fileReplay {
            do { try startSources(into: recorder) } catch { recorder.shutdown(); throw error }
        }
        defer { stopSources() }
        do {
            try recorder.start(maximumSeconds: limit)
        } catch {
            recorder.shutdown()
            throw CLIError(error.description)
        }
        if fileReplay {
            do { try startSources(into: recorder) } catch { recorder.shutdown(); throw error }
        }
        storage.start()
        defer { storage.stop() }
        let progress = ProgressLine(enabled: showProgress)
        var stopReason = "done"
        var cameraLost = false
        var recordedBeforeLoss = 0.0
        while true {
            Thread.sleep(forTimeInterval: 0.1)
            let status = recorder.status
            progress.show(status)
            if let supervisor = camera as? CameraSupervisor {
                switch supervisor.health {
                case .lost where !cameraLost:
                    // Keep what was recorded: finish the file now, resume when the camera returns.
                    cameraLost = true
                    logger.error("\(supervisor.health); the recording so far is kept, and recording resumes when the camera is back")
                    recordedBeforeLoss += status.secondsWritten
                    try? recorder.stop(.now)
                case .running where cameraLost && status.state == .idle:
                    cameraLost = false
                    logger.notice("camera is back: recording again")
                    let remaining = limit.map { max(0.1, $0 - recordedBeforeLoss) }
                    do { try recorder.start(maximumSeconds: remaining) } catch { logger.error("could not resume: \(error)") }
                    continue
                default:
                    break
                }
            }
            if !cameraLost, status.state == .idle || status.state == .stopping {
                stopReason = limit != nil ? "duration reached" : "the recording ended"
                break
            }
            if let name = stopSignal.signalName { stopReason = "\(name) received"; break }
            // Only the source that defines the recording ends it: a WAV shorter than the
            // video just leaves the rest silent.
            if let end = log.end(of: primarySource) {
                if case .failed(let message) = end { logger.error("\(primarySource) failed: \(message)") }
                stopReason = "\(primarySource) ended"
                break
            }
        }
        logger.info("stopping: \(stopReason)")
        let replayEnded = fileReplay && log.end(of: primarySource) != nil
        try? recorder.stop(replayEnded ? .afterQueuedInput : .now)
        if recorder.waitUntilIdle(timeout: 60) != .idle {
            logger.error("the recording did not finish within 60 s")
        }
        progress.finish(recorder.status)
        recorder.shutdown()
        // A lost camera while stopping is not a failure of the recording: its part is kept.
        let failures = log.failureMessages
        if let failure = failures.first {
            let kept = log.finishedFiles
            let keptNote = kept.isEmpty ? "" : " (kept what was written: \(kept.joined(separator: ", ")))"
            throw CLIError(failure + keptNote)
        }
        return log.finishedFiles
    }

    /// The source whose end ends the recording: the camera, or the microphone when
    /// recording sound only.
    private var primarySource: String { camera?.name ?? microphone?.name ?? "" }

    /// Takes one still from the camera.
    func snapshot() throws -> String {
        let log = SessionLog()
        let recorder = makeRecorder(log)
        let result = Locked<Result<String, RecorderError>?>(nil)
        recorder.snapshot(timeout: 10) { outcome in
            result.withLock { $0 = outcome }
            result.wakeWaiters()
        }
        try startSources(into: recorder)
        defer {
            stopSources()
            recorder.shutdown()
        }
        switch result.withLock(waitingUntil: { $0 != nil }, deadline: Date(timeIntervalSinceNow: 10), { $0 }) {
        case .success(let path)?: return path
        case .failure(let error)?: throw CLIError(error.description)
        case nil: break
        }
        throw CLIError("no frame arrived from the camera within 10 s; check the camera (kioskcam probe) and try again")
    }

    private func startSources(into recorder: Recorder) throws {
        do {
            try camera?.start(into: recorder)
            try microphone?.start(into: recorder)
        } catch {
            stopSources()
            throw CLIError("\(error)")
        }
    }

    private func stopSources() {
        camera?.stop()
        microphone?.stop()
    }
}

/// The live line while recording: time, size, drops.
final class ProgressLine {
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private var lastPrinted = Date.distantPast

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ status: RecorderStatus) {
        guard enabled else { return }
        let interval = isTerminal ? 0.25 : 5
        guard Date().timeIntervalSince(lastPrinted) >= interval else { return }
        lastPrinted = Date()
        let line = Self.format(status)
        FileHandle.standardError.write(Data((isTerminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    func finish(_ status: RecorderStatus) {
        guard enabled else { return }
        FileHandle.standardError.write(Data(((isTerminal ? "\r\u{1B}[K" : "") + Self.format(status) + "\n").utf8))
    }

    static func format(_ status: RecorderStatus) -> String {
        let seconds = status.secondsWritten
        let time = String(format: "%02d:%04.1f", Int(seconds) / 60, seconds.truncatingRemainder(dividingBy: 60))
        let size = String(format: "%.2f MB", Double(status.bytesWritten) / 1_000_000)
        var line = "\(status.state == .recording ? "● REC" : status.state.rawValue)  \(time)  \(size)  segment \(status.segmentIndex)"
        line += "  dropped \(status.droppedVideoFrames) frames"
        if status.droppedAudioChunks > 0 { line += ", \(status.droppedAudioChunks) audio chunks" }
        if let levels = status.audioLevels {
            let channels = zip(levels.rmsDBFS, levels.peakHoldDBFS).map { String(format: "%.0f/%.0f", $0, $1) }
            line += "  level \(channels.joined(separator: " ")) dBFS"
        }
        return line
    }
}
