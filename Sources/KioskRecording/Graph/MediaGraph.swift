import KioskCore
import KioskMedia
import Logging

/// The media graph, built in one place from one `GraphPlan`: the daemon, `kioskcam record`
/// and `kioskcam broadcast` all run this type; only the plan differs. A frame's whole path
/// is here:
///
/// ```
/// camera ─▶ privacy ─▶ zoom ─▶ hub ─┬─▶ encode ─┬─▶ recording (video, or the screen)
///          (masks)   (crop+   (by   │  (one      ├─▶ sound-only recording (.m4a)
/// mic ─────────────────scale)─▶ ref)│  H.264 +   ├─▶ pre-event ring ─▶ event clips
///                                   │  AAC)      ├─▶ streams (RTMP, SRT, RTSP push, HLS, files)
///                                   │            ├─▶ live view (web app, fMP4)
///                                   │            └─▶ RTP fan-out (RTSP server)
///                                   ├─▶ stills (JPEG, own queue)
///                                   ├─▶ preview (newest frame, ≤ preview_fps)
///                                   ├─▶ luma (~320 px grey, motion)
///                                   ├─▶ sub-stream (a second, smaller encode for RTSP)
///                                   └─▶ timelapse (a frame every interval)
/// ```
///
/// Every stage the plan leaves out is nil. The graph owns every thread it starts:
/// `shutdown` finishes the recordings and ends them all.
public final class MediaGraph: CaptureSink, Sendable {
    public let plan: GraphPlan
    public let hub = CaptureHub()
    /// The privacy masks in front of digital zoom (`[privacy]`), nil without masks.
    public let privacy: PrivacyStage?
    /// Digital zoom in front of the hub, for cameras without a zoom control (the daemon's).
    public let digitalZoom: DigitalZoomStage?
    public let encoder: EncodeBranch
    /// The recording: video and sound into `.mp4` (or the screen, or sound only without a camera).
    public let video: RecordingOutput
    /// Sound only into `.m4a` (nil without a microphone or when the plan has none).
    public let audio: RecordingOutput?
    /// Event clips' own recording output and the pre-event ring they begin from.
    public let clipOutput: RecordingOutput?
    public let preEventRing: PreEventRing?
    /// The live destinations, in the plan's order; `startStreams()` connects them.
    public let streams: [StreamOutput]
    /// The web app's live view: the one encode as fMP4 fragments to each viewer.
    public let live: LiveStream?
    /// The RTSP server's fan-out: the one encode as RTP to each client.
    public let rtp: RTPStream?
    public let stills: StillBranch
    public let preview: PreviewBranch?
    public let luma: LumaBranch?
    /// The RTSP sub-stream: a second, smaller encode of the same capture.
    public let substream: SubstreamBranch?
    public let timelapse: TimelapseBranch?
    /// Where frames enter: the first stage the plan has.
    private let videoEntry: CaptureSink

    /// - Parameters:
    ///   - onEvent: Recording events of the recordings, saved stills, and the clips'
    ///     finished files and failures.
    ///   - onRTPClientEnded: The RTP fan-out ended a client (the encoder's set-up changed).
    public init(plan: GraphPlan, clock: MonotonicClock, logger: Logger,
                onEvent: @escaping @Sendable (RecorderEvent) -> Void,
                onRTPClientEnded: @escaping @Sendable (RTPStream.Client) -> Void = { _ in }) {
        self.plan = plan
        let settings = plan.settings
        let encoder = EncodeBranch(video: settings.video, audio: settings.audio, overflow: plan.overflow, clock: clock, logger: logger,
                                   overlay: settings.overlay)
        self.encoder = encoder
        // The encoder holds its outputs, so an output refers to the encoder weakly (a
        // cycle here leaked the whole graph when it was let go; AddressSanitizer found it).
        let requestKeyframe: @Sendable (MonotonicInstant) -> Void = { [weak encoder] in encoder?.requestKeyframe(at: $0) }

        // Stages in front of the hub: masks first, so that zoom never shows what they hide.
        let hub = hub
        let zoom = plan.digitalZoomMaximum.map { DigitalZoomStage(downstream: hub, maximum: $0, clock: clock) }
        digitalZoom = zoom
        let afterMasks: CaptureSink = zoom ?? hub
        privacy = settings.privacy.isEmpty ? nil
            : PrivacyStage(downstream: afterMasks, mask: settings.privacy, orientation: settings.video?.orientation ?? .upright)
        videoEntry = privacy ?? afterMasks

        // The encode's outputs, in the order they are handed each packet.
        video = RecordingOutput(kind: settings.video == nil ? .audio : plan.recordingKind, settings: settings, clock: clock,
                                logger: logger, blocksWhenFull: plan.overflow == .block, requestKeyframe: requestKeyframe,
                                onEvent: onEvent)
        encoder.add(video)
        if plan.soundOnlyRecording, settings.audio != nil, settings.video != nil {
            var soundOnly = settings
            soundOnly.video = nil
            let audio = RecordingOutput(kind: .audio, settings: soundOnly, clock: clock, logger: logger,
                                        requestKeyframe: { _ in }, onEvent: onEvent)
            encoder.add(audio)
            self.audio = audio
        } else {
            audio = nil
        }
        streams = plan.streams.map {
            StreamOutput(url: $0.url, queueBytes: $0.queueBytes, audio: $0.audio && settings.audio != nil, clock: clock, logger: logger)
        }
        for stream in streams { encoder.add(stream) }
        let hasSound = settings.audio != nil
        // Two seconds of the stream per viewer or client before its GOP is dropped.
        let perClient = 2 * plan.streamBytesPerSecond
        if let viewers = plan.liveViewers {
            let live = LiveStream(maximumViewers: viewers, viewerByteLimit: perClient, expectsAudio: hasSound, clock: clock,
                                  logger: logger, requestKeyframe: requestKeyframe)
            encoder.add(live)
            self.live = live
        } else {
            live = nil
        }
        if plan.rtsp != nil {
            let rtp = RTPStream(clientByteLimit: perClient, expectsAudio: hasSound,
                                framesPerSecond: settings.video?.input.framesPerSecond ?? 0, clock: clock, logger: logger,
                                requestKeyframe: requestKeyframe, onEnded: onRTPClientEnded)
            encoder.add(rtp)
            self.rtp = rtp
        } else {
            rtp = nil
        }
        (clipOutput, preEventRing) = Self.eventClips(plan, encoder: encoder, clock: clock, logger: logger, onEvent: onEvent)

        // The hub's branches, each on its own queue or thread.
        hub.add(encoder)
        stills = StillBranch(files: LibraryFiles(layout: settings.layout), quality: settings.jpegQuality,
                             orientation: settings.video?.orientation ?? .upright, deviceID: settings.metadata["device_id"],
                             software: settings.metadata["encoder"], overlay: settings.overlay, clock: clock,
                             logger: logger, onSaved: { onEvent(.snapshotSaved(path: $0)) })
        hub.add(stills)
        preview = plan.previewFramesPerSecond.map { PreviewBranch(framesPerSecond: $0) }
        if let preview { hub.add(preview) }
        luma = plan.lumaFramesPerSecond.map { LumaBranch(framesPerSecond: $0) }
        if let luma { hub.add(luma) }
        if let sub = plan.rtsp?.substream, let camera = settings.video {
            let substream = SubstreamBranch(settings: camera, size: sub.size, framesPerSecond: sub.framesPerSecond, bitrate: sub.bitrate,
                                            overlay: settings.overlay, clock: clock, logger: logger)
            hub.add(substream)
            self.substream = substream
        } else {
            substream = nil
        }
        if let lapse = plan.timelapse, let camera = settings.video {
            let timelapse = TimelapseBranch(settings: camera, intervalSeconds: lapse.intervalSeconds,
                                            framesPerSecond: lapse.framesPerSecond, directory: lapse.directory,
                                            overlay: settings.overlay, clock: clock, logger: logger)
            hub.add(timelapse)
            self.timelapse = timelapse
        } else {
            timelapse = nil
        }
    }

    /// The daemon's graph of old, for tests: recordings, stills, preview and luma.
    public convenience init(settings: RecorderSettings, previewFramesPerSecond: Int, lumaFramesPerSecond: Int = 8,
                            clock: MonotonicClock, logger: Logger,
                            onEvent: @escaping @Sendable (RecorderEvent) -> Void) {
        var plan = GraphPlan(settings: settings)
        plan.soundOnlyRecording = true
        plan.previewFramesPerSecond = previewFramesPerSecond
        plan.lumaFramesPerSecond = lumaFramesPerSecond
        self.init(plan: plan, clock: clock, logger: logger, onEvent: onEvent)
    }

    /// A pre-event ring and a recording output of its own on the one encode, for
    /// `events.mode` events or both; a clip is one file, however long.
    private static func eventClips(_ plan: GraphPlan, encoder: EncodeBranch, clock: MonotonicClock, logger: Logger,
                                   onEvent: @escaping @Sendable (RecorderEvent) -> Void) -> (RecordingOutput?, PreEventRing?) {
        guard let clips = plan.eventClips, let video = plan.settings.video else { return (nil, nil) }
        let bitrate = video.bitrate + (plan.settings.audio?.bitrate ?? 0)
        let keyframeSeconds = Double(max(1, video.keyframeInterval)) / Double(max(1, video.input.framesPerSecond))
        // The pre-event time, one GOP (a clip starts at a keyframe) and a second of slack.
        let ring = PreEventRing(seconds: clips.preSeconds + keyframeSeconds + 1,
                                byteLimit: PreEventRing.byteBudget(seconds: clips.preSeconds + 1, bitrate: bitrate,
                                                                   keyframeSeconds: keyframeSeconds))
        var clipSettings = plan.settings
        clipSettings.segmentPolicy = SegmentPolicy(maximumSeconds: clips.maxSeconds + 60)
        let output = RecordingOutput(kind: .video, settings: clipSettings, clock: clock, logger: logger,
                                     requestKeyframe: { [weak encoder] in encoder?.requestKeyframe(at: $0) },
                                     onEvent: { event in
                                         // Its state is the event recorder's business, not the recording's.
                                         switch event {
                                         case .fileFinished, .failed: onEvent(event)
                                         default: break
                                         }
                                     })
        ring.setEnabled(true)
        encoder.add(ring)
        encoder.add(output)
        return (output, ring)
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
        if let clips = clipOutput { parts.append(("event clips", { clips.heartbeat })) }
        if let encoder = timelapse?.encoder { parts.append(("timelapse encoder", { encoder.heartbeat })) }
        return parts
    }

    /// Connects the live destinations (each retries on its own thread).
    public func startStreams() {
        for stream in streams { stream.start() }
    }

    /// Finishes any recording, then ends every thread of the graph. Call once, after
    /// capture stopped. Blocking.
    public func shutdown(timeout: Double = 30) {
        for stream in streams { stream.stop() }
        for output in [video] + (audio.map { [$0] } ?? []) where (try? output.stop()) != nil {
            output.waitUntilIdle(timeout: timeout)
        }
        encoder.shutdown(timeout: timeout)
        video.shutdown(timeout: timeout)
        audio?.shutdown(timeout: timeout)
        luma?.stop()
        stills.failAll("kioskcam is shutting down")
        stills.drain()
        substream?.shutdown(timeout: timeout)
        timelapse?.shutdown(timeout: timeout)
        clipOutput?.shutdown(timeout: timeout)
    }

    // MARK: CaptureSink (capture threads)

    public func deliver(_ frame: VideoFrame) { videoEntry.deliver(frame) }
    public func deliver(_ chunk: AudioChunk) { hub.deliver(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { videoEntry.videoSourceEnded(name, end) }
    public func audioSourceEnded(_ name: String, _ end: SourceEnd) { hub.audioSourceEnded(name, end) }
}
