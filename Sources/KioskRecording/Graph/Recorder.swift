import Foundation
import KioskCore
import KioskMedia
import Logging

/// What the disk guard says about free space.
public enum StorageVerdict: Sendable, Equatable {
    case ok
    /// Too little space and nothing left to delete: do not start.
    case refuseToStart(String)
    /// Below the hard floor while recording: finish the file now, before the disk fills.
    case stopRecording(String)
}

/// How a recording is made; fixed for the recorder's life.
public struct RecorderSettings: Sendable {
    public var layout: LibraryLayout
    /// Encoder settings for video; `input` is replaced by each frame's real format.
    public var video: VideoTrackSettings?
    public var audio: AudioTrackSettings?
    public var segmentPolicy: SegmentPolicy
    public var syncInterval: Double
    public var jpegQuality: Int
    /// Extra metadata for every file (device id, …).
    public var metadata: [String: String]
    /// The disk guard, asked before a recording starts (on the caller's thread; it may
    /// delete old days before answering) and every 2 s while it runs (on the encoder
    /// thread: it must answer at once from its last measurement — see `StorageGuard` —
    /// because frames queue up while it works).
    public var storageCheck: (@Sendable (_ recording: Bool) -> StorageVerdict)?
    /// The text burned into every encoded picture and still (`[overlay]`); nil for none.
    public var overlay: OverlaySpec?
    /// Areas blacked out of every frame (`[privacy]`).
    public var privacy = PrivacyMask()

    public init(layout: LibraryLayout, video: VideoTrackSettings?, audio: AudioTrackSettings?,
                segmentPolicy: SegmentPolicy = SegmentPolicy(), syncInterval: Double = 2,
                jpegQuality: Int = 90, metadata: [String: String] = [:]) {
        self.layout = layout
        self.video = video
        self.audio = audio
        self.segmentPolicy = segmentPolicy
        self.syncInterval = syncInterval
        self.jpegQuality = jpegQuality
        self.metadata = metadata
        self.storageCheck = nil
    }
}

/// A live view of a recording for progress lines, `status` and the screen.
public struct RecorderStatus: Sendable, Equatable {
    public var state: RecordingState = .idle
    /// Library path the current segment will get (its temp file until finished).
    public var currentFile: String?
    public var segmentIndex = 0
    /// Bytes of all segments of this recording, including the one being written.
    public var bytesWritten: Int64 = 0
    /// Seconds of all segments of this recording.
    public var secondsWritten: Double = 0
    public var videoFramesWritten = 0
    /// Frames the encoder thread could not keep up with (dropped, oldest first).
    public var droppedVideoFrames = 0
    public var droppedAudioChunks = 0
    /// Sound level per channel (RMS and peak hold, dBFS), updated 10 times a second
    /// whether or not a recording runs.
    public var audioLevels: AudioLevels?
    public var lastError: String?
    public var finishedFiles: [String] = []
}

/// What the recorder reports as it happens.
public enum RecorderEvent: Sendable {
    case stateChanged(RecordingState)
    case fileFinished(path: String, seconds: Double, bytes: Int64)
    case snapshotSaved(path: String)
    case failed(RecorderError)
    case sourceEnded(source: String, SourceEnd)
}

/// Where to stop.
public enum StopPoint: Sendable {
    /// Live capture: nothing captured after now is recorded.
    case now
    /// File replay: record everything already queued, then stop.
    case afterQueuedInput
}

/// One recording on its own — what `kioskcam record`, `snapshot` and `broadcast` run,
/// and what most tests drive: a `MediaGraph` built from `GraphPlan.recorder` (the hub,
/// the one encode, one recording output of the configured kind — video, the screen, or
/// sound only when `settings.video` is nil — stills, and any live destinations), with a
/// recorder's verbs and source ends reported as events.
public final class Recorder: CaptureSink, Sendable {
    public let graph: MediaGraph
    public var settings: RecorderSettings { graph.plan.settings }
    public var hub: CaptureHub { graph.hub }
    public var encoder: EncodeBranch { graph.encoder }
    public var output: RecordingOutput { graph.video }
    public var stills: StillBranch { graph.stills }
    private let onEvent: @Sendable (RecorderEvent) -> Void

    /// - Parameters:
    ///   - overflow: `.dropOldest` for live sources, `.block` for files replayed fast.
    ///   - videoKind: The library tree a video recording goes to: `.video`, or `.screen`
    ///     for a screen broadcast kept in the library.
    ///   - streams: Live destinations of the one encode; `startStreams()` connects them.
    ///   - onEvent: Called on the graph's threads; must return quickly.
    public init(settings: RecorderSettings, clock: MonotonicClock, logger: Logger,
                overflow: CaptureQueue.OverflowPolicy = .dropOldest, videoKind: MediaKind = .video,
                streams: [GraphPlan.StreamPlan] = [],
                onEvent: @escaping @Sendable (RecorderEvent) -> Void = { _ in }) {
        self.onEvent = onEvent
        graph = MediaGraph(plan: .recorder(settings, overflow: overflow, recordingKind: videoKind, streams: streams),
                           clock: clock, logger: logger, onEvent: onEvent)
    }

    /// The live destinations, in the order given.
    public var streams: [StreamOutput] { graph.streams }

    /// Connects the live destinations (each retries on its own thread).
    public func startStreams() { graph.startStreams() }

    /// The recording's status, with what the encode branch knows (sound level, drops).
    public var status: RecorderStatus { graph.status(of: output) }

    /// Asks for a recording to start at the next frame.
    /// - Parameter maximumSeconds: End by itself after this much recorded time (exact to the frame).
    /// - Throws: `RecorderError.illegalTransition` ("already recording") unless idle;
    ///   `.library` when the media root is unusable; `.diskFull` when the disk guard refuses.
    public func start(maximumSeconds: Double? = nil) throws(RecorderError) {
        try output.start(maximumSeconds: maximumSeconds)
    }

    /// Asks the recording to stop; it becomes idle once the file is in the library.
    /// - Throws: `RecorderError.illegalTransition` when not recording.
    public func stop(_ point: StopPoint = .now) throws(RecorderError) { try output.stop(point) }

    /// Saves the next video frame as a JPEG in the library (see `StillBranch`).
    public func snapshot(timeout: Double = 5, _ completion: @escaping @Sendable (Result<String, RecorderError>) -> Void) {
        stills.request(timeout: timeout, completion)
    }

    /// Waits until the recorder is idle (or `timeout` seconds pass); returns the final state.
    @discardableResult
    public func waitUntilIdle(timeout: Double) -> RecordingState { output.waitUntilIdle(timeout: timeout) }

    /// Encoder-loop iterations so far: the watchdog pings only while this moves.
    public var heartbeat: UInt64 { encoder.heartbeat }

    /// Finishes any recording, then ends the encoder and output threads. Call once, last,
    /// after capture stopped. Blocking.
    public func shutdown(timeout: Double = 30) { graph.shutdown(timeout: timeout) }

    // MARK: CaptureSink (capture threads)

    public func deliver(_ frame: VideoFrame) { graph.deliver(frame) }
    public func deliver(_ chunk: AudioChunk) { graph.deliver(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) {
        graph.videoSourceEnded(name, end)
        onEvent(.sourceEnded(source: name, end))
    }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        graph.audioSourceEnded(name, end)
        onEvent(.sourceEnded(source: name, end))
    }
}
