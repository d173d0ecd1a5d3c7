import CAVCodec
import CAVUtil
import KioskCore

/// Encodes single camera frames as JPEG stills with libavcodec's MJPEG encoder.
/// Made once per source format and reused, so a snapshot costs one conversion and
/// one encode.
public final class JPEGEncoder {
    private let codec: CodecContext
    private let picture: Frame
    private let packet: Packet
    private let converter: PixelConverter
    public let input: VideoFormat
    /// How the camera is mounted: the still's pixels are turned to stand upright.
    public let orientation: PictureOrientation
    /// The camera's picture before it is turned; nil when it needs no turning.
    private let unturned: Frame?
    /// The encoder refuses a frame whose pts is not after the last one ("Invalid pts"),
    /// so each still gets the next number.
    private var nextPTS: Int64 = 0

    /// - Parameters:
    ///   - input: The camera frames' format.
    ///   - quality: 1 (smallest) to 100 (best).
    ///   - orientation: How the camera is mounted; the JPEG is turned upright (its size
    ///     swaps for 90 and 270).
    /// - Throws: `MediaError` if the MJPEG encoder is missing or refuses the size.
    public init(input: VideoFormat, quality: Int, orientation: PictureOrientation = .upright) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.input = input
        self.orientation = orientation
        let size = orientation.turnedSize(input.size)
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else {
            throw MediaError(.encoderNotFound, operation: "open JPEG encoder", detail: "this FFmpeg build has no MJPEG encoder")
        }
        codec = try CodecContext(encoder, operation: "open JPEG encoder")
        let context = codec.pointer
        context.pointee.width = Int32(size.width)
        context.pointee.height = Int32(size.height)
        // Full-range 4:2:0, which every JPEG viewer expects.
        context.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        context.pointee.time_base = AVRational(num: 1, den: Int32(max(input.framesPerSecond, 1)))
        context.pointee.flags |= kc_av_codec_flag_qscale()
        // MJPEG's quantiser runs 2 (best) … 31 (worst).
        let qscale = 2 + (100 - min(max(quality, 1), 100)) * 29 / 99
        context.pointee.global_quality = Int32(qscale) * kc_ff_qp2lambda()
        context.pointee.qmin = Int32(qscale)
        context.pointee.qmax = Int32(qscale)
        try check(avcodec_open2(context, encoder, nil), .encoderRejectedSettings, "open JPEG encoder for \(size)")
        picture = try Frame.picture(size: size, format: AV_PIX_FMT_YUVJ420P, operation: "open JPEG encoder")
        unturned = orientation.isUpright ? nil
            : try Frame.picture(size: input.size, format: AV_PIX_FMT_YUVJ420P, operation: "open JPEG encoder")
        converter = try PixelConverter(source: input, destinationSize: input.size, destinationFormat: AV_PIX_FMT_YUVJ420P)
        packet = try Packet(operation: "open JPEG encoder")
    }

    /// Encodes one tightly packed frame.
    /// - Parameter drawing: Writes into the converted picture before it is turned (the
    ///   overlay, drawn in the camera's orientation as in the recording).
    /// - Returns: The JPEG file's bytes.
    /// - Throws: `MediaError` if the frame is short or the encoder fails.
    public func encode(_ pixels: UnsafeRawBufferPointer, drawing: ((PicturePlanes) -> Void)? = nil) throws(MediaError) -> [UInt8] {
        guard let base = pixels.baseAddress, pixels.count >= input.frameByteCount else {
            throw MediaError(.invalidInput, operation: "encode JPEG", detail: "frame has \(pixels.count) bytes, \(input) needs \(input.frameByteCount)")
        }
        let picture = picture.pointer, packet = packet.pointer, context = codec.pointer
        try check(av_frame_make_writable(picture), .encoderRejectedSettings, "prepare JPEG frame")
        if let unturned {
            converter.convert(base, into: unturned.pointer)
            if let drawing, let planes = PicturePlanes(frame: unturned.pointer) { drawing(planes) }
            try turn(unturned.pointer, into: picture)
        } else {
            converter.convert(base, into: picture)
            if let drawing, let planes = PicturePlanes(frame: picture) { drawing(planes) }
        }
        picture.pointee.pts = nextPTS
        nextPTS += 1
        picture.pointee.quality = context.pointee.global_quality
        try check(avcodec_send_frame(context, picture), .encoderRejectedSettings, "encode JPEG")
        try check(avcodec_receive_packet(context, packet), .encoderRejectedSettings, "encode JPEG")
        defer { av_packet_unref(packet) }
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }

    /// Turns the three planes of a 4:2:0 picture into `target` (of the turned size).
    /// - Throws: `MediaError.conversion` when a plane is missing (it never is for pictures
    ///   made by `Frame.picture`).
    private func turn(_ source: UnsafeMutablePointer<AVFrame>, into target: UnsafeMutablePointer<AVFrame>) throws(MediaError) {
        let width = Int(source.pointee.width), height = Int(source.pointee.height)
        let planes = [(source.pointee.data.0, source.pointee.linesize.0, target.pointee.data.0, target.pointee.linesize.0, 1),
                      (source.pointee.data.1, source.pointee.linesize.1, target.pointee.data.1, target.pointee.linesize.1, 2),
                      (source.pointee.data.2, source.pointee.linesize.2, target.pointee.data.2, target.pointee.linesize.2, 2)]
        for (from, fromStride, to, toStride, step) in planes {
            let planeWidth = (width + step - 1) / step, planeHeight = (height + step - 1) / step
            let turned = orientation.turnedSize(FrameSize(width: planeWidth, height: planeHeight))
            guard let from, let to, fromStride > 0, toStride > 0,
                  orientation.turn(plane: UnsafeRawBufferPointer(start: from, count: Int(fromStride) * planeHeight),
                                   width: planeWidth, height: planeHeight, sourceStride: Int(fromStride),
                                   into: UnsafeMutableRawBufferPointer(start: to, count: Int(toStride) * turned.height),
                                   destinationStride: Int(toStride)) else {
                throw MediaError(.conversion, operation: "turn the still", detail: "a picture plane is missing or too small")
            }
        }
    }
}
