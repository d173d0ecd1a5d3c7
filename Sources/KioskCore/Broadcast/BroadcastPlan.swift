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
///
/// A picture too large for the budget is scaled down by the capture (libswscale turns the
/// source straight into 4:2:0 at the planned size, the one conversion the frame gets), so
/// its frames in flight are 4:2:0 at the planned size too.
public struct BroadcastPlan: Sendable, Equatable {
    public var size: FrameSize
    /// The source's own size; `size` differs when the picture is scaled to fit.
    public var sourceSize: FrameSize
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

    /// Whether the capture scales the picture down to `size`.
    public var isScaled: Bool { size != sourceSize }

    public static let mebibyte = 1 << 20
    /// The hard limit of the unit.
    public static let defaultLimitBytes = 50 * mebibyte
    /// What the plan aims under, leaving the rest as headroom for the allocator.
    public static let defaultBudgetBytes = 40 * mebibyte
    /// Runtime, the libraries' private pages, stacks, ALSA and the muxers, with a margin.
    /// Measured peak anonymous memory (debug build, a file-backed XRGB8888 screen at
    /// 10 fps to the library) fits 12.3 MiB + 19.7 bytes a sent pixel + 4.5 more when
    /// scaled: 19.1 MiB at 800x480, 23.2 MiB scaled to 960x540, 45.3 MiB scaled to
    /// 1662x934, 50.1 MiB at 1920x1080 by reference (the 800x480 broadcast to RTMP, static
    /// release build that ships: 18.4 MiB in `scripts/bench-broadcast`).
    public static let processBaseBytes = 16 * mebibyte
    /// libx264 with tune zerolatency, preset veryfast, one thread, and the encoder's own
    /// picture: 19.7 bytes a pixel measured (above), about 13 YUV 4:2:0 frames; 14 for a
    /// margin. (6, the first guess, let a 1080p screen "fit" and then use 50 MiB.)
    public static let encoderFramesHeld = 14
    public static let screenRates = 2...15
    public static let defaultScreenRate = 10
    /// The smallest picture a broadcast scales to: below it nothing on a screen is readable.
    public static let minimumSize = FrameSize(width: 160, height: 90)

    /// Chooses settings for a source of `sourceSize`.
    /// - Parameters:
    ///   - sourceSize: What the framebuffer or camera delivers.
    ///   - bytesPerSourcePixel: 2 (RGB565), 4 (XRGB8888), 2 (YUYV), …
    ///   - framesPerSecond: Asked for (`--fps`); nil for the default (10 for the screen).
    ///   - isScreen: A screen is limited to 2–15 fps and encoded at a low bitrate (it
    ///     changes little); a camera keeps its rate.
    ///   - networkDestinations: Live destinations, each with a queue of its own.
    ///   - copiesFrames: False when the source hands its own memory over (a packed
    ///     framebuffer): no frames in flight are allocated at the source's size.
    ///   - requestedSize: The size the user asked for (`--size`), or nil for the largest
    ///     that fits: the source's own, else the source scaled down keeping its shape
    ///     (even width and height).
    ///   - budgetBytes: What the whole process may use.
    /// - Throws: `BroadcastPlanError` when the rate or the requested size is out of
    ///   range, or even the smallest picture does not fit the budget.
    public static func choose(sourceSize: FrameSize, bytesPerSourcePixel: Int, framesPerSecond: Int?, isScreen: Bool,
                              networkDestinations: Int, audioBitrate: Int = 64_000, copiesFrames: Bool = true,
                              requestedSize: FrameSize? = nil,
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
        /// The plan at `size`, its queues shrunk (down to `minimumQueueBytes`) before the
        /// picture is; nil when it does not fit even so.
        func fitting(_ size: FrameSize) -> BroadcastPlan? {
            var plan = BroadcastPlan(size: size, sourceSize: sourceSize, framesPerSecond: rate, isScreen: isScreen,
                                     audioBitrate: audioBitrate, bytesPerSourcePixel: bytesPerSourcePixel,
                                     networkDestinations: networkDestinations, copiesFrames: copiesFrames)
            if plan.estimatedBytes <= budgetBytes { return plan }
            let spare = budgetBytes - (plan.estimatedBytes - plan.queueBytesPerDestination * networkDestinations)
            guard networkDestinations > 0, spare / networkDestinations >= minimumQueueBytes else { return nil }
            plan.queueBytesPerDestination = spare / networkDestinations
            plan.estimatedBytes = budgetBytes - spare % networkDestinations
            return plan
        }
        let largest = fitting(sourceSize) ?? scaledSizes(of: sourceSize).lazy.compactMap(fitting).first
        if let requestedSize {
            try validate(requestedSize, source: sourceSize)
            guard let plan = fitting(requestedSize) else {
                let advice = largest.map { "the largest that fits is \($0.size)" } ?? "nothing fits; use fewer destinations"
                throw BroadcastPlanError("--size \(requestedSize): does not fit in the broadcast's \(budgetBytes / mebibyte) MiB; \(advice)")
            }
            return plan
        }
        guard let largest else {
            throw BroadcastPlanError("a broadcast of \(sourceSize) does not fit in \(budgetBytes / mebibyte) MiB even at "
                                     + "\(scaledSizes(of: sourceSize).last ?? sourceSize); use fewer destinations or a lower --fps")
        }
        return largest
    }

    /// Every size below `source` with its shape (the height rounded to even), largest
    /// first, down to `minimumSize`.
    public static func scaledSizes(of source: FrameSize) -> [FrameSize] {
        guard source.width > 2, source.height > 0 else { return [] }
        return stride(from: (source.width - 1) / 2 * 2, through: minimumSize.width, by: -2).compactMap { width in
            // The nearest even height: round(width × H / W / 2) × 2.
            let height = (width * source.height + source.width) / (2 * source.width) * 2
            return height >= minimumSize.height && height <= source.height ? FrameSize(width: width, height: height) : nil
        }
    }

    /// Checks a size the user asked for: even numbers, no larger than the source and no
    /// smaller than `minimumSize`, the source's shape (within the rounding to even).
    /// - Throws: `BroadcastPlanError` naming the size and a size that would do.
    public static func validate(_ size: FrameSize, source: FrameSize) throws(BroadcastPlanError) {
        guard size.width % 2 == 0, size.height % 2 == 0 else {
            throw BroadcastPlanError("--size \(size): H.264 needs even numbers, such as \(size.width / 2 * 2)x\(size.height / 2 * 2)")
        }
        guard size.width <= source.width, size.height <= source.height else {
            throw BroadcastPlanError("--size \(size): larger than the source's \(source); a broadcast only scales down")
        }
        guard size.width >= minimumSize.width, size.height >= minimumSize.height else {
            throw BroadcastPlanError("--size \(size): smaller than \(minimumSize), the smallest a broadcast sends")
        }
        // Cross-multiplied, so no rounding: |w × H − h × W| within two rows' worth.
        guard abs(size.width * source.height - size.height * source.width) <= 2 * source.width else {
            let height = (size.width * source.height + source.width) / (2 * source.width) * 2
            throw BroadcastPlanError("--size \(size): not the shape of the source's \(source) (the picture would be stretched); "
                                     + "use e.g. \(size.width)x\(height)")
        }
    }

    /// The smallest queue a network destination gets: one 2 s GOP of a slow screen.
    public static let minimumQueueBytes = 128 * 1024

    private init(size: FrameSize, sourceSize: FrameSize, framesPerSecond: Int, isScreen: Bool, audioBitrate: Int,
                 bytesPerSourcePixel: Int, networkDestinations: Int, copiesFrames: Bool) {
        self.size = size
        self.sourceSize = sourceSize
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
        // A scaled picture is always written into the capture's own 4:2:0 frames.
        let scaled = size != sourceSize
        framesInFlight = copiesFrames || scaled ? 3 : 0
        // Two seconds of the stream may wait for the network.
        queueBytesPerDestination = max(Self.minimumQueueBytes, (videoBitrate + audioBitrate) / 8 * 2)
        let capturedFrame = scaled ? pixels * 3 / 2 : sourceSize.width * sourceSize.height * bytesPerSourcePixel
        let encoderFrame = pixels * 3 / 2
        estimatedBytes = Self.processBaseBytes + framesInFlight * capturedFrame + Self.encoderFramesHeld * encoderFrame
            + networkDestinations * queueBytesPerDestination
    }
}

extension FrameSize {
    /// A `--size` / `broadcast.size` / `"size"` value: WIDTHxHEIGHT, each even and from 16 to
    /// 8192 (what the socket and the config accept before the plan checks it against the screen).
    public init?(broadcastSize text: String) {
        guard let size = FrameSize(parsing: text), (16...8192).contains(size.width), (16...8192).contains(size.height),
              size.width % 2 == 0, size.height % 2 == 0 else { return nil }
        self = size
    }
}
