/// Everything a user can set, with the defaults that apply when no file is given.
///
/// Loaded from one TOML file (`/etc/kioskcam/kioskcam.toml` by default); see
/// `rootfs/etc/kioskcam/kioskcam.toml` for the commented example with every key.
public struct Configuration: Sendable, Equatable {
    public struct Storage: Sendable, Equatable {
        /// Root of the media library (`video/`, `photo/`, `audio/` live below it).
        public var mediaRoot = "/var/lib/kioskcam/media"
        /// Split a recording after this many seconds.
        public var segmentSeconds: Double = 300
        /// Split a recording before it grows past this many bytes (nil: no limit).
        public var segmentMaxBytes: Int64? = nil
        /// Push written data to the storage device at least this often (power-cut safety).
        public var syncIntervalSeconds: Double = 2
        /// A date folder is deleted when today ≥ its date + this many days.
        public var retentionDays = 30
        /// Event clips are kept this long (nil: as long as `retentionDays`).
        public var eventRetentionDays: Int? = nil
        /// Keep at least this much free (nil: the larger of 1 GiB and one hour of recording).
        public var minFreeBytes: Int64? = nil
        /// Keep at least this share of the disk free, in percent (nil: no percentage floor).
        public var minFreePercent: Double? = nil
    }

    /// Where frames come from.
    public enum CameraSource: Sendable, Equatable, CustomStringConvertible {
        /// The first camera libcamera lists, else the first V4L2 capture device found,
        /// else the built-in test pattern.
        case automatic
        /// The built-in moving test pattern.
        case testPattern
        /// A V4L2 device node such as `/dev/video0`.
        case device(path: String)
        /// Raw frames replayed from a file (tests, benchmark).
        case rawFile(path: String)
        /// A libcamera camera (a Raspberry Pi camera module): its id, or nil for the first.
        case libcamera(id: String?)

        public init?(parsing text: String) {
            switch text {
            case "auto": self = .automatic
            case "test": self = .testPattern
            case "libcamera": self = .libcamera(id: nil)
            default:
                if text.hasPrefix("libcamera:"), text.count > 10 { self = .libcamera(id: String(text.dropFirst(10))); return }
                if text.hasPrefix("/dev/"), text.count > 5 { self = .device(path: text); return }
                guard text.hasPrefix("file:"), text.count > 5 else { return nil }
                self = .rawFile(path: String(text.dropFirst(5)))
            }
        }

        public var description: String {
            switch self {
            case .automatic: "auto"
            case .testPattern: "test"
            case .device(let path): path
            case .rawFile(let path): "file:" + path
            case .libcamera(let id): id.map { "libcamera:" + $0 } ?? "libcamera"
            }
        }
    }

    /// A camera control's setting: the device's automatic mode, or a value.
    public enum ControlSetting: Sendable, Equatable, Codable, CustomStringConvertible {
        case automatic
        case value(Int)

        public var description: String {
            switch self {
            case .automatic: "auto"
            case .value(let v): String(v)
            }
        }
    }

    public struct Camera: Sendable, Equatable {
        public var source: CameraSource = .automatic
        public var size = FrameSize(width: 1280, height: 720)
        public var framesPerSecond = 30
        /// The layout asked for: for a V4L2 camera it wins among equally good offers;
        /// nil ("auto") lets the camera pick the cheapest (YU12/NV12 need no conversion).
        public var pixelFormat: PixelFormat?
        /// What raw files deliver and the test pattern is asked to draw (it draws YUYV for
        /// layouts it does not draw): the chosen layout, else YUYV.
        public var builtInPixelFormat: PixelFormat { pixelFormat ?? .yuyv }
        /// Seconds without a frame before the camera counts as lost.
        public var lostAfterSeconds: Double = 5
        /// The test pattern burns each frame's capture time in as blocks (top left), so a
        /// page can read glass-to-glass latency off the picture (scripts/bench-web).
        public var testClock = false
        /// Controls applied when the camera opens, each only if the device has it.
        public var zoom: Int?
        public var focus: ControlSetting?
        public var exposure: ControlSetting?
        public var whiteBalance: ControlSetting?
        public var brightness: Int?
        public var contrast: Int?
        /// How the camera is mounted (`camera.rotation`, `camera.mirror`): written into
        /// recordings as their display matrix, applied to the pixels of stills and the preview.
        public var orientation = PictureOrientation.upright
    }

    /// Where sound comes from.
    public enum MicrophoneSource: Sendable, Equatable, CustomStringConvertible {
        /// ALSA's `default` capture device when the machine has a sound card, else the tone.
        case automatic
        /// An ALSA capture device by name: `default`, `hw:1,0`, `plughw:1,0`, …
        case alsa(device: String)
        /// The built-in sine tone.
        case tone
        /// The built-in microphone, silent.
        case silence
        /// No audio track.
        case none
        /// S16 PCM replayed from a WAV file (tests, benchmark).
        case wavFile(path: String)

        public init?(parsing text: String) {
            switch text {
            case "auto": self = .automatic
            case "tone": self = .tone
            case "silence": self = .silence
            case "none": self = .none
            default:
                if text.hasPrefix("alsa:"), text.count > 5 { self = .alsa(device: String(text.dropFirst(5))); return }
                guard text.hasPrefix("file:"), text.count > 5 else { return nil }
                self = .wavFile(path: String(text.dropFirst(5)))
            }
        }

        public var description: String {
            switch self {
            case .automatic: "auto"
            case .alsa(let device): "alsa:" + device
            case .tone: "tone"
            case .silence: "silence"
            case .none: "none"
            case .wavFile(let path): "file:" + path
            }
        }
    }

    public struct Microphone: Sendable, Equatable {
        public var source: MicrophoneSource = .automatic
        public var sampleRate = 48_000
        public var channels = 1
        /// Pitch of the built-in tone microphone.
        public var toneFrequency: Double = 440
    }

    public struct Encoder: Sendable, Equatable {
        /// `auto` (the board's hardware encoder where one opens, else libx264), `null`
        /// (stand-in packets, for tests) or a libavcodec encoder name such as `libx264`.
        public var videoCodec = "auto"
        /// Encoder speed preset (libx264 only).
        public var preset = "veryfast"
        /// libx264 tuning. `zerolatency` (the default) encodes each frame as it comes,
        /// with no lookahead and no frame threads: a recording starts and stops at once
        /// and the encoder holds one frame instead of a dozen (see the figures in docs/testing.md).
        /// "none" leaves libx264's own defaults.
        public var tune = "zerolatency"
        /// Video bitrate in bits/s; nil: 4.05 bits per pixel below 640x480, else 10.1.
        public var videoBitrate: Int? = nil
        /// Frames between keyframes; also the fragment length of the MP4.
        public var keyframeInterval = EncodingPolicy.maximumKeyframeInterval
        public var audioBitrate = 128_000
        /// Encoder threads; 0 lets the encoder choose.
        public var threads = 0
    }

    public struct Stream: Sendable, Equatable {
        /// Where the daemon sends its one encode live (empty: nowhere): `rtmp://…`,
        /// `rtsp://…`, `srt://…`, or an HLS playlist path ending in `.m3u8`.
        public var url = ""
        /// Whether the sound goes too.
        public var audio = true
    }

    /// What a `broadcast` button starts (`[broadcast]`).
    public struct Broadcast: Sendable, Equatable {
        /// `kioskcam broadcast --to` values; empty: a broadcast button does nothing.
        public var destinations: [String] = []
        /// `--size`: the picture sent; nil: the largest that fits the memory budget.
        public var size: FrameSize?
    }

    public struct Snapshot: Sendable, Equatable {
        /// JPEG quality, 1 (smallest) to 100 (best).
        public var jpegQuality = 90
    }

    public enum LogLevel: String, Sendable, Equatable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }

    public struct Logging: Sendable, Equatable {
        public var level: LogLevel = .info
    }

    public var storage = Storage()
    public var camera = Camera()
    public var microphone = Microphone()
    public var encoder = Encoder()
    public var snapshot = Snapshot()
    public var stream = Stream()
    public var broadcast = Broadcast()
    public var logging = Logging()
    public var buttons = Buttons()
    public var touch = Touch()
    public var screen = Screen()
    public var lock = Lock()
    public var control = Control()
    public var events = Events()
    public var motion = Motion()
    public var mqtt = MQTT()
    public var upload = Upload()
    public var web = Web()
    public var rtsp = RTSP()
    public var onvif = ONVIF()
    public var overlay = Overlay()
    public var privacy = Privacy()
    public var timelapse = Timelapse()

    public init() {}

    public static let defaultPath = "/etc/kioskcam/kioskcam.toml"

    /// The video bitrate in effect: the configured one, or the bits-per-pixel default.
    public var effectiveVideoBitrate: Int {
        encoder.videoBitrate ?? EncodingPolicy.defaultBitrate(for: camera.size)
    }

    public var segmentPolicy: SegmentPolicy {
        SegmentPolicy(maximumSeconds: storage.segmentSeconds, maximumBytes: storage.segmentMaxBytes)
    }
}
