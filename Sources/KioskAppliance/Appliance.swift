import Foundation
import KioskCore
import KioskRecording
import KioskSources
import KioskALSA
import Logging

/// Something the appliance reports as it happens: to the log, the control socket's
/// event stream, the screen and the status LED.
public enum ApplianceEvent: Sendable {
    case recordingState(RecordingState)
    case fileFinished(path: String, seconds: Double, bytes: Int64)
    case snapshotSaved(path: String)
    case cameraHealth(String)
    case failure(String)
    case button(String)
    case touch(TouchEvent)
    case screen(ScreenPage)
    case notice(String)
    /// A wrong PIN was entered on the screen (counted in the metrics).
    case pinRejected
}

/// A view of the whole appliance for status, the screen and metrics.
public struct ApplianceStatus: Sendable {
    public var recorder: RecorderStatus
    public var cameraName: String
    /// "running", "starting", "camera lost since …", or "none".
    public var cameraState: String
    public var cameraRunning: Bool
    public var microphoneName: String
    public var microphoneState: String
    public var microphoneOverruns: Int
    /// Free and total bytes of the media root's file system (nil when it cannot be read).
    public var freeBytes: Int64?
    public var totalBytes: Int64?
    public var startedAt: Date
    public var snapshotsTaken: Int
    public var lastSnapshot: String?
    /// The built-in test pattern / tone stand in for missing devices.
    public var usingBuiltInSources: Bool
}

/// The running appliance's capture and recording core: the sources run all the time
/// (the screen shows their picture), the recorder records when told to, and camera
/// losses end the file and resume recording when the camera returns.
///
/// Commands may come from any thread (buttons, touch, the control socket).
public final class Appliance: @unchecked Sendable {
    public let logger: Logger
    public let camera: VideoSource?
    public let microphone: AudioSource?
    /// Video and sound into `.mp4`.
    public let recorder: Recorder
    /// Sound only into `.m4a` (with its waveform), fed the same microphone.
    public let audioRecorder: Recorder?
    public let preview: PreviewTap
    public let usingBuiltInSources: Bool
    private let startedAt = Date()
    private let configurationBox: ConfigurationBox
    private let lock = Lock()
    // Guarded by `lock`.
    private var listeners: [@Sendable (ApplianceEvent) -> Void] = []
    private var resumeAfterCameraLoss = false
    private var userWantsRecording = false
    private var snapshotsTaken = 0
    private var lastSnapshot: String?
    private var lastCameraState = ""
    private var sourcesRunning = false

    /// Opens the configured sources (falling back to the built-in ones, with a log line)
    /// and salvages whatever a crash left unfinished.
    /// - Throws: `ApplianceError` when a configured source cannot be opened at all or the
    ///   media root is unusable.
    public init(configuration: Configuration, version: String, deviceID: String?, logger: Logger) throws {
        self.logger = logger
        configurationBox = ConfigurationBox(configuration)
        let camera = try SourceFactory.camera(configuration, realtime: true, logger: logger)
        let microphone = try SourceFactory.microphone(configuration, realtime: true, logger: logger)
        self.camera = camera
        self.microphone = microphone
        usingBuiltInSources = camera is TestPatternCamera || microphone is ToneMicrophone
        if usingBuiltInSources {
            logger.notice("no camera or no microphone found: running on the built-in \(camera is TestPatternCamera ? "test-pattern camera" : camera.name) and \(microphone.map { $0 is ToneMicrophone ? "tone microphone" : $0.name } ?? "no microphone")")
        }
        var settings = SourceFactory.recorderSettings(configuration, video: camera.format, audio: microphone?.format, version: version)
        if let deviceID { settings.metadata["device_id"] = deviceID }
        let box = configurationBox
        settings.storageCheck = LibraryStorage.check({ box.value }, logger: logger)
        let relay = EventRelay()
        recorder = Recorder(settings: settings, clock: SystemClock(), logger: logger, overflow: .dropOldest,
                            onEvent: { relay.forward($0) })
        if microphone != nil {
            var audioSettings = settings
            audioSettings.video = nil
            audioRecorder = Recorder(settings: audioSettings, clock: SystemClock(), logger: logger, overflow: .dropOldest,
                                     onEvent: { relay.forward($0) })
        } else {
            audioRecorder = nil
        }
        preview = PreviewTap(downstream: recorder, soundOnly: audioRecorder,
                             framesPerSecond: configuration.screen.previewFramesPerSecond)
        relay.target = self
        try salvageLeftovers(configuration)
    }

    public var configuration: Configuration { configurationBox.value }

    /// Adopts settings that can change without a restart (retention, disk guard); the
    /// caller reports the rest as needing a restart.
    public func adopt(_ configuration: Configuration) { configurationBox.value = configuration }

    /// Subscribes to events; called on the thread that produced the event.
    public func onEvent(_ listener: @escaping @Sendable (ApplianceEvent) -> Void) {
        lock.withLock { listeners.append(listener) }
    }

    func publish(_ event: ApplianceEvent) {
        let current = lock.withLock { listeners }
        for listener in current { listener(event) }
    }

    fileprivate func recorderEvent(_ event: RecorderEvent) {
        switch event {
        case .stateChanged:
            let state = recordingState
            logger.info("recording: \(state.rawValue)")
            publish(.recordingState(state))
        case .fileFinished(let path, let seconds, let bytes):
            logger.notice("recorded \(path) (\(String(format: "%.1f", seconds)) s, \(ByteCountText.text(bytes)))")
            publish(.fileFinished(path: path, seconds: seconds, bytes: bytes))
        case .snapshotSaved(let path):
            lock.withLock { snapshotsTaken += 1; lastSnapshot = path }
            logger.notice("still saved: \(path)")
            publish(.snapshotSaved(path: path))
        case .failed(let error):
            logger.error("recording failed: \(error)")
            publish(.failure(error.description))
        case .sourceEnded(let source, let end):
            if case .failed(let message) = end { logger.error("\(source) stopped: \(message)") }
        }
    }

    private func salvageLeftovers(_ configuration: Configuration) throws {
        let files = LibraryFiles(layout: LibraryLayout(root: configuration.storage.mediaRoot))
        do {
            try files.prepare()
        } catch {
            throw ApplianceError("\(error.description); set [storage] media_root to a writable folder")
        }
        for (file, outcome) in IncomingSalvage(files: files, logger: logger).salvageAll() {
            if case .recovered(let path, let seconds) = outcome {
                logger.notice("recovered \(String(format: "%.1f", seconds)) s from \(file) into \(path)")
            }
        }
    }

    // MARK: Sources

    /// Starts the camera and microphone. A microphone that fails is logged and left out;
    /// the camera's supervisor keeps retrying a camera that is gone.
    public func startSources() throws {
        guard lock.withLock({ !sourcesRunning }) else { return }
        if let camera {
            do { try camera.start(into: preview) } catch { throw ApplianceError("camera \(camera.name): \(error)") }
        }
        if let microphone {
            do {
                try microphone.start(into: preview)
            } catch {
                logger.error("microphone \(microphone.name) did not start: \(error); recording continues without sound")
            }
        }
        lock.withLock { sourcesRunning = true }
    }

    /// Stops capture (first, on shutdown, so the recorder sees no more input).
    public func stopSources() {
        guard lock.withLock({ sourcesRunning }) else { return }
        camera?.stop()
        microphone?.stop()
        lock.withLock { sourcesRunning = false }
    }

    // MARK: Commands (any thread)

    /// Starts recording.
    /// - Throws: `ApplianceError` with the recorder's reason ("already recording", disk full).
    public func startRecording(maximumSeconds: Double? = nil) throws {
        if case .lost = (camera as? CameraSupervisor)?.health {
            throw ApplianceError("the camera is not delivering frames (\(cameraState)); check its cable, or kioskcam probe")
        }
        do {
            try recorder.start(maximumSeconds: maximumSeconds)
        } catch {
            throw ApplianceError(error.description)
        }
        lock.withLock { userWantsRecording = true; resumeAfterCameraLoss = false }
    }

    /// Starts a sound-only recording (`.m4a` with a waveform picture).
    /// - Throws: `ApplianceError` without a microphone, while a recording runs, or when
    ///   the disk is full.
    public func startAudioRecording(maximumSeconds: Double? = nil) throws {
        guard let audioRecorder else {
            throw ApplianceError("there is no microphone, so there is nothing to record sound from; set [microphone] source")
        }
        guard recorder.status.state == .idle else { throw ApplianceError("already recording") }
        do {
            try audioRecorder.start(maximumSeconds: maximumSeconds)
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// The recorder that is not idle, if any.
    private var activeRecorder: Recorder? {
        if recorder.status.state != .idle { return recorder }
        if let audioRecorder, audioRecorder.status.state != .idle { return audioRecorder }
        return nil
    }

    /// The state of whichever recording runs (video or sound only).
    public var recordingState: RecordingState { activeRecorder?.status.state ?? .idle }

    /// Stops recording; the file is in the library once the state is idle again.
    public func stopRecording() throws {
        lock.withLock { userWantsRecording = false; resumeAfterCameraLoss = false }
        do {
            try (activeRecorder ?? recorder).stop(.now)
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// Start when idle, stop when recording; ignored (with the reason) while starting or
    /// stopping, so a bouncing finger never queues a second toggle.
    /// - Returns: What happened, for logs and the event stream.
    @discardableResult
    public func toggleRecording() -> String {
        switch recordingState {
        case .idle:
            do { try startRecording(); return "recording started" } catch { return "not started: \(error)" }
        case .recording:
            do { try stopRecording(); return "recording stopped" } catch { return "not stopped: \(error)" }
        case .starting, .stopping:
            return "ignored: the recording is \(recordingState.rawValue)"
        }
    }

    /// Saves the next frame as a JPEG.
    public func takeSnapshot(_ completion: @escaping @Sendable (Result<String, ApplianceError>) -> Void) {
        recorder.snapshot { result in
            completion(result.mapError { ApplianceError($0.description) })
        }
    }

    /// Takes a still and waits for it (up to `timeout` seconds).
    public func takeSnapshot(timeout: Double = 10) throws -> String {
        let box = SnapshotBox()
        takeSnapshot { box.set($0) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if let result = box.value { return try result.get() }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw ApplianceError("no frame arrived from the camera within \(Int(timeout)) s; check the camera (kioskcam probe)")
    }

    // MARK: Upkeep (the upkeep service calls this twice a second)

    /// Follows the camera's health: a lost camera finishes the recording (kept), and
    /// recording resumes when it is back if the user had not stopped it.
    public func superviseCamera() {
        let state = cameraState
        let changed = lock.withLock { () -> Bool in
            defer { lastCameraState = state }
            return state != lastCameraState
        }
        if changed { publish(.cameraHealth(state)) }
        guard let supervisor = camera as? CameraSupervisor else { return }
        switch supervisor.health {
        case .lost:
            let mustStop = lock.withLock { () -> Bool in
                guard userWantsRecording, recorder.status.state == .recording else { return false }
                resumeAfterCameraLoss = true
                return true
            }
            if mustStop {
                logger.error("\(supervisor.health); the recording so far is kept, and recording resumes when the camera is back")
                try? recorder.stop(.now)
            }
        case .running:
            let resume = lock.withLock { resumeAfterCameraLoss && recorder.status.state == .idle }
            if resume {
                lock.withLock { resumeAfterCameraLoss = false }
                logger.notice("camera is back: recording again")
                do { try recorder.start() } catch { logger.error("could not resume recording: \(error)") }
            }
        case .starting:
            break
        }
    }

    public var cameraState: String {
        guard let camera else { return "none" }
        if let supervisor = camera as? CameraSupervisor { return supervisor.health.description }
        return lock.withLock { sourcesRunning } ? "running" : "stopped"
    }

    public var status: ApplianceStatus {
        let recorderStatus = (activeRecorder ?? recorder).status
        let space = Self.space(at: configuration.storage.mediaRoot)
        let (taken, last) = lock.withLock { (snapshotsTaken, lastSnapshot) }
        let alsa = microphone as? ALSAMicrophone
        let cameraRunning: Bool
        if let supervisor = camera as? CameraSupervisor {
            cameraRunning = supervisor.health == .running
        } else {
            cameraRunning = camera != nil && lock.withLock { sourcesRunning }
        }
        return ApplianceStatus(
            recorder: recorderStatus,
            cameraName: camera?.name ?? "none",
            cameraState: cameraState,
            cameraRunning: cameraRunning,
            microphoneName: microphone?.name ?? "none",
            microphoneState: microphone == nil ? "none" : (lock.withLock { sourcesRunning } ? "running" : "stopped"),
            microphoneOverruns: alsa?.overruns ?? 0,
            freeBytes: space?.free,
            totalBytes: space?.total,
            startedAt: startedAt,
            snapshotsTaken: taken,
            lastSnapshot: last,
            usingBuiltInSources: usingBuiltInSources
        )
    }

    /// One `statvfs` for both figures.
    static func space(at path: String) -> (free: Int64, total: Int64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return (Int64(info.f_bavail) * Int64(info.f_frsize), Int64(info.f_blocks) * Int64(info.f_frsize))
    }

    /// Finishes the recording (trailer written, file moved into the library) and stops
    /// the encoder thread. Call after `stopSources()`.
    public func finishRecording(timeout: Double = 30) {
        if recordingState != .idle { logger.notice("finishing the recording before exit") }
        recorder.shutdown(timeout: timeout)
        audioRecorder?.shutdown(timeout: timeout)
    }
}

/// The configuration in effect, replaced on SIGHUP.
final class ConfigurationBox: @unchecked Sendable {
    private let lock = Lock()
    private var stored: Configuration
    init(_ value: Configuration) { stored = value }
    var value: Configuration {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// Forwards recorder events to the appliance, which is created after the recorder.
private final class EventRelay: @unchecked Sendable {
    private let lock = Lock()
    private weak var storedTarget: Appliance?
    var target: Appliance? {
        get { lock.withLock { storedTarget } }
        set { lock.withLock { storedTarget = newValue } }
    }
    func forward(_ event: RecorderEvent) { target?.recorderEvent(event) }
}

private final class SnapshotBox: @unchecked Sendable {
    private let lock = Lock()
    private var stored: Result<String, ApplianceError>?
    func set(_ value: Result<String, ApplianceError>) { lock.withLock { stored = value } }
    var value: Result<String, ApplianceError>? { lock.withLock { stored } }
}
