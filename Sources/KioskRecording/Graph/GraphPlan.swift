import KioskCore
import KioskMedia

/// What the media graph is made of, as a value: which stages and outputs exist and how
/// each is set. `MediaGraph` builds exactly this; the daemon (`GraphPlan.appliance`),
/// `kioskcam record` and `kioskcam broadcast` (`GraphPlan.recorder`) each make one.
public struct GraphPlan: Sendable {
    /// How recordings are made (`video` nil: no camera), with the overlay and privacy mask.
    public var settings: RecorderSettings
    /// The encode queue when it is full: live sources drop the oldest frame; a file
    /// replayed fast blocks, so that nothing is lost.
    public var overflow: CaptureQueue.OverflowPolicy = .dropOldest
    /// What the main recording is: camera video, or the screen (`kioskcam broadcast`).
    public var recordingKind: MediaKind = .video
    /// A second recording output for sound only (`.m4a`), when there is a microphone.
    public var soundOnlyRecording = false
    /// Digital zoom in front of the hub, up to this factor (`camera set zoom`); nil: no
    /// zoom stage, and frames go straight to the hub.
    public var digitalZoomMaximum: Double?
    /// The screen's preview, at most this many frames a second (nil: no screen).
    public var previewFramesPerSecond: Int?
    /// The luma branch for motion, at this rate (nil: none).
    public var lumaFramesPerSecond: Int?
    /// Live destinations of the one encode (`[stream] url`, `broadcast --to`).
    public var streams: [StreamPlan] = []
    /// The web app's live view: this many viewers at once (nil: none).
    public var liveViewers: Int?
    /// The RTSP server's fan-out and its sub-stream (nil: RTSP off).
    public var rtsp: RTSPPlan?
    /// A frame every interval into the day's movie (nil: no timelapse).
    public var timelapse: TimelapsePlan?
    /// Event clips: a pre-event ring and a clip output of their own (nil: continuous only).
    public var eventClips: EventClipPlan?

    public init(settings: RecorderSettings) { self.settings = settings }

    public struct StreamPlan: Sendable, Equatable {
        public var url: String
        /// The destination's queue, dropping whole GOPs past it.
        public var queueBytes: Int
        public var audio: Bool
        public init(url: String, queueBytes: Int, audio: Bool) {
            self.url = url
            self.queueBytes = queueBytes
            self.audio = audio
        }
    }

    public struct RTSPPlan: Sendable, Equatable {
        /// A second, smaller encode of the same capture (nil: none).
        public var substream: SubstreamPlan?
        public init(substream: SubstreamPlan? = nil) { self.substream = substream }
    }

    public struct SubstreamPlan: Sendable, Equatable {
        public var size: FrameSize
        public var framesPerSecond: Int
        /// Bits a second; nil: the default for the size.
        public var bitrate: Int?
        public init(size: FrameSize, framesPerSecond: Int, bitrate: Int?) {
            self.size = size
            self.framesPerSecond = framesPerSecond
            self.bitrate = bitrate
        }
    }

    public struct TimelapsePlan: Sendable, Equatable {
        public var intervalSeconds: Int
        public var framesPerSecond: Int
        public var directory: String
        public init(intervalSeconds: Int, framesPerSecond: Int, directory: String) {
            self.intervalSeconds = intervalSeconds
            self.framesPerSecond = framesPerSecond
            self.directory = directory
        }
    }

    public struct EventClipPlan: Sendable, Equatable {
        /// How far back a clip begins.
        public var preSeconds: Double
        /// The longest clip (one file, however long).
        public var maxSeconds: Double
        public init(preSeconds: Double, maxSeconds: Double) {
            self.preSeconds = preSeconds
            self.maxSeconds = maxSeconds
        }
    }

    /// Bytes a second of the one encode's stream (video and sound), for queue sizes.
    var streamBytesPerSecond: Int { ((settings.video?.bitrate ?? 1_000_000) + (settings.audio?.bitrate ?? 0)) / 8 }
}

extension GraphPlan {
    /// `kioskcam record` and `kioskcam broadcast`: one recording, stills, and the given
    /// live destinations.
    public static func recorder(_ settings: RecorderSettings, overflow: CaptureQueue.OverflowPolicy = .dropOldest,
                                recordingKind: MediaKind = .video, streams: [StreamPlan] = []) -> GraphPlan {
        var plan = GraphPlan(settings: settings)
        plan.overflow = overflow
        plan.recordingKind = recordingKind
        plan.streams = streams
        return plan
    }

    /// The daemon's graph, as `configuration` asks for it, for sources with `settings`.
    public static func appliance(_ configuration: Configuration, settings: RecorderSettings) -> GraphPlan {
        var plan = GraphPlan(settings: settings)
        plan.soundOnlyRecording = true
        plan.digitalZoomMaximum = 4
        plan.previewFramesPerSecond = configuration.screen.previewFramesPerSecond
        plan.lumaFramesPerSecond = configuration.motion.framesPerSecond
        if let stream = StreamPlan.configured(configuration, withSound: settings.audio != nil) { plan.streams = [stream] }
        plan.liveViewers = configuration.web.maxViewers
        if configuration.rtsp.enabled {
            let cameraRate = max(1, settings.video?.input.framesPerSecond ?? 1)
            let wanted = configuration.rtsp.substreamFramesPerSecond
            plan.rtsp = RTSPPlan(substream: configuration.rtsp.substreamSize.map {
                SubstreamPlan(size: $0, framesPerSecond: wanted == 0 ? cameraRate : min(cameraRate, wanted),
                              bitrate: configuration.rtsp.substreamBitrate)
            })
        }
        if configuration.timelapse.isEnabled {
            plan.timelapse = TimelapsePlan(intervalSeconds: configuration.timelapse.intervalSeconds,
                                           framesPerSecond: configuration.timelapse.framesPerSecond,
                                           directory: LibraryLayout(root: configuration.storage.mediaRoot).timelapseDirectory)
        }
        if configuration.events.mode != .continuous {
            plan.eventClips = EventClipPlan(preSeconds: configuration.events.timing.preSeconds,
                                            maxSeconds: configuration.events.timing.maxSeconds)
        }
        return plan
    }
}

extension GraphPlan.StreamPlan {
    /// `[stream] url` (nil when empty), its queue sized so that about two seconds may
    /// wait for the network before whole GOPs are dropped.
    /// - Parameter replay: A file replayed as fast as it reads: not live, so the queue
    ///   holds 30 s rather than 2 s while the destination opens (a replay runs many times
    ///   faster than real time, and must not lose its first GOPs to a slow open).
    public static func configured(_ configuration: Configuration, withSound: Bool, replay: Bool = false) -> Self? {
        guard !configuration.stream.url.isEmpty else { return nil }
        let bitrate = configuration.effectiveVideoBitrate + configuration.encoder.audioBitrate
        return Self(url: configuration.stream.url, queueBytes: max(bitrate / 8 * (replay ? 30 : 2), 256 * 1024),
                    audio: configuration.stream.audio && withSound)
    }
}
