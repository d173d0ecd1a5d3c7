import CAVCodec
import CAVUtil
import CSwScale
import KioskCore

/// Decodes a camera's MJPEG frames (libavcodec's MJPEG decoder) into tightly packed YU12
/// (`PixelFormat.yuv420`, limited range — what the encoder takes as is).
///
/// Made once per stream and reused: one codec context, one `AVPacket`, one `AVFrame`, one
/// `SwsContext` (rebuilt only if the JPEGs change layout), and the compressed bytes go
/// into a pooled, padded buffer. Two steps, so a camera can give its own buffer back
/// between them: `stage` copies the JPEG in, `decodeStaged` decodes it; `decode` does both.
///
/// Cameras now and then send a broken JPEG (a USB packet lost, a frame cut short): that is
/// `MediaError.invalidInput`, and the caller drops the frame and counts it.
public final class MJPEGDecoder {
    /// The frame size the camera was set to; a JPEG of any other size is rejected.
    public let size: FrameSize
    private let codec: CodecContext
    private let packetOwner: Packet
    private let pictureOwner: Frame
    private var context: UnsafeMutablePointer<AVCodecContext> { codec.pointer }
    private var packet: UnsafeMutablePointer<AVPacket> { packetOwner.pointer }
    private var picture: UnsafeMutablePointer<AVFrame> { pictureOwner.pointer }
    private var inputPool: OpaquePointer?
    private var inputPoolSize = 0
    private var scaler: OpaquePointer?
    private var scalerKey: (format: Int32, fullRange: Bool, width: Int32, height: Int32)?
    private var staged = false

    /// Bytes one decoded frame takes (`PixelFormat.yuv420.frameByteCount(size)`).
    public var outputByteCount: Int { PixelFormat.yuv420.frameByteCount(size) }

    /// - Parameters:
    ///   - size: The size the camera delivers.
    ///   - maximumFrameBytes: The largest JPEG expected (V4L2's `sizeimage`); larger ones
    ///     still work, at the cost of one reallocation.
    /// - Throws: `MediaError.encoderNotFound` if this FFmpeg has no MJPEG decoder.
    public init(size: FrameSize, maximumFrameBytes: Int = 0) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.size = size
        guard let decoder = avcodec_find_decoder(AV_CODEC_ID_MJPEG) else {
            throw MediaError(.encoderNotFound, operation: "open MJPEG decoder", detail: "this FFmpeg build has no MJPEG decoder")
        }
        codec = try CodecContext(decoder, operation: "open MJPEG decoder")
        // One thread: a frame in, the same frame out (frame threading would delay output).
        codec.pointer.pointee.thread_count = 1
        try check(avcodec_open2(codec.pointer, decoder, nil), .encoderRejectedSettings, "open MJPEG decoder")
        packetOwner = try Packet(operation: "open MJPEG decoder")
        pictureOwner = try Frame(operation: "open MJPEG decoder")
        if maximumFrameBytes > 0 { resizeInputPool(maximumFrameBytes) }
    }

    deinit {
        av_buffer_pool_uninit(&inputPool)
        if let scaler { sws_freeContext(scaler) }
    }

    /// Copies one JPEG into the decoder (padded as libavcodec requires), replacing any
    /// staged one. The caller's buffer is free again when this returns.
    /// - Throws: `MediaError.invalidInput` for an empty frame or one that is not JPEG
    ///   (no start-of-image marker).
    public func stage(_ jpeg: UnsafeRawBufferPointer) throws(MediaError) {
        av_packet_unref(packet)
        staged = false
        guard let base = jpeg.baseAddress, jpeg.count >= 4 else {
            throw MediaError(.invalidInput, operation: "decode MJPEG frame", detail: "the frame is empty (\(jpeg.count) bytes)")
        }
        guard jpeg[0] == 0xFF, jpeg[1] == 0xD8 else {
            throw MediaError(.invalidInput, operation: "decode MJPEG frame", detail: "the frame does not start with a JPEG marker")
        }
        guard Self.endsWithEndOfImage(jpeg) else {
            // libavcodec decodes a cut-off JPEG without complaint (the rest comes out
            // grey), so a frame the camera cut short is caught here.
            throw MediaError(.invalidInput, operation: "decode MJPEG frame",
                             detail: "the JPEG is cut short (no end-of-image marker)")
        }
        if jpeg.count > inputPoolSize { resizeInputPool(jpeg.count) }
        guard let pool = inputPool, let buffer = av_buffer_pool_get(pool), let data = buffer.pointee.data else {
            throw MediaError(.encoderRejectedSettings, operation: "decode MJPEG frame", detail: "out of memory")
        }
        data.update(from: base.assumingMemoryBound(to: UInt8.self), count: jpeg.count)
        // libavcodec reads up to 64 bytes past the end; zeros stop its bitstream reader.
        (data + jpeg.count).initialize(repeating: 0, count: Int(AV_INPUT_BUFFER_PADDING_SIZE))
        packet.pointee.buf = buffer
        packet.pointee.data = data
        packet.pointee.size = Int32(jpeg.count)
        staged = true
    }

    /// Decodes the staged JPEG into `destination` as tightly packed YU12.
    /// - Returns: Bytes written (`outputByteCount`).
    /// - Throws: `MediaError.invalidInput` for a corrupt or truncated JPEG, one of another
    ///   size, or when nothing is staged; `.invalidInput` too when `destination` is short.
    public func decodeStaged(into destination: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        guard staged else {
            throw MediaError(.invalidInput, operation: "decode MJPEG frame", detail: "no frame staged")
        }
        staged = false
        guard let output = destination.baseAddress, destination.count >= outputByteCount else {
            av_packet_unref(packet)
            throw MediaError(.invalidInput, operation: "decode MJPEG frame",
                             detail: "the output buffer has \(destination.count) bytes, \(size) YU12 needs \(outputByteCount)")
        }
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        try check(sent, .invalidInput, "decode MJPEG frame", hint: "the camera sent a broken JPEG")
        let received = avcodec_receive_frame(context, picture)
        if received == kc_averror_eagain() {
            throw MediaError(.invalidInput, operation: "decode MJPEG frame", detail: "the JPEG holds no picture")
        }
        try check(received, .invalidInput, "decode MJPEG frame", hint: "the camera sent a broken JPEG")
        defer { av_frame_unref(picture) }
        if picture.pointee.decode_error_flags != 0 || picture.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
            throw MediaError(.invalidInput, operation: "decode MJPEG frame",
                             detail: "the JPEG is damaged (decoder error flags \(picture.pointee.decode_error_flags))")
        }
        let width = picture.pointee.width, height = picture.pointee.height
        guard Int(width) == size.width, Int(height) == size.height else {
            throw MediaError(.invalidInput, operation: "decode MJPEG frame",
                             detail: "the JPEG is \(width)x\(height), the camera was set to \(size)")
        }
        let scaler = try scaler(for: picture.pointee)
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let bytes = output.assumingMemoryBound(to: UInt8.self)
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { planes in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4) { strides in
                planes.initialize(repeating: nil)
                strides.initialize(repeating: 0)
                planes[0] = bytes; strides[0] = Int32(w)
                planes[1] = bytes + w * h; strides[1] = Int32(cw)
                planes[2] = bytes + w * h + cw * ch; strides[2] = Int32(cw)
                withUnsafePointer(to: &picture.pointee.data) { data in
                    withUnsafePointer(to: &picture.pointee.linesize) { linesize in
                        data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { source in
                            linesize.withMemoryRebound(to: Int32.self, capacity: 8) { sourceStrides in
                                _ = sws_scale(scaler, source, sourceStrides, 0, height,
                                              planes.baseAddress, strides.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        return outputByteCount
    }

    /// Decodes one JPEG (`stage` then `decodeStaged`).
    /// - Returns: Bytes written to `destination` (`outputByteCount`).
    /// - Throws: `MediaError.invalidInput` for a broken frame (see `decodeStaged`).
    @discardableResult
    public func decode(_ jpeg: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        try stage(jpeg)
        return try decodeStaged(into: destination)
    }

    /// Whether the data ends with the EOI marker (FF D9), allowing zero padding after it
    /// (some cameras pad their payload).
    static func endsWithEndOfImage(_ jpeg: UnsafeRawBufferPointer) -> Bool {
        var end = jpeg.count
        while end > 2, jpeg[end - 1] == 0 { end -= 1 }
        return end >= 4 && jpeg[end - 2] == 0xFF && jpeg[end - 1] == 0xD9
    }

    private func resizeInputPool(_ bytes: Int) {
        // Buffers still held by libavcodec stay valid: uninit frees the pool once they return.
        av_buffer_pool_uninit(&inputPool)
        inputPoolSize = bytes
        inputPool = av_buffer_pool_init(bytes + Int(AV_INPUT_BUFFER_PADDING_SIZE), nil)
    }

    /// The conversion from the decoder's layout (usually full-range 4:2:2 or 4:2:0) to
    /// limited-range YU12, built once per layout.
    private func scaler(for frame: AVFrame) throws(MediaError) -> OpaquePointer {
        var format = AVPixelFormat(rawValue: frame.format)
        var fullRange = frame.color_range == AVCOL_RANGE_JPEG
        // The "J" formats are full-range aliases; naming the range explicitly avoids
        // swscale's deprecation warning on every stream.
        switch format {
        case AV_PIX_FMT_YUVJ420P: format = AV_PIX_FMT_YUV420P; fullRange = true
        case AV_PIX_FMT_YUVJ422P: format = AV_PIX_FMT_YUV422P; fullRange = true
        case AV_PIX_FMT_YUVJ444P: format = AV_PIX_FMT_YUV444P; fullRange = true
        case AV_PIX_FMT_YUVJ440P: format = AV_PIX_FMT_YUV440P; fullRange = true
        case AV_PIX_FMT_YUVJ411P: format = AV_PIX_FMT_YUV411P; fullRange = true
        default: break
        }
        // JPEG is full range by definition (JFIF), whatever the frame says.
        if format == AV_PIX_FMT_GRAY8 { fullRange = true }
        let key = (format: format.rawValue, fullRange: fullRange, width: frame.width, height: frame.height)
        if let scaler, let scalerKey, scalerKey == key { return scaler }
        if let scaler { sws_freeContext(scaler) }
        scaler = nil
        scalerKey = nil
        // The ranges must be set before the context is initialised: for 4:2:0 in and out,
        // swscale otherwise picks a plain plane copy and never maps the range.
        var context = sws_alloc_context()
        let options: [(String, Int64)] = [
            ("srcw", Int64(frame.width)), ("srch", Int64(frame.height)), ("src_format", Int64(format.rawValue)),
            ("dstw", Int64(frame.width)), ("dsth", Int64(frame.height)), ("dst_format", Int64(AV_PIX_FMT_YUV420P.rawValue)),
            ("sws_flags", Int64(kc_sws_bilinear())), ("src_range", fullRange ? 1 : 0), ("dst_range", 0),
        ]
        var configured = context != nil
        for (name, value) in options where configured {
            configured = av_opt_set_int(UnsafeMutableRawPointer(context), name, value, 0) >= 0
        }
        guard configured, let ready = context, sws_init_context(ready, nil, nil) >= 0 else {
            sws_freeContext(context)
            context = nil
            let name = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "format \(format.rawValue)"
            throw MediaError(.invalidInput, operation: "decode MJPEG frame",
                             detail: "libswscale cannot convert the camera's \(name) JPEG to yuv420p")
        }
        scaler = ready
        scalerKey = key
        return ready
    }
}
