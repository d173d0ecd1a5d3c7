import CAVUtil
import CSwScale
import KioskCore

/// Scales camera frames into the preview picture with libswscale, straight into the
/// cairo surface's rows (BGRA in memory is cairo's RGB24 on a little-endian CPU).
/// One context per (frame format, preview size), made once and reused per frame.
final class PreviewScaler {
    let source: VideoFormat
    let destination: CairoCanvas
    private let context: OpaquePointer

    /// - Throws: `ScreenError.drawing` when libswscale has no path from the camera's format.
    init(source: VideoFormat, destinationSize: ScreenSize) throws(ScreenError) {
        self.source = source
        destination = try CairoCanvas(size: destinationSize)
        // Bilinear: smooth enough for a preview at a fraction of bicubic's cost.
        guard let context = sws_getContext(
            Int32(source.size.width), Int32(source.size.height), source.pixelFormat.swscaleFormat,
            Int32(destinationSize.width), Int32(destinationSize.height), AV_PIX_FMT_BGRA,
            kc_sws_bilinear(), nil, nil, nil
        ) else {
            throw ScreenError(.drawing, path: "memory", operation: "sws_getContext",
                              detail: "libswscale cannot scale \(source) to a \(destinationSize) preview")
        }
        self.context = context
    }

    deinit { sws_freeContext(context) }

    /// Scales one tightly packed frame into `destination`.
    func scale(_ frame: VideoFrame) {
        let size = source.size
        let base = UnsafePointer<UInt8>(frame.buffer.baseAddress.assumingMemoryBound(to: UInt8.self))
        let w = size.width, h = size.height, chromaWidth = (w + 1) / 2, chromaHeight = (h + 1) / 2
        var planes: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) = (base, nil, nil, nil)
        var strides: (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        switch source.pixelFormat {
        case .yuyv, .uyvy:
            strides.0 = Int32(w * 2)
        case .yuv420:
            strides = (Int32(w), Int32(chromaWidth), Int32(chromaWidth), 0)
            planes.1 = base + w * h
            planes.2 = base + w * h + chromaWidth * chromaHeight
        case .nv12:
            strides = (Int32(w), Int32(chromaWidth * 2), 0, 0)
            planes.1 = base + w * h
        }
        var output: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?)
            = (destination.pixels.assumingMemoryBound(to: UInt8.self), nil, nil, nil)
        var outputStrides: (Int32, Int32, Int32, Int32) = (Int32(destination.stride), 0, 0, 0)
        withUnsafePointer(to: &planes) { planesPointer in
            withUnsafePointer(to: &strides) { stridesPointer in
                withUnsafePointer(to: &output) { outputPointer in
                    withUnsafePointer(to: &outputStrides) { outputStridesPointer in
                        _ = sws_scale(
                            context,
                            UnsafeRawPointer(planesPointer).assumingMemoryBound(to: UnsafePointer<UInt8>?.self),
                            UnsafeRawPointer(stridesPointer).assumingMemoryBound(to: Int32.self),
                            0, Int32(h),
                            UnsafeRawPointer(outputPointer).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
                            UnsafeRawPointer(outputStridesPointer).assumingMemoryBound(to: Int32.self))
                    }
                }
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

extension PixelFormat {
    /// The FFmpeg name of the same memory layout.
    var swscaleFormat: AVPixelFormat {
        switch self {
        case .yuyv: AV_PIX_FMT_YUYV422
        case .uyvy: AV_PIX_FMT_UYVY422
        case .yuv420: AV_PIX_FMT_YUV420P
        case .nv12: AV_PIX_FMT_NV12
        }
    }
}
