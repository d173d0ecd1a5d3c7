import Foundation

/// Where `kioskcam broadcast --to` sends the picture and sound.
public enum BroadcastDestination: Sendable, Equatable, CustomStringConvertible {
    /// A file in the library: `screen/YYYYMMDD/HHMMSS.mp4` (or `video/…` for the camera).
    case library
    /// A live URL (`rtmp://`, `rtmps://`, `rtsp://`, `srt://`) or an HLS playlist path.
    case live(String)

    /// Parses one `--to` value.
    /// - Parameter text: `library`, a URL, a path ending in `.m3u8`, or a folder (an HLS
    ///   playlist `index.m3u8` goes into it).
    /// - Throws: `BroadcastPlanError` naming the value and what is accepted.
    public init(parsing text: String) throws(BroadcastPlanError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased() == "library" {
            self = .library
            return
        }
        let lower = trimmed.lowercased()
        let schemes = ["rtmp://", "rtmps://", "rtsp://", "rtsps://", "srt://"]
        if let scheme = schemes.first(where: { lower.hasPrefix($0) }) {
            guard trimmed.utf8.count > scheme.utf8.count + 1 else {
                throw BroadcastPlanError("--to \(text): the URL has no host; use e.g. \(scheme)192.168.1.10/live/kiosk")
            }
            self = .live(trimmed)
            return
        }
        if lower.contains("://") {
            throw BroadcastPlanError("--to \(text): unsupported scheme; use library, rtmp://, rtsp://, srt:// or an HLS folder")
        }
        guard trimmed.hasPrefix("/") else {
            throw BroadcastPlanError("--to \(text): use library, an rtmp://, rtsp:// or srt:// URL, or an absolute folder for HLS (e.g. /var/www/live)")
        }
        if lower.hasSuffix(".m3u8") {
            self = .live(trimmed)
        } else {
            var folder = trimmed
            while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
            self = .live(folder + "/index.m3u8")
        }
    }

    public var isNetwork: Bool {
        guard case .live(let url) = self else { return false }
        return !url.hasPrefix("/")
    }

    public var description: String {
        switch self {
        case .library: "library"
        case .live(let url): url
        }
    }
}

/// A bad broadcast request: the message names the value and the fix.
public struct BroadcastPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What a broadcast process chooses so that it stays inside its memory limit
/// (`MemoryMax=50M` in `kioskcam-broadcast.service`; the kernel kills it the moment it
/// goes over, as the seed's broadcast extension was killed). Pure arithmetic.
///
/// The estimate is of anonymous memory — what the cgroup cannot reclaim; the shared
/// libraries' clean file pages (VmHWM counts ~50 MiB of them) are page cache it can drop.
/// It is: the process itself (Swift runtime, FFmpeg libraries, threads) +
/// the frames in flight (captured frames waiting for the encoder) + libx264's working
/// set (about `encoderFramesHeld` YUV 4:2:0 frames with no lookahead and one thread) +
/// what may wait for each network destination (whole GOPs beyond it are dropped).
public struct BroadcastPlan: Sendable, Equatable {
    public var size: FrameSize
    public var framesPerSecond: Int
    public var videoBitrate: Int
    public var audioBitrate: Int
    /// libx264 threads: 1 (every extra thread holds frames of its own).
    public var encoderThreads: Int
    /// A keyframe every this many frames (2 s): a dropped GOP loses little, a
    /// reconnect starts soon.
    public var keyframeInterval: Int
    /// Captured frames that may be in flight at once (the capture pool).
    public var framesInFlight: Int
    /// Bytes that may wait for each network destination before whole GOPs go.
    public var queueBytesPerDestination: Int
    /// The estimated peak resident memory of the whole process.
    public var estimatedBytes: Int

    public static let mebibyte = 1 << 20
    /// The hard limit of the unit.
    public static let defaultLimitBytes = 50 * mebibyte
    /// What the plan aims under, leaving the rest as headroom for the allocator.
    public static let defaultBudgetBytes = 40 * mebibyte
    /// Runtime, the libraries' private pages, stacks, ALSA and the muxers: a generous
    /// allowance — the whole 800x480 10 fps broadcast to RTMP peaks at 18.4 MiB of
    /// anonymous memory in `scripts/bench-broadcast` (the static release build that ships).
    public static let processBaseBytes = 20 * mebibyte
    /// libx264 with tune zerolatency, preset ultrafast/veryfast, one thread: the frames it
    /// holds (reference, current, reconstruction, and lookahead-free slack).
    public static let encoderFramesHeld = 6
    public static let screenRates = 2...15
    public static let defaultScreenRate = 10

    /// Chooses settings for a source of `sourceSize`.
    /// - Parameters:
    ///   - sourceSize: What the framebuffer or camera delivers.
    ///   - bytesPerSourcePixel: 2 (RGB565), 4 (XRGB8888), 2 (YUYV), …
    ///   - framesPerSecond: Asked for (`--fps`); nil for the default (10 for the screen).
    ///   - isScreen: A screen is limited to 2–15 fps and encoded at a low bitrate (it
    ///     changes little); a camera keeps its rate.
    ///   - networkDestinations: Live destinations, each with a queue of its own.
    ///   - copiesFrames: False when the source hands its own memory over (a packed
    ///     framebuffer): no frames in flight are allocated.
    ///   - budgetBytes: What the whole process may use.
    /// - Throws: `BroadcastPlanError` when the rate is out of range or even the smallest
    ///   picture does not fit the budget.
    public static func choose(sourceSize: FrameSize, bytesPerSourcePixel: Int, framesPerSecond: Int?, isScreen: Bool,
                              networkDestinations: Int, audioBitrate: Int = 64_000, copiesFrames: Bool = true,
                              budgetBytes: Int = defaultBudgetBytes) throws(BroadcastPlanError) -> BroadcastPlan {
        guard (16...16_384).contains(sourceSize.width), (16...16_384).contains(sourceSize.height) else {
            throw BroadcastPlanError("the source is \(sourceSize.width)x\(sourceSize.height): too small or too large to broadcast")
        }
        guard (1...8).contains(bytesPerSourcePixel), (0...8).contains(networkDestinations), budgetBytes > 0 else {
            throw BroadcastPlanError("broadcast plan: \(bytesPerSourcePixel) bytes a pixel, \(networkDestinations) destinations: out of range")
        }
        let rate: Int
        if isScreen {
            rate = framesPerSecond ?? defaultScreenRate
            guard screenRates.contains(rate) else {
                throw BroadcastPlanError("--fps \(rate): a screen broadcast runs at \(screenRates.lowerBound)–\(screenRates.upperBound) frames a second")
            }
        } else {
            rate = framesPerSecond ?? 30
            guard (1...60).contains(rate) else { throw BroadcastPlanError("--fps \(rate): use 1–60") }
        }
        // Halve the picture until it fits (a 1080p panel becomes 960x540).
        var size = sourceSize
        while true {
            var plan = BroadcastPlan(size: size, framesPerSecond: rate, isScreen: isScreen, audioBitrate: audioBitrate,
                                     bytesPerSourcePixel: bytesPerSourcePixel, networkDestinations: networkDestinations,
                                     copiesFrames: copiesFrames)
            if plan.estimatedBytes <= budgetBytes { return plan }
            // Queues shrink first (down to a quarter), then the picture.
            let spare = budgetBytes - (plan.estimatedBytes - plan.queueBytesPerDestination * networkDestinations)
            if networkDestinations > 0, spare / networkDestinations >= minimumQueueBytes {
                plan.queueBytesPerDestination = spare / networkDestinations
                plan.estimatedBytes = budgetBytes - spare % networkDestinations
                return plan
            }
            let smaller = FrameSize(width: size.width / 4 * 2, height: size.height / 4 * 2)
            guard smaller.width >= 160, smaller.height >= 90 else {
                throw BroadcastPlanError("a broadcast of \(sourceSize.width)x\(sourceSize.height) does not fit in \(budgetBytes / mebibyte) MiB "
                                         + "even at \(size.width)x\(size.height); use fewer destinations or a lower --fps")
            }
            size = smaller
        }
    }

    /// The smallest queue a network destination gets: one 2 s GOP of a slow screen.
    public static let minimumQueueBytes = 128 * 1024

    private init(size: FrameSize, framesPerSecond: Int, isScreen: Bool, audioBitrate: Int, bytesPerSourcePixel: Int,
                 networkDestinations: Int, copiesFrames: Bool) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.audioBitrate = audioBitrate
        let pixels = size.width * size.height
        // A screen changes little from frame to frame: 0.15 bit a pixel a frame
        // (800x480 at 10 fps: 576 kbit/s); a camera gets the recording's rule per second.
        let bitsPerPixelFrame = isScreen ? 0.15 : 0.12
        let raw = Double(pixels) * Double(framesPerSecond) * bitsPerPixelFrame
        videoBitrate = Int(min(max(raw, 200_000), 6_000_000))
        encoderThreads = 1
        keyframeInterval = max(2, framesPerSecond * 2)
        framesInFlight = copiesFrames ? 3 : 0
        // Two seconds of the stream may wait for the network.
        queueBytesPerDestination = max(Self.minimumQueueBytes, (videoBitrate + audioBitrate) / 8 * 2)
        let sourceFrame = pixels * bytesPerSourcePixel
        let encoderFrame = pixels * 3 / 2
        estimatedBytes = Self.processBaseBytes + framesInFlight * sourceFrame + Self.encoderFramesHeld * encoderFrame
            + networkDestinations * queueBytesPerDestination
    }
}
