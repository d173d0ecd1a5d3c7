import CAVCodec
import CAVUtil
import KioskCore

/// What the video track is made from and how it is encoded.
public struct VideoTrackSettings: Sendable, Equatable {
    public var input: VideoFormat
    /// libavcodec encoder name (`libx264`, `h264_v4l2m2m`, …).
    public var codecName: String
    public var bitrate: Int
    public var keyframeInterval: Int
    /// libx264 preset; ignored by encoders without one.
    public var preset: String
    /// 0 lets the encoder choose.
    public var threads: Int

    public init(input: VideoFormat, codecName: String = "libx264", bitrate: Int? = nil,
                keyframeInterval: Int = EncodingPolicy.maximumKeyframeInterval,
                preset: String = "veryfast", threads: Int = 0) {
        self.input = input
        self.codecName = codecName
        self.bitrate = bitrate ?? EncodingPolicy.defaultBitrate(for: input.size)
        self.keyframeInterval = keyframeInterval
        self.preset = preset
        self.threads = threads
    }

    /// The time base of video timestamps: 1/90000 s, fine enough for any camera's
    /// real capture times (which are not exact multiples of 1/fps).
    static let timeBase = AVRational(num: 1, den: 90_000)
}

/// The H.264 encoders this FFmpeg build has, for "unknown encoder" messages.
public func availableH264Encoders() -> [String] {
    var names: [String] = []
    var state: UnsafeMutableRawPointer? = nil
    while let codec = av_codec_iterate(&state) {
        if av_codec_is_encoder(codec) != 0 && codec.pointee.id == AV_CODEC_ID_H264 {
            names.append(String(cString: codec.pointee.name))
        }
    }
    return names
}

/// One H.264 encoder and the converter that feeds it. Owns its codec context, one
/// reusable picture and one reusable packet: nothing is allocated per frame here.
final class VideoEncoder {
    private let codec: CodecContext
    private let picture: Frame
    private let packet: Packet
    private let converter: PixelConverter
    let settings: VideoTrackSettings
    var context: UnsafeMutablePointer<AVCodecContext> { codec.pointer }

    /// - Throws: `MediaError.encoderNotFound` (with the available H.264 encoders) or
    ///   `.encoderRejectedSettings` when the encoder refuses size, rate or options.
    init(settings: VideoTrackSettings, globalHeader: Bool) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.settings = settings
        guard let encoder = avcodec_find_encoder_by_name(settings.codecName), encoder.pointee.type == AVMEDIA_TYPE_VIDEO else {
            let names = availableH264Encoders()
            throw MediaError(.encoderNotFound, operation: "open video encoder",
                             detail: "no video encoder named \"\(settings.codecName)\" in this FFmpeg build",
                             hint: "Set encoder.video_codec to one of: \(names.joined(separator: ", "))")
        }
        codec = try CodecContext(encoder, operation: "open video encoder")
        let context = codec.pointer
        let input = settings.input
        let pixelFormat = Self.choosePixelFormat(encoder, for: input.pixelFormat)
        context.pointee.width = Int32(input.size.width)
        context.pointee.height = Int32(input.size.height)
        context.pointee.pix_fmt = pixelFormat
        context.pointee.time_base = VideoTrackSettings.timeBase
        context.pointee.framerate = AVRational(num: Int32(input.framesPerSecond), den: 1)
        context.pointee.bit_rate = Int64(settings.bitrate)
        context.pointee.gop_size = Int32(settings.keyframeInterval)
        // No B-frames: lower latency, simpler timestamps, and hardware encoders lack them.
        context.pointee.max_b_frames = 0
        context.pointee.thread_count = Int32(settings.threads)
        if globalHeader { context.pointee.flags |= kc_av_codec_flag_global_header() }

        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        if settings.codecName.hasPrefix("libx264") {
            av_dict_set(&options, "preset", settings.preset, 0)
            // A forced keyframe (segment start) must be an IDR so the file can begin there.
            av_dict_set(&options, "forced-idr", "1", 0)
        }
        let opened = avcodec_open2(context, encoder, &options)
        if opened < 0 {
            throw MediaError(.encoderRejectedSettings, operation: "open video encoder \(settings.codecName)",
                             averror: opened,
                             detail: "it refused \(input.size) at \(input.framesPerSecond) fps, \(settings.bitrate / 1000) kbit/s (\(MediaError.describe(opened)))",
                             hint: "Try another camera.size/camera.fps or encoder.video_codec")
        }
        picture = try Frame.picture(size: input.size, format: pixelFormat, operation: "open video encoder")
        converter = try PixelConverter(source: input, destinationSize: input.size, destinationFormat: pixelFormat)
        packet = try Packet(operation: "open video encoder")
    }

    /// The encoder's own pixel format when it takes the camera's layout directly
    /// (NV12/YU12 need no conversion), else planar 4:2:0.
    private static func choosePixelFormat(_ encoder: UnsafePointer<AVCodec>, for input: PixelFormat) -> AVPixelFormat {
        guard var formats = encoder.pointee.pix_fmts else { return AV_PIX_FMT_YUV420P }
        var supported: [AVPixelFormat] = []
        while formats.pointee != AV_PIX_FMT_NONE {
            supported.append(formats.pointee)
            formats += 1
        }
        if supported.contains(input.avPixelFormat) { return input.avPixelFormat }
        if supported.contains(AV_PIX_FMT_YUV420P) { return AV_PIX_FMT_YUV420P }
        if supported.contains(AV_PIX_FMT_NV12) { return AV_PIX_FMT_NV12 }
        return supported.first ?? AV_PIX_FMT_YUV420P
    }

    /// Encodes one frame and hands every finished packet to `emit`.
    /// - Parameters:
    ///   - pixels: A tightly packed frame in `settings.input` layout.
    ///   - pts: Presentation time in `VideoTrackSettings.timeBase` units.
    ///   - forceKeyframe: Start a new GOP here (first frame of a segment).
    func encode(_ pixels: UnsafeRawPointer, pts: Int64, forceKeyframe: Bool,
                emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        let picture = picture.pointer
        // The encoder may still reference the last picture; only then does this copy.
        try check(av_frame_make_writable(picture), .encoderRejectedSettings, "prepare video frame")
        converter.convert(pixels, into: picture)
        picture.pointee.pts = pts
        picture.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        try check(avcodec_send_frame(context, picture), .encoderRejectedSettings, "encode video frame")
        try codec.receivePackets(into: packet, operation: "receive video packet", emit: emit)
    }

    /// Drains the encoder at the end of a segment.
    func flush(emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        try codec.sendFlush(operation: "flush video encoder")
        try codec.receivePackets(into: packet, operation: "receive video packet", emit: emit)
    }
}
