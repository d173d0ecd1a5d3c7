import KioskCore

/// Blacks out the privacy masks (`[privacy]`) of every frame before anything else sees
/// it — digital zoom, the recording, stills, the preview and the luma branch — so a
/// masked area never reaches a file, a viewer or the motion detector.
///
/// The camera's buffer is never written: it may be a driver's (V4L2's mmap, libcamera's
/// read-only mapping) and its producer still holds it while it delivers. Each frame is
/// copied once into a pooled block (a `memcpy`, counted in `MediaStatistics`) and masked
/// there; without masks frames pass through untouched.
public final class PrivacyStage: CaptureSink, Sendable {
    private let downstream: CaptureSink
    private let mask: PrivacyMask
    private let orientation: PictureOrientation
    /// The plan and pool for the camera's current format; used on the camera's thread.
    private struct State {
        var format: VideoFormat?
        var plan: PrivacyMaskPlan?
        var pool: BufferPool?
        var copied = 0
        var dropped = 0
    }
    private let state = Locked(State())

    public init(downstream: CaptureSink, mask: PrivacyMask, orientation: PictureOrientation) {
        self.downstream = downstream
        self.mask = mask
        self.orientation = orientation
    }

    /// Frames copied to be masked, and dropped (every block held, or a frame too short).
    public var counters: (copied: Int, dropped: Int) { state.withLock { ($0.copied, $0.dropped) } }

    /// The part of the camera's current picture that is masked, in percent (nil before a frame came).
    public var maskedPercent: Double? {
        state.withLock { state in
            guard let plan = state.plan, plan.size.pixelCount > 0 else { return nil }
            return (Double(plan.maskedPixels) * 1000 / Double(plan.size.pixelCount)).rounded() / 10
        }
    }

    public func deliver(_ frame: VideoFrame) {
        let mask = mask, orientation = orientation
        let masked = state.withLock { state -> VideoFrame?? in
            if state.format != frame.format {
                state.format = frame.format
                let plan = mask.plan(for: frame.format.size, orientation: orientation)
                state.plan = plan
                // The encoder's queue (8), the preview, a still, the luma branch, zoom and a frame in hand.
                state.pool = plan.isEmpty ? nil : BufferPool(bufferCapacity: frame.format.frameByteCount, count: 14)
            }
            guard let plan = state.plan, !plan.isEmpty else { return .some(frame) }
            guard let buffer = state.pool?.take() else {
                state.dropped += 1
                return .some(nil)
            }
            let count = min(frame.buffer.byteCount, buffer.capacity)
            buffer.baseAddress.copyMemory(from: frame.buffer.baseAddress, byteCount: count)
            buffer.byteCount = count
            frame.buffer.doneReading()
            MediaStatistics.shared.countCopy(bytes: count)
            state.copied += 1
            let target = VideoFrame(buffer: buffer, format: frame.format, timestamp: frame.timestamp, sequence: frame.sequence)
            guard let planes = PicturePlanes(packed: target.buffer.baseAddress, byteCount: target.buffer.byteCount,
                                             format: target.format) else { return nil }
            plan.apply(to: planes)
            return .some(target)
        }
        switch masked {
        case .some(let frame?): downstream.deliver(frame)
        case .some(nil): return
        case nil:
            // A frame shorter than its format: passed on as it is would show what the
            // mask hides, so it is dropped (and counted).
            state.withLock { $0.dropped += 1 }
        }
    }

    public func deliver(_ chunk: AudioChunk) { downstream.deliver(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { downstream.videoSourceEnded(name, end) }
    public func audioSourceEnded(_ name: String, _ end: SourceEnd) { downstream.audioSourceEnded(name, end) }
}
