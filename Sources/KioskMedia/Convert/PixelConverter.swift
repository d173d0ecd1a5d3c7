import CAVUtil
import CSwScale
import KioskCore

/// Converts (and optionally scales) camera frames with libswscale, from any `PixelFormat`
/// into an FFmpeg pixel format: the encoder's 4:2:0, a still's yuvj420p, the preview's BGRA.
/// One context per (source format, destination format), created once and reused for every
/// frame; nothing is allocated per frame.
package final class PixelConverter {
    /// nil when source and destination are the same layout and size: then a plane copy does.
    private let context: OpaquePointer?
    /// When the conversion takes two steps, the first (`context`) writes this picture at
    /// the source size and `finalContext` goes on from it: Bayer is demosaiced to RGB24
    /// first; VYUY into a destination without separate U and V planes (BGRA, NV12) goes
    /// to yuv422p first, where U and V are exchanged back.
    private let intermediate: Frame?
    private let finalContext: OpaquePointer?
    private let reading: SwscaleReading
    package let source: VideoFormat

    /// - Parameters:
    ///   - source: The frames' size and layout.
    ///   - destinationSize: The size to scale to.
    ///   - destinationFormat: The FFmpeg pixel format to write.
    ///   - flags: libswscale's scaling algorithm (`SWS_BICUBIC` unless said otherwise).
    /// - Throws: `MediaError.conversion` when libswscale has no path between the formats.
    package init(source: VideoFormat, destinationSize: FrameSize, destinationFormat: AVPixelFormat,
                 flags: Int32 = kc_sws_bicubic()) throws(MediaError) {
        self.source = source
        let reading = source.pixelFormat.swscaleReading
        self.reading = reading
        func makeContext(_ from: AVPixelFormat, _ to: AVPixelFormat, _ size: FrameSize) throws(MediaError) -> OpaquePointer {
            guard let context = sws_getContext(
                Int32(source.size.width), Int32(source.size.height), from,
                Int32(size.width), Int32(size.height), to, flags, nil, nil, nil
            ) else {
                throw MediaError(.conversion, operation: "set up pixel conversion",
                                 detail: "libswscale cannot convert \(source) (read as \(from.name)) to \(size) \(to.name)")
            }
            return context
        }
        let halfway: AVPixelFormat?
        if reading.demosaicsFirst && destinationFormat != AV_PIX_FMT_RGB24 {
            halfway = AV_PIX_FMT_RGB24
        } else if reading.exchangesDestinationChroma && !destinationFormat.hasSeparateChromaPlanes {
            halfway = AV_PIX_FMT_YUV422P
        } else {
            halfway = nil
        }
        if let halfway {
            let intermediate = try Frame.picture(size: source.size, format: halfway, operation: "set up pixel conversion")
            let first = try makeContext(reading.format, halfway, source.size)
            do {
                finalContext = try makeContext(halfway, destinationFormat, destinationSize)
            } catch {
                sws_freeContext(first)
                throw error
            }
            context = first
            self.intermediate = intermediate
            return
        }
        intermediate = nil
        finalContext = nil
        if destinationSize == source.size && destinationFormat == reading.format && !reading.exchangesDestinationChroma {
            context = nil
        } else {
            context = try makeContext(reading.format, destinationFormat, destinationSize)
        }
    }

    deinit {
        if let context { sws_freeContext(context) }
        if let finalContext { sws_freeContext(finalContext) }
    }

    /// Converts one tightly packed frame into `frame` (which must already have buffers).
    func convert(_ pixels: UnsafeRawPointer, into frame: UnsafeMutablePointer<AVFrame>) {
        Self.withPlanes(of: frame) { planes, strides in convert(pixels, into: planes, strides: strides) }
    }

    /// Converts one frame into `target`, a tightly packed frame of `layout` (the layout
    /// whose FFmpeg format this converter writes) at the destination size: a pool buffer.
    /// - Parameter sourceRowBytes: The source's row pitch when its rows are padded (a
    ///   framebuffer's stride; single-plane layouts); nil when packed.
    package func convert(_ pixels: UnsafeRawPointer, sourceRowBytes: Int? = nil, intoPacked target: UnsafeMutableRawPointer,
                         layout: PixelFormat, size: FrameSize) {
        layout.withPlanes(UnsafeRawPointer(target), size) { planes, strides in
            withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { out in
                for plane in 0..<4 { out[plane] = planes[plane].map { UnsafeMutablePointer(mutating: $0) } }
                convert(pixels, sourceRowBytes: sourceRowBytes, into: UnsafePointer(out.baseAddress!), strides: strides)
            }
        }
    }

    /// Converts one tightly packed frame into the destination planes `planes`, rows
    /// `strides` bytes apart: four entries each, those the destination format does not
    /// use nil and 0.
    /// - Parameter sourceRowBytes: The source's row pitch when its rows are padded; nil when packed.
    package func convert(_ pixels: UnsafeRawPointer, sourceRowBytes: Int? = nil, into planes: UnsafePointer<UnsafeMutablePointer<UInt8>?>,
                         strides: UnsafePointer<Int32>) {
        let height = Int32(source.size.height)
        source.pixelFormat.withPlanes(pixels, source.size, firstRowBytes: sourceRowBytes) { sourcePlanes, sourceStrides in
            if let intermediate, let context, let finalContext {
                Self.withPlanes(of: intermediate.pointer) { halfway, halfwayStrides in
                    if reading.exchangesDestinationChroma {
                        Self.withChromaExchanged(halfway, halfwayStrides) { exchanged, exchangedStrides in
                            _ = sws_scale(context, sourcePlanes, sourceStrides, 0, height, exchanged, exchangedStrides)
                        }
                    } else {
                        _ = sws_scale(context, sourcePlanes, sourceStrides, 0, height, halfway, halfwayStrides)
                    }
                    let filled = UnsafeRawPointer(halfway).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
                    _ = sws_scale(finalContext, filled, halfwayStrides, 0, height, planes, strides)
                }
            } else if let context, reading.exchangesDestinationChroma {
                Self.withChromaExchanged(planes, strides) { exchanged, exchangedStrides in
                    _ = sws_scale(context, sourcePlanes, sourceStrides, 0, height, exchanged, exchangedStrides)
                }
            } else if let context {
                _ = sws_scale(context, sourcePlanes, sourceStrides, 0, height, planes, strides)
            } else {
                av_image_copy(UnsafeMutablePointer(mutating: planes), UnsafeMutablePointer(mutating: strides),
                              UnsafeMutablePointer(mutating: sourcePlanes), sourceStrides,
                              reading.format, Int32(source.size.width), height)
            }
        }
    }

    /// Calls `body` with an AVFrame's plane pointers and line sizes.
    private static func withPlanes<R>(of frame: UnsafeMutablePointer<AVFrame>,
                                      _ body: (UnsafePointer<UnsafeMutablePointer<UInt8>?>, UnsafePointer<Int32>) -> R) -> R {
        withUnsafeMutablePointer(to: &frame.pointee.data) { data in
            withUnsafeMutablePointer(to: &frame.pointee.linesize) { linesize in
                data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { planes in
                    linesize.withMemoryRebound(to: Int32.self, capacity: 8) { strides in body(planes, strides) }
                }
            }
        }
    }

    /// Calls `body` with copies of the first four plane pointers and strides, planes 1 and
    /// 2 (U and V) exchanged — on the stack, as this runs once per frame.
    private static func withChromaExchanged<R>(
        _ planes: UnsafePointer<UnsafeMutablePointer<UInt8>?>, _ strides: UnsafePointer<Int32>,
        _ body: (UnsafePointer<UnsafeMutablePointer<UInt8>?>, UnsafePointer<Int32>) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { exchanged in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4) { exchangedStrides in
                for index in 0..<4 {
                    let from = index == 1 ? 2 : index == 2 ? 1 : index
                    exchanged.initializeElement(at: index, to: planes[from])
                    exchangedStrides.initializeElement(at: index, to: strides[from])
                }
                return body(UnsafePointer(exchanged.baseAddress!), UnsafePointer(exchangedStrides.baseAddress!))
            }
        }
    }
}
