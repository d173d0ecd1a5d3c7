import Foundation
import CAVCodec
import CAVUtil
import CSwScale
import Glibc
import KioskCore

/// The encoder seam: one H.264 encode that every output of the graph shares.
///
/// Three implementations, chosen by name (`encoder.video_codec`): libx264, any other
/// libavcodec encoder — a board's hardware one such as `h264_v4l2m2m` — and `null`,
/// which makes well-formed stand-in packets so the whole graph runs in unit tests
/// without spending a core on encoding. `auto` takes the hardware encoder where it
/// exists and opens, else libx264 (`VideoEncoders.open`).
public protocol VideoEncoding: AnyObject {
    /// The encoder's libavcodec name ("libx264", "h264_v4l2m2m") or "null".
    var name: String { get }
    var settings: VideoTrackSettings { get }
    /// For muxers. H.264 encoders run without a global header (so every IDR carries its
    /// SPS/PPS in-band, which streams and the pre-event ring need); the extradata is
    /// taken from the first keyframe, so it is empty until one was encoded.
    var parameters: StreamParameters { get }
    /// Encodes a frame the graph shares; frames in the encoder's own layout are taken by
    /// reference (no copy), others are converted once.
    /// - Parameters:
    ///   - forceKeyframe: Start a GOP (an IDR) with this frame.
    ///   - emit: Gets every packet that is ready (the encoder may hold some back).
    func encode(_ frame: VideoFrame, forceKeyframe: Bool, emit: (EncodedPacket) -> Void) throws(MediaError)
    /// Encodes a frame after `drawing` wrote into the encoder's own copy of it (the
    /// overlay): the shared frame is never written, so it is always converted or copied.
    func encode(_ frame: VideoFrame, forceKeyframe: Bool, drawing: (PicturePlanes) -> Void,
                emit: (EncodedPacket) -> Void) throws(MediaError)
    /// Drains what the encoder holds back (end of input).
    func flush(emit: (EncodedPacket) -> Void) throws(MediaError)
}

extension VideoEncoding {
    /// An encoder that reads no pixels (the stand-in) has nothing to draw into.
    public func encode(_ frame: VideoFrame, forceKeyframe: Bool, drawing: (PicturePlanes) -> Void,
                       emit: (EncodedPacket) -> Void) throws(MediaError) {
        try encode(frame, forceKeyframe: forceKeyframe, emit: emit)
    }
}

/// Opening encoders by name.
public enum VideoEncoders {
    /// The hardware encoders tried, in order, for `auto`.
    public static let hardwareCandidates = ["h264_v4l2m2m"]

    /// Whether a V4L2 memory-to-memory encoder seems to exist: a video4linux node whose
    /// name says "enc" (bcm2835-codec-encode on a Raspberry Pi, rkvenc, s5p-mfc-enc,
    /// qcom-venus-encoder, mtk-vcodec-enc …). Reads sysfs only; opens no device.
    static func hasV4L2EncoderNode(sysfs: String = "/sys/class/video4linux") -> Bool {
        guard let nodes = try? FileManager.default.contentsOfDirectory(atPath: sysfs) else { return false }
        return nodes.contains { node in
            guard let name = try? String(contentsOfFile: "\(sysfs)/\(node)/name", encoding: .utf8) else { return false }
            return name.lowercased().contains("enc")
        }
    }

    /// Opens the encoder `settings.codecName` names: "auto" tries each hardware encoder
    /// and falls back to libx264; "null" is the stand-in.
    /// - Returns: The encoder, and one line saying which was chosen and why (for the log).
    /// - Throws: `MediaError` when the named encoder does not exist or refuses the settings.
    public static func open(_ settings: VideoTrackSettings) throws(MediaError) -> (encoder: any VideoEncoding, reason: String) {
        switch settings.codecName {
        case "null":
            return (try NullVideoEncoder(settings: settings), "null: stand-in packets (tests)")
        case "auto":
            var notes: [String] = []
            for name in hardwareCandidates {
                guard avcodec_find_encoder_by_name(name) != nil else {
                    notes.append("\(name) is not in this FFmpeg build")
                    continue
                }
                // libavcodec finds its device by opening every /dev/video* node, which can
                // take seconds where cameras stream (it runs on the encoder thread); the
                // kernel's node names say first whether a V4L2 encoder exists at all.
                if name.hasSuffix("_v4l2m2m"), !Self.hasV4L2EncoderNode() {
                    notes.append("\(name): no V4L2 encoder device (no /sys/class/video4linux node named like an encoder)")
                    continue
                }
                var hardware = settings
                hardware.codecName = name
                do {
                    let encoder = try LibavVideoEncoder(settings: hardware)
                    return (encoder, "\(name): the hardware encoder opened at \(settings.input.size) \(settings.input.framesPerSecond) fps")
                } catch {
                    notes.append("\(name) did not open (\(error.message))")
                }
            }
            var software = settings
            software.codecName = "libx264"
            let encoder = try LibavVideoEncoder(settings: software)
            return (encoder, "libx264: no hardware encoder works here (\(notes.joined(separator: "; ")))")
        default:
            return (try LibavVideoEncoder(settings: settings), "\(settings.codecName): as configured")
        }
    }
}

/// A libavcodec H.264 encoder (libx264 or a hardware one) and the converter that feeds
/// it frames of another layout. Owns its codec context, one reusable picture and one
/// reusable packet.
public final class LibavVideoEncoder: VideoEncoding {
    public let settings: VideoTrackSettings
    public let parameters: StreamParameters
    public var name: String { settings.codecName }
    private let codec: CodecContext
    private let picture: Frame
    /// For frames taken by reference: filled with the frame's planes, then unreferenced.
    private let borrowed: Frame
    private let packet: Packet
    private var converter: PixelConverter?
    private let encoderFormat: AVPixelFormat
    /// The first frame's capture time: pts 0.
    private var epoch: MonotonicInstant?
    private var lastPTS: Int64 = -1
    /// Capture times of frames in the encoder, by pts (an encoder may hold several).
    private var pending: [Int64: MonotonicInstant] = [:]
    /// SPS+PPS (Annex B) from the first keyframe: the header's extradata, and put in
    /// front of any later keyframe that comes without them.
    private var parameterSets: [UInt8]?
    /// Keyframes that needed the SPS/PPS put back in front (an encoder that emits them
    /// only once, as the Raspberry Pi 4's does).
    public private(set) var parameterSetsRepeated = 0

    /// - Throws: `MediaError.encoderNotFound` (listing the H.264 encoders there are) or
    ///   `.encoderRejectedSettings`.
    public init(settings: VideoTrackSettings) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.settings = settings
        guard let encoder = avcodec_find_encoder_by_name(settings.codecName), encoder.pointee.type == AVMEDIA_TYPE_VIDEO else {
            let names = availableH264Encoders()
            throw MediaError(.encoderNotFound, operation: "open video encoder",
                             detail: "no video encoder named \"\(settings.codecName)\" in this FFmpeg build",
                             hint: "Set encoder.video_codec to auto, null or one of: \(names.joined(separator: ", "))")
        }
        codec = try CodecContext(encoder, operation: "open video encoder")
        let context = codec.pointer
        let input = settings.input
        encoderFormat = Self.choosePixelFormat(encoder, for: input.pixelFormat)
        context.pointee.width = Int32(input.size.width)
        context.pointee.height = Int32(input.size.height)
        context.pointee.pix_fmt = encoderFormat
        context.pointee.time_base = VideoTrackSettings.timeBase
        context.pointee.framerate = AVRational(num: Int32(input.framesPerSecond), den: 1)
        context.pointee.bit_rate = Int64(settings.bitrate)
        let cap = EncodingPolicy.rateCap(bitrate: settings.bitrate)
        context.pointee.rc_max_rate = Int64(cap.maximumRate)
        context.pointee.rc_buffer_size = Int32(clamping: cap.bufferBits)
        context.pointee.gop_size = Int32(settings.keyframeInterval)
        // No B-frames: lower latency, simpler timestamps, and hardware encoders lack them.
        context.pointee.max_b_frames = 0
        context.pointee.thread_count = Int32(settings.threads)

        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        if settings.codecName.hasPrefix("libx264") {
            av_dict_set(&options, "preset", settings.preset, 0)
            if !settings.tune.isEmpty { av_dict_set(&options, "tune", settings.tune, 0) }
            // A forced keyframe (segment start, recording start) must be an IDR so a file can begin there.
            av_dict_set(&options, "forced-idr", "1", 0)
            if !settings.profile.isEmpty { av_dict_set(&options, "profile", settings.profile, 0) }
            if !settings.x264Parameters.isEmpty { av_dict_set(&options, "x264-params", settings.x264Parameters, 0) }
        }
        let opened = avcodec_open2(context, encoder, &options)
        if opened < 0 {
            throw MediaError(.encoderRejectedSettings, operation: "open video encoder \(settings.codecName)",
                             averror: opened,
                             detail: "it refused \(input.size) at \(input.framesPerSecond) fps, \(settings.bitrate / 1000) kbit/s",
                             hint: "Try another camera.size/camera.fps or encoder.video_codec")
        }
        guard let parameters = StreamParameters(context: context, media: .video, framesPerSecond: input.framesPerSecond,
                                                orientation: settings.orientation) else {
            throw MediaError(.encoderRejectedSettings, operation: "open video encoder", detail: "out of memory")
        }
        self.parameters = parameters
        picture = try Frame.picture(size: input.size, format: encoderFormat, operation: "open video encoder")
        borrowed = try Frame(operation: "open video encoder")
        packet = try Packet(operation: "open video encoder")
    }

    /// The camera's layout when the encoder takes it as it is and it is 8-bit 4:2:0
    /// (YU12, NV12, and YV12/NV16 as libswscale reads them; NV21 for libx264), else planar
    /// 4:2:0 (converted by `PixelConverter`).
    ///
    /// libx264 also takes yuv422p, nv16 and gray directly, but those make High 4:2:2 and
    /// 4:0:0 streams that browsers, phones and hardware decoders often cannot play: the
    /// recording stays 4:2:0 so that every file plays everywhere.
    static func choosePixelFormat(_ encoder: UnsafePointer<AVCodec>, for input: PixelFormat) -> AVPixelFormat {
        guard var formats = encoder.pointee.pix_fmts else { return AV_PIX_FMT_YUV420P }
        var supported: [AVPixelFormat] = []
        while formats.pointee != AV_PIX_FMT_NONE {
            supported.append(formats.pointee)
            formats += 1
        }
        let fourTwoZero = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_NV12, AV_PIX_FMT_NV21]
        if let direct = input.directFormat, fourTwoZero.contains(direct), supported.contains(direct) {
            return direct
        }
        return fourTwoZero.first { supported.contains($0) } ?? supported.first ?? AV_PIX_FMT_YUV420P
    }

    /// Whether frames of `format` go to the encoder as they are.
    public func takesByReference(_ format: VideoFormat) -> Bool {
        format.size == settings.input.size && format.pixelFormat.directFormat == encoderFormat
    }

    public func encode(_ frame: VideoFrame, forceKeyframe: Bool, emit: (EncodedPacket) -> Void) throws(MediaError) {
        let pts = nextPTS(frame.timestamp)
        if takesByReference(frame.format), frame.buffer.byteCount >= frame.format.frameByteCount {
            try encodeBorrowed(frame, pts: pts, forceKeyframe: forceKeyframe, emit: emit)
        } else {
            try encodeConverted(frame.buffer.bytes, format: frame.format, pts: pts, forceKeyframe: forceKeyframe, emit: emit)
        }
    }

    public func encode(_ frame: VideoFrame, forceKeyframe: Bool, drawing: (PicturePlanes) -> Void,
                       emit: (EncodedPacket) -> Void) throws(MediaError) {
        guard frame.buffer.byteCount >= frame.format.frameByteCount else {
            throw MediaError(.invalidInput, operation: "encode video frame",
                             detail: "frame has \(frame.buffer.byteCount) bytes, \(frame.format) needs \(frame.format.frameByteCount)")
        }
        let pts = nextPTS(frame.timestamp)
        try withoutActuallyEscaping(drawing) { drawing throws(MediaError) in
            try encodeConverted(frame.buffer.bytes, format: frame.format, pts: pts, forceKeyframe: forceKeyframe,
                                drawing: drawing, emit: emit)
        }
    }

    /// Encodes a frame in memory the caller keeps only for the call: always converted or
    /// copied into the encoder's own picture, never referenced.
    public func encode(copying pixels: UnsafeRawBufferPointer, format: VideoFormat, time: MonotonicInstant, forceKeyframe: Bool,
                       emit: (EncodedPacket) -> Void) throws(MediaError) {
        guard pixels.count >= format.frameByteCount else {
            throw MediaError(.invalidInput, operation: "encode video frame",
                             detail: "frame has \(pixels.count) bytes, \(format) needs \(format.frameByteCount)")
        }
        try encodeConverted(pixels, format: format, pts: nextPTS(time), forceKeyframe: forceKeyframe, emit: emit)
    }

    public func flush(emit: (EncodedPacket) -> Void) throws(MediaError) {
        try codec.sendFlush(operation: "flush video encoder")
        try receive(emit)
    }

    /// Strictly rising pts in 1/90000 s from the first frame; a repeated time is nudged.
    private func nextPTS(_ time: MonotonicInstant) -> Int64 {
        let start = epoch ?? time
        epoch = start
        let sinceStart = max(0, time.nanoseconds(since: start))
        let pts = max((sinceStart / 100_000) * 9 + (sinceStart % 100_000 * 9 + 50_000) / 100_000, lastPTS + 1)
        lastPTS = pts
        pending[pts] = time
        return pts
    }

    /// The frame's planes handed to the encoder as they are: libavcodec takes a reference
    /// to our buffer (released through `releaseBorrowedBuffer`), so no byte is copied here.
    private func encodeBorrowed(_ frame: VideoFrame, pts: Int64, forceKeyframe: Bool, emit: (EncodedPacket) -> Void) throws(MediaError) {
        let target = borrowed.pointer
        let buffer = frame.buffer
        let opaque = Unmanaged.passRetained(buffer).toOpaque()
        guard let reference = av_buffer_create(buffer.baseAddress.assumingMemoryBound(to: UInt8.self), buffer.byteCount,
                                               releaseBorrowedBuffer, opaque, Int32(AV_BUFFER_FLAG_READONLY)) else {
            Unmanaged<MediaBuffer>.fromOpaque(opaque).release()
            throw MediaError(.encoderRejectedSettings, operation: "encode video frame", detail: "out of memory")
        }
        defer { av_frame_unref(target) }
        target.pointee.buf.0 = reference
        target.pointee.width = Int32(frame.format.size.width)
        target.pointee.height = Int32(frame.format.size.height)
        target.pointee.format = encoderFormat.rawValue
        frame.format.pixelFormat.withPlanes(buffer.baseAddress, frame.format.size) { planes, strides in
            withUnsafeMutablePointer(to: &target.pointee.data) { data in
                withUnsafeMutablePointer(to: &target.pointee.linesize) { linesize in
                    data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { dst in
                        linesize.withMemoryRebound(to: Int32.self, capacity: 8) { dstStride in
                            for plane in 0..<4 {
                                dst[plane] = planes[plane].map { UnsafeMutablePointer(mutating: $0) }
                                dstStride[plane] = strides[plane]
                            }
                        }
                    }
                }
            }
        }
        try send(target, pts: pts, forceKeyframe: forceKeyframe, emit: emit)
    }

    private func encodeConverted(_ pixels: UnsafeRawBufferPointer, format: VideoFormat, pts: Int64, forceKeyframe: Bool,
                                 drawing: ((PicturePlanes) -> Void)? = nil, emit: (EncodedPacket) -> Void) throws(MediaError) {
        guard let base = pixels.baseAddress else { return }
        if converter?.source != format {
            // RGB sources (the screen, RGB cameras): chroma from every pixel with swscale's SIMD
            // readers, not its C-only pair average: 6 % less CPU for a screen broadcast
            // (scripts/bench-broadcast). Ignored for YUV sources.
            converter = try PixelConverter(source: format, destinationSize: settings.input.size, destinationFormat: encoderFormat,
                                           flags: kc_sws_bicubic() | kc_sws_full_chroma_input())
        }
        let picture = picture.pointer
        // The encoder may still reference the last picture; only then does this copy.
        try check(av_frame_make_writable(picture), .encoderRejectedSettings, "prepare video frame")
        converter?.convert(base, into: picture)
        if format.pixelFormat.directFormat == encoderFormat && format.size == settings.input.size {
            MediaStatistics.shared.countCopy(bytes: format.frameByteCount)
        }
        if let drawing, let planes = PicturePlanes(frame: picture) { drawing(planes) }
        try send(picture, pts: pts, forceKeyframe: forceKeyframe, emit: emit)
    }

    private func send(_ picture: UnsafeMutablePointer<AVFrame>, pts: Int64, forceKeyframe: Bool,
                      emit: (EncodedPacket) -> Void) throws(MediaError) {
        picture.pointee.pts = pts
        picture.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        try check(avcodec_send_frame(codec.pointer, picture), .encoderRejectedSettings, "encode video frame")
        try receive(emit)
    }

    private func receive(_ emit: (EncodedPacket) -> Void) throws(MediaError) {
        let frameNanoseconds = settings.input.frameDurationNanoseconds
        try codec.receivePackets(into: packet, operation: "receive video packet") { raw throws(MediaError) in
            let pts = raw.pointee.pts
            let time = pending.removeValue(forKey: pts)
                ?? epoch.map { $0.advanced(byNanoseconds: max(0, pts) / 9 * 100_000) } ?? MonotonicInstant(nanoseconds: 0)
            guard var encoded = EncodedPacket(movingFrom: raw, media: .video, time: time, durationNanoseconds: frameNanoseconds) else {
                throw MediaError(.encoderRejectedSettings, operation: "receive video packet", detail: "out of memory")
            }
            if encoded.isKeyframe { encoded = completeParameterSets(encoded) }
            emit(encoded)
        }
        // Frames the encoder dropped never come back: forget times older than a second.
        if pending.count > 64, let newest = pending.keys.max() {
            pending = pending.filter { newest - $0.key < 90_000 }
        }
    }

    /// Takes the SPS/PPS from the first keyframe into the parameters, and puts them in
    /// front of a later keyframe that lacks them.
    private func completeParameterSets(_ packet: EncodedPacket) -> EncodedPacket {
        if parameterSets == nil, let found = H264AnnexB.parameterSets(in: packet.data) {
            parameterSets = found
            if !parameters.hasExtradata { parameters.setExtradata(found) }
        }
        guard let parameterSets, !H264AnnexB.containsParameterSets(packet.data) else { return packet }
        parameterSetsRepeated += 1
        return packet.prefixed(with: parameterSets) ?? packet
    }
}

/// libavcodec is done with a frame we lent it: our reference to its buffer goes.
private let releaseBorrowedBuffer: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?) -> Void = { opaque, _ in
    guard let opaque else { return }
    Unmanaged<MediaBuffer>.fromOpaque(opaque).release()
}

extension StreamParameters {
    /// Parameters for the null encoder's stream: H.264 of the configured size, with its
    /// fixed SPS/PPS as extradata.
    convenience init?(nullVideo settings: VideoTrackSettings) {
        guard let context = avcodec_alloc_context3(nil) else { return nil }
        defer {
            var doomed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&doomed)
        }
        context.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        context.pointee.codec_id = AV_CODEC_ID_H264
        context.pointee.width = Int32(settings.input.size.width)
        context.pointee.height = Int32(settings.input.size.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.time_base = VideoTrackSettings.timeBase
        self.init(context: context, media: .video, framesPerSecond: settings.input.framesPerSecond, orientation: settings.orientation)
        setExtradata([0, 0, 0, 1] + NullVideoEncoder.sps + [0, 0, 0, 1] + NullVideoEncoder.pps)
    }
}
