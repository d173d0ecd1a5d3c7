import KioskCore
import KioskMedia
import Logging

/// A branch's own 4:2:0 copy of a frame: scaled once by libswscale (`FrameScaler`, made
/// again when the camera's format changes, never retried for a format it refused) into a
/// pooled buffer, with the overlay drawn in for the frame's capture time. The copy is the
/// branch's until it hands it on, so drawing into it never touches the camera's buffer.
/// Used by the branches that encode a picture of their own: the RTSP sub-stream and the
/// timelapse. One thread.
struct PooledScaler {
    enum Outcome {
        case scaled(VideoFrame)
        /// libswscale cannot read the camera's layout (logged once per format).
        case unconvertible
        /// Every pooled buffer is still held downstream (the encoder is behind).
        case noBuffer
    }

    /// The output size; nil for the frame's own.
    let size: FrameSize?
    let framesPerSecond: Int
    let poolCount: Int
    var overlay: OverlayStamp?
    private var scaler: FrameScaler?
    private var failedFormat: VideoFormat?
    private var pool: BufferPool?

    init(size: FrameSize?, framesPerSecond: Int, poolCount: Int, overlay: OverlayStamp?) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.poolCount = poolCount
        self.overlay = overlay
    }

    /// `frame` in a pooled buffer at the output size, its times and sequence kept.
    mutating func scale(_ frame: VideoFrame, capturedAt unixSeconds: Double, logger: Logger, label: String) -> Outcome {
        if scaler?.source != frame.format, failedFormat != frame.format {
            do {
                let made = try FrameScaler(source: frame.format, size: size ?? frame.format.size, framesPerSecond: framesPerSecond)
                scaler = made
                pool = BufferPool(bufferCapacity: made.output.frameByteCount, count: poolCount)
            } catch {
                failedFormat = frame.format
                scaler = nil
                logger.error("\(label): \(error)")
            }
        }
        guard let scaler else { return .unconvertible }
        guard let buffer = pool?.take() else { return .noBuffer }
        scaler.scale(frame, into: buffer)
        if let overlay, let planes = PicturePlanes(packed: buffer.baseAddress, byteCount: buffer.byteCount, format: scaler.output) {
            overlay.draw(into: planes, unixSeconds: unixSeconds, frame: frame.sequence)
        }
        return .scaled(VideoFrame(buffer: buffer, format: scaler.output, timestamp: frame.timestamp, sequence: frame.sequence))
    }
}
