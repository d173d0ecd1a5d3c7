import CAVUtil
import CSwScale
import KioskCore

/// Digital zoom: the centre of a frame cut out and scaled back to the frame's size, in
/// the same layout, with libswscale — for cameras without a zoom control. One converter
/// per frame format; the scaling context is cached and remade only when the crop size
/// changes (during a zoom ramp).
public final class FrameCropScaler {
    public let format: VideoFormat
    private var context: OpaquePointer?
    private var contextCrop: FrameSize?

    public init(format: VideoFormat) {
        self.format = format
    }

    deinit { if let context { sws_freeContext(context) } }

    /// The centre rectangle that `zoom` (1 = whole frame) shows: even origin and size, so
    /// that every layout's chroma stays whole.
    public static func crop(for size: FrameSize, zoom: Double) -> (x: Int, y: Int, size: FrameSize) {
        let factor = zoom.isFinite ? max(1, zoom) : 1
        let width = max(2, Int((Double(size.width) / factor).rounded()) & ~1)
        let height = max(2, Int((Double(size.height) / factor).rounded()) & ~1)
        return (((size.width - width) / 2) & ~1, ((size.height - height) / 2) & ~1, FrameSize(width: width, height: height))
    }

    /// Writes `source` zoomed by `zoom` into `target` (a tightly packed frame of the same
    /// format).
    /// - Returns: Whether a picture was written.
    public func zoom(_ source: UnsafeRawPointer, by zoom: Double, into target: UnsafeMutableRawPointer) -> Bool {
        let (x, y, crop) = Self.crop(for: format.size, zoom: zoom)
        // Cropped and scaled in the format libswscale reads the layout as, which keeps it
        // as it is on the way out (YV12's and VYUY's exchanged chroma stays exchanged).
        // Not for layouts read with a trick that only works one way (every other chroma
        // row of NV16) or that libswscale cannot write (Bayer).
        let reading = format.pixelFormat.swscaleReading
        guard !reading.demosaicsFirst, reading.chromaRowStep == 1 else { return false }
        let pixelFormat = reading.format
        guard let descriptor = av_pix_fmt_desc_get(pixelFormat) else { return false }
        if crop != contextCrop {
            context = sws_getCachedContext(context, Int32(crop.width), Int32(crop.height), pixelFormat,
                                           Int32(format.size.width), Int32(format.size.height), pixelFormat,
                                           kc_sws_bilinear(), nil, nil, nil)
            contextCrop = crop
        }
        guard let context else { return false }
        return format.pixelFormat.withPlanes(source, format.size) { planes, strides in
            format.pixelFormat.withPlanes(UnsafeRawPointer(target), format.size) { targetPlanes, targetStrides in
                withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 4) { cropped in
                    withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { out in
                        cropped.initialize(repeating: nil)
                        out.initialize(repeating: nil)
                        for plane in 0..<4 {
                            guard let base = planes[plane] else { continue }
                            cropped[plane] = base + Self.offset(plane: plane, x: x, y: y, stride: Int(strides[plane]), descriptor)
                            out[plane] = targetPlanes[plane].map { UnsafeMutablePointer(mutating: $0) }
                        }
                        let rows = sws_scale(context, UnsafePointer(cropped.baseAddress!), strides, 0, Int32(crop.height),
                                             out.baseAddress!, targetStrides)
                        return rows > 0
                    }
                }
            }
        }
    }

    /// Bytes from a plane's start to the pixel at (`x`, `y`) of the luma grid: the
    /// layout's own chroma subsampling and bytes per pixel, from FFmpeg's descriptor.
    private static func offset(plane: Int, x: Int, y: Int, stride: Int, _ descriptor: UnsafePointer<AVPixFmtDescriptor>) -> Int {
        let components = descriptor.pointee.comp
        let list = [components.0, components.1, components.2, components.3]
        guard let component = list.prefix(Int(descriptor.pointee.nb_components)).first(where: { Int($0.plane) == plane }) else { return 0 }
        let isChroma = plane > 0 && descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0
        let column = isChroma ? x >> Int(descriptor.pointee.log2_chroma_w) : x
        let row = isChroma ? y >> Int(descriptor.pointee.log2_chroma_h) : y
        return row * stride + column * Int(component.step)
    }
}
