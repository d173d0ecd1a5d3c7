import CAVCodec
import CAVUtil
import KioskCore

/// Encodes packed RGB pictures (RGB24 or RGBA) as PNG with libavcodec's PNG encoder.
/// Made once per size and reused.
public final class PNGEncoder {
    public let size: FrameSize
    public let layout: RGBPixelLayout
    private let codec: CodecContext
    private let picture: Frame
    private let packet: Packet

    /// - Parameters:
    ///   - size: The picture's size.
    ///   - layout: How the pixels handed to `encode` are laid out.
    /// - Throws: `MediaError.encoderNotFound` if this FFmpeg has no PNG encoder,
    ///   `.encoderRejectedSettings` for an empty or oversized picture.
    public init(size: FrameSize, layout: RGBPixelLayout = .rgb24) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.size = size
        self.layout = layout
        let operation = "open PNG encoder"
        guard size.width > 0, size.height > 0, size.width <= 32_768, size.height <= 32_768 else {
            throw MediaError(.encoderRejectedSettings, operation: operation, detail: "a \(size) picture cannot be a PNG")
        }
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw MediaError(.encoderNotFound, operation: operation, detail: "this FFmpeg build has no PNG encoder")
        }
        let format = layout == .rgb24 ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA
        codec = try CodecContext(encoder, operation: operation)
        let context = codec.pointer
        context.pointee.width = Int32(size.width)
        context.pointee.height = Int32(size.height)
        context.pointee.pix_fmt = format
        context.pointee.time_base = AVRational(num: 1, den: 1)
        // Per-row choice of PNG filter: several times smaller for flat-coloured pictures.
        try check(av_opt_set(context.pointee.priv_data, "pred", "mixed", 0), .encoderRejectedSettings, operation)
        try check(avcodec_open2(context, encoder, nil), .encoderRejectedSettings, "\(operation) for \(size)")
        picture = try Frame.picture(size: size, format: format, operation: operation)
        packet = try Packet(operation: operation)
    }

    /// Encodes one picture.
    /// - Parameter pixels: `size` pixels in `layout`, rows top to bottom, no padding.
    /// - Returns: The PNG file's bytes.
    /// - Throws: `MediaError.invalidInput` if `pixels` is short; `.encoderRejectedSettings`
    ///   if the encoder fails.
    public func encode(_ pixels: UnsafeRawBufferPointer) throws(MediaError) -> [UInt8] {
        let rowBytes = size.width * layout.bytesPerPixel
        guard let source = pixels.baseAddress, pixels.count >= rowBytes * size.height else {
            throw MediaError(.invalidInput, operation: "encode PNG",
                             detail: "the picture has \(pixels.count) bytes, \(size) \(layout) needs \(rowBytes * size.height)")
        }
        let picture = picture.pointer, context = codec.pointer
        try check(av_frame_make_writable(picture), .encoderRejectedSettings, "prepare PNG picture")
        guard let destination = picture.pointee.data.0 else {
            throw MediaError(.encoderRejectedSettings, operation: "prepare PNG picture", detail: "the picture has no buffer")
        }
        // libavutil pads rows to its alignment; ours are packed.
        let stride = Int(picture.pointee.linesize.0)
        for row in 0..<size.height {
            (destination + row * stride).update(from: (source + row * rowBytes).assumingMemoryBound(to: UInt8.self),
                                                count: rowBytes)
        }
        picture.pointee.pts = 0
        try check(avcodec_send_frame(context, picture), .encoderRejectedSettings, "encode PNG")
        try check(avcodec_receive_packet(context, packet.pointer), .encoderRejectedSettings, "encode PNG")
        defer { av_packet_unref(packet.pointer) }
        return Array(UnsafeBufferPointer(start: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size)))
    }

    /// Encodes one picture with a one-off encoder.
    /// - Throws: As `init` and `encode`.
    public static func encode(_ pixels: [UInt8], size: FrameSize, layout: RGBPixelLayout = .rgb24) throws(MediaError) -> [UInt8] {
        let encoder = try PNGEncoder(size: size, layout: layout)
        return try pixels.withUnsafeBufferPointer { (buffer) throws(MediaError) in try encoder.encode(UnsafeRawBufferPointer(buffer)) }
    }
}
