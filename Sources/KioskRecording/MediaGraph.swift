import KioskCore
import Logging

/// The daemon's media graph: one capture hub; one encode (`EncodeBranch`) feeding its
/// outputs — a video recording and a sound-only recording, one at a time (the owner of
/// recordings decides), and whatever else wants packets (the pre-event ring, a stream);
/// stills; the screen's preview; and the low-resolution luma branch for motion.
///
/// ```
/// camera ─┐            ┌─▶ encode branch ─▶ video recording, sound-only recording, ring, stream
/// mic ────┴─▶ hub ─────┼─▶ stills (JPEG on its own queue)
///           (by ref)   ├─▶ preview (newest frame, ≤ preview_fps)
///                      └─▶ luma (~320 px grey, 5–10 fps, its own thread)
/// ```
public final class MediaGraph: CaptureSink, Sendable {
    public let hub = CaptureHub()
    public let encoder: EncodeBranch
    /// Video and sound into `.mp4`.
    public let video: RecordingOutput
    /// Sound only into `.m4a` (nil without a microphone).
    public let audio: RecordingOutput?
    public let stills: StillBranch
    public let preview: PreviewBranch
    public let luma: LumaBranch

    /// - Parameters:
    ///   - settings: How recordings are made (`video` nil: no camera).
    ///   - onEvent: Recording events of both outputs, and saved stills.
    public init(settings: RecorderSettings, previewFramesPerSecond: Int, lumaFramesPerSecond: Int = 8,
                clock: MonotonicClock, logger: Logger,
                onEvent: @escaping @Sendable (RecorderEvent) -> Void) {
        let encoder = EncodeBranch(video: settings.video, audio: settings.audio, overflow: .dropOldest, clock: clock, logger: logger,
                                   overlay: settings.overlay)
        self.encoder = encoder
        // The encoder holds its outputs, so an output refers to the encoder weakly (a
        // cycle here leaked the whole graph when it was let go; AddressSanitizer found it).
        video = RecordingOutput(kind: .video, settings: settings, clock: clock, logger: logger,
                                requestKeyframe: { [weak encoder] in encoder?.requestKeyframe(at: $0) }, onEvent: onEvent)
        if settings.audio != nil {
            var soundOnly = settings
            soundOnly.video = nil
            audio = RecordingOutput(kind: .audio, settings: soundOnly, clock: clock, logger: logger,
                                    requestKeyframe: { _ in }, onEvent: onEvent)
        } else {
            audio = nil
        }
        stills = StillBranch(files: LibraryFiles(layout: settings.layout), quality: settings.jpegQuality,
                             orientation: settings.video?.orientation ?? .upright, deviceID: settings.metadata["device_id"],
                             software: settings.metadata["encoder"], overlay: settings.overlay, clock: clock,
                             logger: logger, onSaved: { onEvent(.snapshotSaved(path: $0)) })
        preview = PreviewBranch(framesPerSecond: previewFramesPerSecond)
        luma = LumaBranch(framesPerSecond: lumaFramesPerSecond)
        encoder.add(video)
        if let audio { encoder.add(audio) }
        hub.add(encoder)
        hub.add(stills)
        hub.add(preview)
        hub.add(luma)
    }

    /// The status of one output, with what the encode branch knows (sound level, drops).
    public func status(of output: RecordingOutput) -> RecorderStatus {
        var status = output.status
        let dropped = encoder.dropped
        status.droppedVideoFrames += dropped.droppedVideoFrames
        status.droppedAudioChunks = dropped.droppedAudioChunks
        status.audioLevels = encoder.audioLevels
        return status
    }

    /// The threads the watchdog watches.
    public var heartbeats: [(name: String, beats: @Sendable () -> UInt64)] {
        let encoder = encoder, video = video
        var parts: [(String, @Sendable () -> UInt64)] = [("encoder", { encoder.heartbeat }), ("video file", { video.heartbeat })]
        if let audio { parts.append(("sound-only file", { audio.heartbeat })) }
        return parts
    }

    /// Finishes any recording, then ends every thread of the graph. Call once, after
    /// capture stopped. Blocking.
    public func shutdown(timeout: Double = 30) {
        for output in [video] + (audio.map { [$0] } ?? []) where (try? output.stop()) != nil {
            output.waitUntilIdle(timeout: timeout)
        }
        encoder.shutdown(timeout: timeout)
        video.shutdown(timeout: timeout)
        audio?.shutdown(timeout: timeout)
        luma.stop()
        stills.failAll("kioskcam is shutting down")
        stills.drain()
    }

    // MARK: CaptureSink (capture threads)

    public func deliver(_ frame: VideoFrame) { hub.deliver(frame) }
    public func deliver(_ chunk: AudioChunk) { hub.deliver(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { hub.videoSourceEnded(name, end) }
    public func audioSourceEnded(_ name: String, _ end: SourceEnd) { hub.audioSourceEnded(name, end) }
}
