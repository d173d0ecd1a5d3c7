import KioskCore
import KioskMedia

/// Digital zoom for cameras without a zoom control: the centre of each frame cut out and
/// scaled back to full size before the hub, so the recording, the preview, stills and
/// the luma branch all see the same zoomed picture. At 1× frames pass through untouched
/// (by reference); zoomed, each frame is written once into a pooled buffer (counted in
/// `MediaStatistics`). Changes glide over `rampSeconds`, as the camera's own zoom does.
public final class DigitalZoomStage: CaptureSink, @unchecked Sendable {
    private let downstream: CaptureSink
    /// The largest factor: beyond it the picture is mostly interpolation.
    public let maximum: Double
    public let rampSeconds: Double
    private let clock: MonotonicClock
    private let lock = Lock()
    // Guarded by `lock`.
    private var from = 1.0
    private var to = 1.0
    private var rampStart = MonotonicInstant(nanoseconds: 0)
    private var dropped = 0
    // Owned by the camera's thread.
    private var scaler: FrameCropScaler?
    private var pool: BufferPool?

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
        lock.withLock {
            from = smoothly ? current(at: now) : target
            to = target
            rampStart = now
        }
        return target
    }

    /// The factor being zoomed to, and the one shown now.
    public var zoom: (target: Double, now: Double) {
        let now = clock.now()
        return lock.withLock { (to, current(at: now)) }
    }

    /// Frames dropped because every zoom buffer was still held downstream.
    public var droppedFrames: Int { lock.withLock { dropped } }

    private func current(at time: MonotonicInstant) -> Double {
        guard rampSeconds > 0 else { return to }
        let progress = min(1, max(0, time.seconds(since: rampStart) / rampSeconds))
        return from + (to - from) * progress
    }

    public func deliver(_ frame: VideoFrame) {
        let factor = lock.withLock { current(at: frame.timestamp) }
        guard factor > 1.001 else {
            downstream.deliver(frame)
            return
        }
        if scaler?.format != frame.format {
            scaler = FrameCropScaler(format: frame.format)
            // The encoder queue (8), the preview, a still, the luma branch and a frame in hand.
            pool = BufferPool(bufferCapacity: frame.format.frameByteCount, count: 14)
        }
        guard let scaler, let buffer = pool?.take() else {
            lock.withLock { dropped += 1 }
            return
        }
        guard scaler.zoom(frame.buffer.baseAddress, by: factor, into: buffer.baseAddress) else {
            downstream.deliver(frame)
            return
        }
        buffer.byteCount = frame.format.frameByteCount
        MediaStatistics.shared.countCopy(bytes: buffer.byteCount)
        downstream.deliver(VideoFrame(buffer: buffer, format: frame.format, timestamp: frame.timestamp, sequence: frame.sequence))
    }

    public func deliver(_ chunk: AudioChunk) { downstream.deliver(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { downstream.videoSourceEnded(name, end) }
    public func audioSourceEnded(_ name: String, _ end: SourceEnd) { downstream.audioSourceEnded(name, end) }
}
