import CAVUtil
import CSwScale
import KioskCore

/// Scales camera frames of any layout to a smaller planar 4:2:0 picture, one libswscale
/// pass: the RTSP sub-stream's input. One context per source format, made once.
public final class FrameScaler {
    public let source: VideoFormat
    public let output: VideoFormat
    private let converter: PixelConverter

    /// - Throws: `MediaError.conversion` when libswscale cannot read the layout.
    public init(source: VideoFormat, size: FrameSize, framesPerSecond: Int) throws(MediaError) {
        self.source = source
        output = VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: framesPerSecond)
        converter = try PixelConverter(source: source, destinationSize: size, destinationFormat: AV_PIX_FMT_YUV420P,
                                       flags: kc_sws_bilinear())
    }

    /// Writes `frame` scaled into `target` (a buffer of at least `output.frameByteCount`).
    public func scale(_ frame: VideoFrame, into target: MediaBuffer) {
        converter.convert(frame.buffer.baseAddress, intoPacked: target.baseAddress, layout: .yuv420, size: output.size)
        target.byteCount = output.frameByteCount
    }
}
