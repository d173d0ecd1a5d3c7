import KioskCore
import KioskMedia

/// Digital zoom for cameras without a zoom control: the centre of each frame cut out and
/// scaled back to full size before the hub, so the recording, the preview, stills and
/// the luma branch all see the same zoomed picture. At 1× frames pass through untouched
/// (by reference); zoomed, each frame is written once into a pooled buffer (counted in
/// `MediaStatistics`). Changes glide over `rampSeconds`, as the camera's own zoom does.
public final class DigitalZoomStage: CaptureSink, Sendable {
    private let downstream: CaptureSink
    /// The largest factor: beyond it the picture is mostly interpolation.
    public let maximum: Double
    public let rampSeconds: Double
    private let clock: MonotonicClock
    private struct Ramp {
        var from = 1.0
        var to = 1.0
        var start = MonotonicInstant(nanoseconds: 0)
        var dropped = 0

        func current(at time: MonotonicInstant, rampSeconds: Double) -> Double {
            guard rampSeconds > 0 else { return to }
            let progress = min(1, max(0, time.seconds(since: start) / rampSeconds))
            return from + (to - from) * progress
        }
    }
    private let ramp = Locked(Ramp())
    /// The scaler (swscale) and its buffers for the camera's current format; used on the
    /// camera's thread only, so its lock is never contended.
    private struct Scaling {
        var scaler: FrameCropScaler?
        var pool: BufferPool?
    }
    private let scaling = Locked(Scaling())

    public init(downstream: CaptureSink, maximum: Double = 4, rampSeconds: Double = 0.5, clock: MonotonicClock) {
        self.downstream = downstream
        self.maximum = max(1, maximum)
        self.rampSeconds = max(0, rampSeconds)
        self.clock = clock
    }

    /// Zooms to `factor` (clamped to 1…`maximum`), gliding unless `smoothly` is false.
    /// - Returns: The factor being zoomed to.
    @discardableResult
    public func setZoom(_ factor: Double, smoothly: Bool = true) -> Double {
        let target = factor.isFinite ? min(max(1, factor), maximum) : 1
        let now = clock.now()
        let rampSeconds = rampSeconds
        ramp.withLock { ramp in
            ramp.from = smoothly ? ramp.current(at: now, rampSeconds: rampSeconds) : target
            ramp.to = target
            ramp.start = now
        }
        return target
    }

    /// The factor being zoomed to, and the one shown now.
    public var zoom: (target: Double, now: Double) {
        let now = clock.now()
        let rampSeconds = rampSeconds
        return ramp.withLock { ($0.to, $0.current(at: now, rampSeconds: rampSeconds)) }
    }

    /// Frames dropped because every zoom buffer was still held downstream.
    public var droppedFrames: Int { ramp.withLock { $0.dropped } }

    public func deliver(_ frame: VideoFrame) {
        let rampSeconds = rampSeconds
        let factor = ramp.withLock { $0.current(at: frame.timestamp, rampSeconds: rampSeconds) }
        guard factor > 1.001 else {
            downstream.deliver(frame)
            return
        }
        let zoomed = scaling.withLock { scaling -> MediaBuffer?? in
            if scaling.scaler?.format != frame.format {
                scaling.scaler = FrameCropScaler(format: frame.format)
                // The encoder queue (8), the preview, a still, the luma branch and a frame in hand.
                scaling.pool = BufferPool(bufferCapacity: frame.format.frameByteCount, count: 14)
            }
            guard let scaler = scaling.scaler, let buffer = scaling.pool?.take() else { return .some(nil) }
            guard scaler.zoom(frame.buffer.baseAddress, by: factor, into: buffer.baseAddress) else { return nil }
            return buffer
        }
        switch zoomed {
        case nil:
            downstream.deliver(frame)
        case .some(nil):
            ramp.withLock { $0.dropped += 1 }
        case .some(let buffer?):
            buffer.byteCount = frame.format.frameByteCount
            MediaStatistics.shared.countCopy(bytes: buffer.byteCount)
            downstream.deliver(VideoFrame(buffer: buffer, format: frame.format, timestamp: frame.timestamp, sequence: frame.sequence))
        }
    }

    public func deliver(_ chunk: AudioChunk) { downstream.deliver(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { downstream.videoSourceEnded(name, end) }
    public func audioSourceEnded(_ name: String, _ end: SourceEnd) { downstream.audioSourceEnded(name, end) }
}
