import KioskCore
import KioskMedia
import Logging

/// The RTSP sub-stream (`/sub`): a second, smaller encode of the same capture, for an
/// NVR's detector and a dashboard's tiles. A branch of the capture hub like the preview:
/// while a client wants it, each frame (paced to the sub-stream's rate) is scaled once
/// with libswscale into a pooled buffer and handed to an encode branch of its own, whose
/// only output is the sub-stream's `RTPStream`. No second capture; nothing runs while
/// nobody watches.
public final class SubstreamBranch: CaptureBranch, Sendable {
    public let stream: RTPStream
    public let encoder: EncodeBranch
    public let size: FrameSize
    public let framesPerSecond: Int
    private struct Scaling {
        /// The scaled copy, the overlay drawn in (ours until it is handed on).
        var scaler: PooledScaler
        var nextDue: MonotonicInstant?
        var dropped = 0
    }
    // Used on the camera thread only, so its lock is never contended.
    private let scaling: Locked<Scaling>
    private let logger: Logger
    private let clock: MonotonicClock

    /// - Parameters:
    ///   - settings: The main encode's settings: codec, preset and orientation are kept;
    ///     size, rate and bitrate are the sub-stream's.
    ///   - bitrate: Bits a second; nil: the default for the size.
    public init(settings: VideoTrackSettings, size: FrameSize, framesPerSecond: Int, bitrate: Int?, overlay: OverlaySpec? = nil,
                clock: MonotonicClock, logger: Logger) {
        self.size = size
        self.framesPerSecond = max(1, framesPerSecond)
        self.logger = logger
        self.clock = clock
        // The encoder's queue (8) and a frame in hand.
        scaling = Locked(Scaling(scaler: PooledScaler(size: size, framesPerSecond: self.framesPerSecond, poolCount: 10,
                                                      overlay: overlay?.makeStamp())))
        var sub = settings
        sub.input = VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: self.framesPerSecond)
        sub.bitrate = bitrate ?? EncodingPolicy.defaultBitrate(for: size)
        sub.keyframeInterval = min(settings.keyframeInterval, self.framesPerSecond * 2)
        let encoder = EncodeBranch(video: sub, audio: nil, overflow: .dropOldest, clock: clock, logger: logger, threadName: "kioskcam.encoder.sub")
        self.encoder = encoder
        stream = RTPStream(clientByteLimit: 2 * sub.bitrate / 8, expectsAudio: false, framesPerSecond: self.framesPerSecond,
                           clock: clock, logger: logger, requestKeyframe: { [weak encoder] in encoder?.requestKeyframe(at: $0) })
        encoder.add(stream)
    }

    /// Frames not scaled because every sub-stream buffer was still held (the encoder behind).
    public var droppedFrames: Int { scaling.withLock { $0.dropped } }

    public func take(_ frame: VideoFrame) {
        guard stream.demand != .none else { return }
        let interval = Int64(1_000_000_000 / framesPerSecond)
        let scaled = scaling.withLock { scaling -> VideoFrame? in
            // Paced by capture time: a frame is due once per interval (a little early is on time).
            if let due = scaling.nextDue, frame.timestamp.nanoseconds(since: due) < -interval / 4 { return nil }
            let next = (scaling.nextDue ?? frame.timestamp).advanced(byNanoseconds: interval)
            scaling.nextDue = frame.timestamp.nanoseconds(since: next) > interval ? frame.timestamp.advanced(byNanoseconds: interval) : next
            switch scaling.scaler.scale(frame, capturedAt: WallClock.unixSeconds(of: frame.timestamp, clock: clock),
                                        logger: logger, label: "rtsp sub-stream") {
            case .scaled(let scaled): return scaled
            case .unconvertible: return nil
            case .noBuffer:
                scaling.dropped += 1
                return nil
            }
        }
        guard let scaled else { return }
        frame.buffer.doneReading()
        encoder.take(scaled)
    }

    public func videoEnded(_ name: String, _ end: SourceEnd) {}

    /// Drains and ends the encoder's thread (after capture stopped).
    public func shutdown(timeout: Double = 30) { encoder.shutdown(timeout: timeout) }
}
