import CAVUtil
import CSwScale
import KioskCore

extension PixelFormat {
    /// The FFmpeg name of the same memory layout.
    var avPixelFormat: AVPixelFormat {
        switch self {
        case .yuyv: AV_PIX_FMT_YUYV422
        case .uyvy: AV_PIX_FMT_UYVY422
        case .yuv420: AV_PIX_FMT_YUV420P
        case .nv12: AV_PIX_FMT_NV12
        }
    }

    /// Calls `body` with the plane pointers and strides of a tightly packed frame,
    /// built on the stack (this runs once per frame).
    func withPlanes<R>(_ base: UnsafeRawPointer, _ size: FrameSize,
                       _ body: (UnsafePointer<UnsafePointer<UInt8>?>, UnsafePointer<Int32>) -> R) -> R {
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        return withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 4) { planes in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4) { strides in
                planes.initialize(repeating: nil)
                strides.initialize(repeating: 0)
                switch self {
                case .yuyv, .uyvy:
                    planes[0] = bytes; strides[0] = Int32(w * 2)
                case .yuv420:
                    planes[0] = bytes; strides[0] = Int32(w)
                    planes[1] = bytes + w * h; strides[1] = Int32(cw)
                    planes[2] = bytes + w * h + cw * ch; strides[2] = Int32(cw)
                case .nv12:
                    planes[0] = bytes; strides[0] = Int32(w)
                    planes[1] = bytes + w * h; strides[1] = Int32(cw * 2)
                }
                return body(UnsafePointer(planes.baseAddress!), UnsafePointer(strides.baseAddress!))
            }
        }
    }
}

/// Converts (and optionally scales) camera frames into an `AVFrame` with libswscale.
/// One context per (source format, destination format); created once, reused per frame.
final class PixelConverter {
    /// nil when source and destination layouts match: then a plain plane copy does.
    private let context: OpaquePointer?
    let source: VideoFormat

    /// - Throws: `MediaError.conversion` when libswscale has no path between the formats.
    init(source: VideoFormat, destinationSize: FrameSize, destinationFormat: AVPixelFormat,
         flags: Int32 = kc_sws_bicubic()) throws(MediaError) {
        self.source = source
        if destinationSize == source.size && destinationFormat == source.pixelFormat.avPixelFormat {
            context = nil
            return
        }
        guard let context = sws_getContext(
            Int32(source.size.width), Int32(source.size.height), source.pixelFormat.avPixelFormat,
            Int32(destinationSize.width), Int32(destinationSize.height), destinationFormat,
            flags, nil, nil, nil
        ) else {
            throw MediaError(.conversion, operation: "set up pixel conversion",
                             detail: "libswscale cannot convert \(source) to \(String(cString: av_get_pix_fmt_name(destinationFormat)))")
        }
        self.context = context
    }

    deinit { if let context { sws_freeContext(context) } }

    /// Converts one tightly packed frame into `frame` (which must already have buffers).
    func convert(_ pixels: UnsafeRawPointer, into frame: UnsafeMutablePointer<AVFrame>) {
        source.pixelFormat.withPlanes(pixels, source.size) { planes, strides in
            withUnsafeMutablePointer(to: &frame.pointee.data) { data in
                withUnsafeMutablePointer(to: &frame.pointee.linesize) { linesize in
                    data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { dst in
                        linesize.withMemoryRebound(to: Int32.self, capacity: 8) { dstStride in
                            if let context {
                                _ = sws_scale(context, planes, strides, 0, Int32(source.size.height), dst, dstStride)
                            } else {
                                av_image_copy(dst, dstStride, UnsafeMutablePointer(mutating: planes), strides,
                                              source.pixelFormat.avPixelFormat, Int32(source.size.width), Int32(source.size.height))
                            }
                        }
                    }
                }
            }
        }
    }
}
