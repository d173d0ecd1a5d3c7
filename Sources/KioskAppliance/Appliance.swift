import Foundation
import KioskCore
import KioskMicrophones
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
    /// An event clip's new/update/end message.
    case event(EventMessage)
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
    /// What is recording (the `recorder` status is that recording's).
    public var activity: RecordingActivity
    /// Files salvage could not repair, kept in `<root>/.quarantine` for a person.
    public var quarantinedFiles: Int
    /// The open camera's frame counters (V4L2 or libcamera); nil for the test pattern,
    /// a raw file, or no camera open.
    public var cameraFrames: CameraFrameCounters? = nil
}

/// The running appliance's capture and recording core: the sources run all the time
/// (the screen shows their picture), the recorders record when told to — one recording
/// at a time, decided by `RecordingOwner` — and camera losses end the file and resume
/// recording when the camera returns.
///
/// Commands may come from any thread (buttons, touch, the control socket); they block
/// (a start purges the library first when space is low), so never call them from the
/// Swift concurrency pool or the UI loop.
public final class Appliance: Sendable {
    public let logger: Logger
    public let camera: VideoSource?
    public let microphone: AudioSource?
    /// Video and sound into `.mp4`, and sound only into `.m4a`: started and stopped only
    /// through `record(_:)`.
    let owner: RecordingOwner
    /// Free space and retention, on their own thread (never the encoder's).
    public let storage: StorageGuard
    /// The whole media graph, built from `GraphPlan.appliance`: capture → privacy → zoom
    /// → hub → one encode → recordings, clips, streams, live view, RTP; stills, preview,
    /// luma, sub-stream, timelapse.
    public let graph: MediaGraph
    /// The overlay's changing fields (`{event}`), set while a clip records.
    public let overlayFields: OverlayFields
    /// The live stream of the one encode (`[stream] url`), nil when none is configured.
    public var stream: StreamOutput? { graph.streams.first }
    /// The RTSP server, once the daemon made it: told when the stream ends a client.
    let rtspEnded: RTSPEndedRelay
    /// Event clips (`events.mode` events or both): nil in continuous mode or without a camera.
    public let events: EventRecorder?
    /// The encoded seconds a clip can begin in: bytes held now and the budget.
    public var preEventBuffer: (bytes: Int, seconds: Double, limit: Int)? {
        guard let ring = graph.preEventRing else { return nil }
        let held = ring.held
        return (held.bytes, held.seconds, ring.byteLimit)
    }
    /// Run-time camera settings (socket `camera.set`), kept across reconnects.
    let cameraAdjuster: CameraAdjuster
    public let usingBuiltInSources: Bool
    let startedAt = Date()
    /// The configuration in effect, replaced on SIGHUP.
    let currentConfiguration: Locked<Configuration>
    struct State {
        var listeners: [@Sendable (ApplianceEvent) -> Void] = []
        var resumeAfterCameraLoss = false
        var userWantsRecording = false
        var snapshotsTaken = 0
        var lastSnapshot: String?
        var lastCameraState = ""
        var sourcesRunning = false
    }
    let state = Locked(State())

    /// Opens the configured sources (falling back to the built-in ones, with a log line)
    /// and salvages whatever a crash left unfinished.
    /// - Throws: `ApplianceError` when a configured source cannot be opened at all or the
    ///   media root is unusable.
    public convenience init(configuration: Configuration, version: String, deviceID: String?, logger: Logger) throws {
        let reopened = CameraReopenHook()
        let camera = try SourceFactory.camera(configuration, realtime: true, logger: logger, reopened: reopened)
        let microphone: AudioSource?
        do throws(MicrophoneError) {
            microphone = try MicrophoneChoice.open(configuration, realtime: true, logger: logger)
        } catch {
            throw ApplianceError(error.description)
        }
        try self.init(configuration: configuration, camera: camera, microphone: microphone, version: version,
                      deviceID: deviceID, logger: logger)
        let adjuster = cameraAdjuster
        reopened.set { camera in adjuster.reapply(to: camera) }
    }

    /// The appliance around sources that are already open (tests give scripted ones).
    /// - Throws: `ApplianceError` when the media root is unusable.
    public init(configuration: Configuration, camera: VideoSource, microphone: AudioSource?, version: String,
                deviceID: String?, logger: Logger) throws {
        self.logger = logger
        currentConfiguration = Locked(configuration)
        self.camera = camera
        self.microphone = microphone
        usingBuiltInSources = camera is TestPatternCamera || microphone is ToneMicrophone
        if usingBuiltInSources {
            logger.notice("no camera or no microphone found: running on the built-in \(camera is TestPatternCamera ? "test-pattern camera" : camera.name) and \(microphone.map { $0 is ToneMicrophone ? "tone microphone" : $0.name } ?? "no microphone")")
        }
        var settings = RecorderSettings(configuration, video: camera.format, audio: microphone?.format, version: version)
        if let deviceID { settings.metadata["device_id"] = deviceID }
        overlayFields = OverlayFields.configured(configuration, deviceID: deviceID)
        settings.overlay = OverlaySpec.configured(configuration, fields: overlayFields)
        switch PrivacyMask.configured(configuration) {
        case .success(let mask): settings.privacy = mask
        case .failure(let error):
            throw ApplianceError("privacy.mask_png: \(error); fix the file, or set privacy.mask_png = \"\" to go without it")
        }
        let current = currentConfiguration
        storage = StorageGuard(configuration: { current.withLock { $0 } }, logger: logger)
        settings.storageCheck = storage.check
        let relay = EventRelay()
        let rtspEnded = RTSPEndedRelay()
        self.rtspEnded = rtspEnded
        graph = MediaGraph(plan: .appliance(configuration, settings: settings), clock: SystemClock(), logger: logger,
                           onEvent: { relay.forward($0) }, onRTPClientEnded: { rtspEnded.ended($0) })
        owner = RecordingOwner(video: graph.video, audio: graph.audio)
        events = Self.makeEvents(configuration, graph: graph, relay: relay, overlayFields: overlayFields, logger: logger)
        cameraAdjuster = CameraAdjuster(camera: camera, digitalZoom: graph.digitalZoom, configured: configuration.camera,
                                        logger: logger)
        relay.target = self
        try salvageLeftovers(configuration)
    }

    /// The event recorder, when `events.mode` asks for clips: on the graph's clip output
    /// and pre-event ring, fed by its luma branch.
    private static func makeEvents(_ configuration: Configuration, graph: MediaGraph, relay: EventRelay,
                                   overlayFields: OverlayFields, logger: Logger) -> EventRecorder? {
        guard let output = graph.clipOutput, let ring = graph.preEventRing else { return nil }
        let timing = configuration.events.timing
        let stills = graph.stills
        let levels: @Sendable () -> Double? = { [weak graph] in graph?.status(of: output).audioLevels?.rmsDBFS.max() }
        let recorder = EventRecorder(configuration: configuration, clips: GraphClipOutput(output: output, ring: ring),
                                     clock: SystemClock(), logger: logger,
                                     snapshot: { label, done in stills.request(timeout: 5, label: label) { done(try? $0.get()) } },
                                     soundLevel: levels,
                                     publish: { message in
                                         // `{event}` in the overlay: the triggers while the clip records.
                                         overlayFields.setEvent(message.type == .end ? "" : message.triggers.map(\.rawValue).joined(separator: "+"))
                                         relay.publish(.event(message))
                                     })
        graph.luma?.subscribe { [weak recorder] frame in recorder?.observe(frame) }
        logger.notice("event clips: \(configuration.events.mode.rawValue) mode, \(String(format: "%g", timing.preSeconds)) s before and \(String(format: "%g", timing.postSeconds)) s after each trigger; triggers: \(([configuration.events.motion ? "motion" : nil, configuration.events.sound ? "sound" : nil, "buttons", "kioskcam event start"] as [String?]).compactMap { $0 }.joined(separator: ", "))")
        return recorder
    }

    public var configuration: Configuration { currentConfiguration.withLock { $0 } }

    /// Adopts settings that can change without a restart (retention, disk guard); the
    /// caller reports the rest as needing a restart.
    public func adopt(_ configuration: Configuration) { currentConfiguration.withLock { $0 = configuration } }

    /// Subscribes to events; called on the thread that produced the event.
    public func onEvent(_ listener: @escaping @Sendable (ApplianceEvent) -> Void) {
        state.withLock { $0.listeners.append(listener) }
    }

    func publish(_ event: ApplianceEvent) {
        let current = state.withLock { $0.listeners }
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
            state.withLock { $0.snapshotsTaken += 1; $0.lastSnapshot = path }
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
        let quarantined = files.quarantinedFileCount()
        if quarantined > 0 {
            logger.warning("\(quarantined) damaged recording(s) that salvage could not repair are kept in \(files.layout.quarantineDirectory): look at them, then delete them")
        }
    }

    // MARK: Sources

    /// Starts the camera and microphone. A microphone that fails is logged and left out;
    /// the camera's supervisor keeps retrying a camera that is gone.
    public func startSources() throws {
        guard state.withLock({ !$0.sourcesRunning }) else { return }
        if let camera {
            do { try camera.start(into: graph) } catch { throw ApplianceError("camera \(camera.name): \(error)") }
        }
        if let microphone {
            do {
                try microphone.start(into: graph)
            } catch {
                logger.error("microphone \(microphone.name) did not start: \(error); recording continues without sound")
            }
        }
        state.withLock { $0.sourcesRunning = true }
        graph.startStreams()
        events?.start()
    }

    /// Stops capture (first, on shutdown, so the recorder sees no more input).
    public func stopSources() {
        guard state.withLock({ $0.sourcesRunning }) else { return }
        camera?.stop()
        microphone?.stop()
        state.withLock { $0.sourcesRunning = false }
    }
}

/// Forwards recorder events to the appliance, which is created after the recorder.
private final class EventRelay: Sendable {
    private struct Target { weak var appliance: Appliance? }
    private let stored = Locked(Target())
    var target: Appliance? {
        get { stored.withLock { $0.appliance } }
        set { stored.withLock { $0.appliance = newValue } }
    }
    func forward(_ event: RecorderEvent) { target?.recorderEvent(event) }
    func publish(_ event: ApplianceEvent) { target?.publish(event) }
}

/// Hands "the stream ended client N" to the RTSP server made after the appliance.
final class RTSPEndedRelay: Sendable {
    private let target = Locked<(@Sendable (RTPStream.Client) -> Void)?>(nil)

    func set(_ handler: @escaping @Sendable (RTPStream.Client) -> Void) { target.withLock { $0 = handler } }

    func ended(_ client: RTPStream.Client) { target.withLock { $0 }?(client) }
}
