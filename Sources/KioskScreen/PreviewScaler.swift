import CAVUtil
import CSwScale
import KioskCore
import KioskMedia

/// Scales camera frames into the preview picture with libswscale, straight into the
/// cairo surface's rows (BGRA in memory is cairo's RGB24 on a little-endian CPU).
/// One converter per (frame format, preview size), made once and reused per frame; it
/// reads every camera layout the recorder does (`PixelConverter`).
final class PreviewScaler {
    let source: VideoFormat
    let destination: CairoCanvas
    private let converter: PixelConverter

    /// - Throws: `ScreenError.drawing` when libswscale has no path from the camera's format.
    init(source: VideoFormat, destinationSize: ScreenSize) throws(ScreenError) {
        self.source = source
        destination = try CairoCanvas(size: destinationSize)
        do {
            // Bilinear: smooth enough for a preview at a fraction of bicubic's cost.
            converter = try PixelConverter(source: source,
                                           destinationSize: FrameSize(width: destinationSize.width, height: destinationSize.height),
                                           destinationFormat: AV_PIX_FMT_BGRA, flags: kc_sws_bilinear())
        } catch {
            throw ScreenError(.drawing, path: "memory", operation: "sws_getContext",
                              detail: "libswscale cannot scale \(source) to a \(destinationSize) preview: \(error)")
        }
    }

    /// Scales one tightly packed frame into `destination`.
    func scale(_ frame: VideoFrame) {
        var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?)
            = (destination.pixels.assumingMemoryBound(to: UInt8.self), nil, nil, nil)
        var strides: (Int32, Int32, Int32, Int32) = (Int32(destination.stride), 0, 0, 0)
        withUnsafePointer(to: &planes) { planes in
            withUnsafePointer(to: &strides) { strides in
                converter.convert(UnsafeRawPointer(frame.buffer.baseAddress),
                                  into: UnsafeRawPointer(planes).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
                                  strides: UnsafeRawPointer(strides).assumingMemoryBound(to: Int32.self))
            }
        }
        destination.markDirty()
    }

    /// The largest size with the frame's aspect ratio inside `area`, width a multiple of 8, height even.
    static func fittedSize(_ frame: FrameSize, in area: ScreenSize) -> ScreenSize {
        guard frame.width > 0, frame.height > 0, area.width > 0, area.height > 0 else { return ScreenSize(width: 0, height: 0) }
        var width = area.width
        var height = width * frame.height / frame.width
        if height > area.height {
            height = area.height
            width = height * frame.width / frame.height
        }
        // Width a multiple of 8: rows of 32 bytes, which libswscale writes fastest.
        return ScreenSize(width: max(8, width & ~7), height: max(2, height & ~1))
    }
}
