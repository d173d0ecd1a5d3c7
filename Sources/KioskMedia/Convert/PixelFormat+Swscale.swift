import CAVUtil
import KioskCore

/// How libswscale reads a camera layout. Most layouts are an FFmpeg pixel format under
/// another name; four are not in FFmpeg 5.1 at all and are read, at no cost, as one that
/// is (`PixelConverterTests` checks that the colours come out right):
///
/// - YV12 is YU12 with its two chroma planes in the other order: the plane pointers are
///   handed over exchanged.
/// - VYUY is UYVY with U and V exchanged: it is read as UYVY, and the destination's U and
///   V plane pointers are exchanged, so each lands where it belongs.
/// - NV16/NV61 (4:2:2 with interleaved chroma) have no libswscale input at all in
///   FFmpeg 5.1 (`sws_isSupportedInput(AV_PIX_FMT_NV16)` is 0): they are read as NV12/NV21
///   with twice the chroma stride, i.e. every other chroma row — exactly the 4:2:0 a
///   4:2:0 camera would have sampled, with no filtering of the dropped rows.
///
/// And one that FFmpeg has is taken the long way round: Bayer goes through RGB24
/// (`demosaicsFirst`).
struct SwscaleReading: Equatable {
    /// The FFmpeg pixel format the frame is read as.
    var format: AVPixelFormat
    /// The second and third planes are handed over exchanged (YV12).
    var exchangesSourceChroma = false
    /// U and V come out exchanged and must be exchanged back in the destination (VYUY).
    var exchangesDestinationChroma = false
    /// Chroma rows are read this many apart (NV16, NV61: 2 — every other row).
    var chromaRowStep = 1
    /// Bayer: demosaiced to RGB24 first, then converted. libswscale 6's direct
    /// Bayer-to-yuv420p path gets the colours wrong (pure red comes out Y 40, U 109
    /// instead of Y 81, U 90); its Bayer-to-RGB24 path is right.
    var demosaicsFirst = false
}

extension PixelFormat {
    /// How libswscale reads this layout.
    var swscaleReading: SwscaleReading {
        switch self {
        case .yuv420: SwscaleReading(format: AV_PIX_FMT_YUV420P)
        case .yvu420: SwscaleReading(format: AV_PIX_FMT_YUV420P, exchangesSourceChroma: true)
        case .nv12: SwscaleReading(format: AV_PIX_FMT_NV12)
        case .nv21: SwscaleReading(format: AV_PIX_FMT_NV21)
        case .yuyv: SwscaleReading(format: AV_PIX_FMT_YUYV422)
        case .uyvy: SwscaleReading(format: AV_PIX_FMT_UYVY422)
        case .yvyu: SwscaleReading(format: AV_PIX_FMT_YVYU422)
        case .vyuy: SwscaleReading(format: AV_PIX_FMT_UYVY422, exchangesDestinationChroma: true)
        case .nv16: SwscaleReading(format: AV_PIX_FMT_NV12, chromaRowStep: 2)
        case .nv61: SwscaleReading(format: AV_PIX_FMT_NV21, chromaRowStep: 2)
        case .yuv422p: SwscaleReading(format: AV_PIX_FMT_YUV422P)
        case .grey: SwscaleReading(format: AV_PIX_FMT_GRAY8)
        case .rgb24: SwscaleReading(format: AV_PIX_FMT_RGB24)
        case .bgr24: SwscaleReading(format: AV_PIX_FMT_BGR24)
        case .rgb565: SwscaleReading(format: AV_PIX_FMT_RGB565LE)
        case .rgb565x: SwscaleReading(format: AV_PIX_FMT_RGB565BE)
        // The alpha variants are read as their X twins, so an alpha byte (a camera's is
        // meaningless, and vivid's is 0) can never make anything transparent.
        case .xbgr32, .abgr32, .bgr32: SwscaleReading(format: AV_PIX_FMT_BGR0)
        case .rgbx32, .rgba32: SwscaleReading(format: AV_PIX_FMT_RGB0)
        case .xrgb32, .argb32, .rgb32: SwscaleReading(format: AV_PIX_FMT_0RGB)
        case .bgrx32, .bgra32: SwscaleReading(format: AV_PIX_FMT_0BGR)
        case .sbggr8: SwscaleReading(format: AV_PIX_FMT_BAYER_BGGR8, demosaicsFirst: true)
        case .sgbrg8: SwscaleReading(format: AV_PIX_FMT_BAYER_GBRG8, demosaicsFirst: true)
        case .sgrbg8: SwscaleReading(format: AV_PIX_FMT_BAYER_GRBG8, demosaicsFirst: true)
        case .srggb8: SwscaleReading(format: AV_PIX_FMT_BAYER_RGGB8, demosaicsFirst: true)
        }
    }

    /// The FFmpeg format whose planes (as `withPlanes` hands them over) these bytes are,
    /// with no conversion at all — what an encoder can take by reference; nil for layouts
    /// that need a converter even into their own reading format (VYUY: U and V exchanged
    /// on the way out; Bayer: demosaiced first).
    var directFormat: AVPixelFormat? {
        let reading = swscaleReading
        return reading.exchangesDestinationChroma || reading.demosaicsFirst ? nil : reading.format
    }

    /// Calls `body` with the plane pointers and strides libswscale reads a tightly packed
    /// frame through (`swscaleReading`'s plane exchange and chroma row step applied), built
    /// on the stack from `planes(for:)` — this runs once per frame. `firstRowBytes`: the
    /// first plane's pitch when its rows are padded (a framebuffer's stride); nil when packed.
    func withPlanes<R>(_ base: UnsafeRawPointer, _ size: FrameSize, firstRowBytes: Int? = nil,
                       _ body: (UnsafePointer<UnsafePointer<UInt8>?>, UnsafePointer<Int32>) -> R) -> R {
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let reading = swscaleReading
        let geometry = geometry
        return withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 4) { planes in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4) { strides in
                planes.initialize(repeating: nil)
                strides.initialize(repeating: 0)
                var offset = 0
                for (index, plane) in geometry.planes.enumerated() {
                    let rowBytes = index == 0 ? firstRowBytes ?? plane.rowBytes(forWidth: size.width) : plane.rowBytes(forWidth: size.width)
                    planes[index] = bytes + offset
                    strides[index] = Int32(index == 0 ? rowBytes : rowBytes * reading.chromaRowStep)
                    offset += rowBytes * plane.rows(forHeight: size.height)
                }
                if reading.exchangesSourceChroma {
                    planes.swapAt(1, 2)
                    strides.swapAt(1, 2)
                }
                return body(UnsafePointer(planes.baseAddress!), UnsafePointer(strides.baseAddress!))
            }
        }
    }
}

extension AVPixelFormat {
    /// "yuv420p", or the number for a format FFmpeg has no name for.
    var name: String {
        av_get_pix_fmt_name(self).map { String(cString: $0) } ?? "pixel format \(rawValue)"
    }

    /// Whether U and V (Cb, Cr) are planes of their own (yuv420p, yuv422p, yuvj420p, …), so
    /// that exchanging two plane pointers exchanges the colours.
    var hasSeparateChromaPlanes: Bool {
        guard let descriptor = av_pix_fmt_desc_get(self)?.pointee else { return false }
        let notYUV = UInt64(AV_PIX_FMT_FLAG_RGB) | UInt64(AV_PIX_FMT_FLAG_PAL) | UInt64(AV_PIX_FMT_FLAG_HWACCEL)
        guard descriptor.nb_components >= 3, descriptor.flags & notYUV == 0 else { return false }
        let (luma, u, v) = (descriptor.comp.0.plane, descriptor.comp.1.plane, descriptor.comp.2.plane)
        return u != v && u != luma && v != luma
    }
}
