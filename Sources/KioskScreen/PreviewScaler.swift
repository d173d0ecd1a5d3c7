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
    /// How the camera is mounted (`camera.rotation`/`camera.mirror`): the preview is turned upright.
    let orientation: PictureOrientation
    private let converter: PixelConverter
    /// The scaled picture before it is turned (BGRA); empty when it needs no turning.
    private var unturned: [UInt8] = []
    private let unturnedSize: FrameSize

    /// - Parameters:
    ///   - destinationSize: The preview's size on screen (already turned).
    /// - Throws: `ScreenError.drawing` when libswscale has no path from the camera's format.
    init(source: VideoFormat, destinationSize: ScreenSize, orientation: PictureOrientation = .upright) throws(ScreenError) {
        self.source = source
        self.orientation = orientation
        destination = try CairoCanvas(size: destinationSize)
        // Turning swaps the axes back: scale to the camera's way up, then turn.
        unturnedSize = orientation.turnedSize(FrameSize(width: destinationSize.width, height: destinationSize.height))
        if !orientation.isUpright { unturned = [UInt8](repeating: 0, count: unturnedSize.width * unturnedSize.height * 4) }
        do {
            // Bilinear: smooth enough for a preview at a fraction of bicubic's cost.
            converter = try PixelConverter(source: source, destinationSize: unturnedSize,
                                           destinationFormat: AV_PIX_FMT_BGRA, flags: kc_sws_bilinear())
        } catch {
            throw ScreenError(.drawing, path: "memory", operation: "sws_getContext",
                              detail: "libswscale cannot scale \(source) to a \(destinationSize) preview: \(error)")
        }
    }

    /// Scales one tightly packed frame into `destination`, turned upright.
    func scale(_ frame: VideoFrame) {
        guard !orientation.isUpright else {
            convert(frame, into: destination.pixels.assumingMemoryBound(to: UInt8.self), stride: destination.stride)
            destination.markDirty()
            return
        }
        let width = unturnedSize.width, height = unturnedSize.height
        let size = destination.size
        unturned.withUnsafeMutableBytes { scratch in
            guard let base = scratch.baseAddress else { return }
            convert(frame, into: base.assumingMemoryBound(to: UInt8.self), stride: width * 4)
            orientation.turn(plane: UnsafeRawBufferPointer(scratch), width: width, height: height, sourceStride: width * 4,
                             into: UnsafeMutableRawBufferPointer(start: destination.pixels, count: destination.stride * size.height),
                             destinationStride: destination.stride, bytesPerPixel: 4)
        }
        destination.markDirty()
    }

    private func convert(_ frame: VideoFrame, into pixels: UnsafeMutablePointer<UInt8>, stride: Int) {
        var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?)
            = (pixels, nil, nil, nil)
        var strides: (Int32, Int32, Int32, Int32) = (Int32(stride), 0, 0, 0)
        withUnsafePointer(to: &planes) { planes in
            withUnsafePointer(to: &strides) { strides in
                converter.convert(UnsafeRawPointer(frame.buffer.baseAddress),
                                  into: UnsafeRawPointer(planes).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
                                  strides: UnsafeRawPointer(strides).assumingMemoryBound(to: Int32.self))
            }
        }
    }

    /// The largest size with the frame's aspect ratio inside `area`, width a multiple of 8,
    /// height even (the same geometry a tap on the preview is mapped back through).
    static func fittedSize(_ frame: FrameSize, in area: ScreenSize) -> ScreenSize {
        PreviewTapMapping.fittedSize(frame, in: area)
    }
}
