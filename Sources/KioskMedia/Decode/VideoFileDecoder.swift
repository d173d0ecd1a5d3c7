import CAVCodec
import CAVFormat
import CAVUtil
import CSwScale
import KioskCore

/// How `VideoFileDecoder` hands pictures on: tightly packed, rows top to bottom.
public enum DecodedPictureLayout: Sendable, Equatable {
    /// I420 (`PixelFormat.yuv420`): what the encoders take (a re-encode).
    case yuv420
    /// Red, green, blue, 3 bytes a pixel: what the PNG encoder takes (a thumbnail).
    case rgb24
    /// Blue, green, red, unused, 4 bytes a pixel: a cairo RGB24 surface's memory on a
    /// little-endian machine (the player draws it without another conversion).
    case bgrx

    var ffmpegFormat: AVPixelFormat {
        switch self {
        case .yuv420: AV_PIX_FMT_YUV420P
        case .rgb24: AV_PIX_FMT_RGB24
        case .bgrx: AV_PIX_FMT_BGR0
        }
    }

    /// Bytes of one `size` picture.
    public func byteCount(_ size: FrameSize) -> Int {
        switch self {
        case .yuv420: PixelFormat.yuv420.frameByteCount(size)
        case .rgb24: size.width * size.height * 3
        case .bgrx: size.width * size.height * 4
        }
    }
}

/// Decodes a recording's video (H.264, or whatever libavcodec decodes, a JPEG still
/// too) frame by frame and hands each picture on, tightly packed at a chosen size and
/// layout, with its time in seconds — the input side of a frame-exact re-encode, of a
/// thumbnail, and of the player.
public final class VideoFileDecoder {
    public let path: String
    /// The pictures' size in the file.
    public let size: FrameSize
    /// Frames per second from the stream (30 when the file does not say).
    public let framesPerSecond: Int
    /// How players turn the picture (the stream's display matrix); upright without one.
    public let orientation: PictureOrientation
    private let input: ClipInputFile
    private let streamIndex: Int32
    private let codec: CodecContext
    private let packet: Packet
    private let frame: Frame

    /// - Throws: `MediaError.invalidInput` when the file is not media, has no video or
    ///   no usable picture size, or video this FFmpeg cannot decode.
    public init(path: String) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.path = path
        input = try ClipInputFile(path: path)
        guard let index = try input.mediaStreams().video, let stream = input.pointer.pointee.streams[Int(index)],
              let parameters = stream.pointee.codecpar else {
            throw MediaError(.invalidInput, operation: "read video", path: path, detail: "the file has no video stream")
        }
        let width = Int(parameters.pointee.width), height = Int(parameters.pointee.height)
        guard (2...8192).contains(width), (2...8192).contains(height) else {
            throw MediaError(.invalidInput, operation: "read video", path: path, detail: "the picture size \(width)x\(height) is unusable")
        }
        size = FrameSize(width: width, height: height)
        let rate = stream.pointee.avg_frame_rate
        framesPerSecond = rate.num > 0 && rate.den > 0 ? min(240, max(1, Int((Double(rate.num) / Double(rate.den)).rounded()))) : 30
        streamIndex = index
        var sideDataSize = 0
        if let matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &sideDataSize), sideDataSize >= 36 {
            orientation = matrix.withMemoryRebound(to: Int32.self, capacity: 9) { PictureOrientation(displayMatrix: $0) } ?? .upright
        } else {
            orientation = .upright
        }
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw MediaError(.invalidInput, operation: "read video", path: path, detail: "this FFmpeg build cannot decode its video")
        }
        codec = try CodecContext(decoder, operation: "open video decoder")
        try check(avcodec_parameters_to_context(codec.pointer, parameters), .invalidInput, "open video decoder", path: path)
        codec.pointer.pointee.pkt_timebase = stream.pointee.time_base
        try check(avcodec_open2(codec.pointer, decoder, nil), .invalidInput, "open video decoder", path: path)
        packet = try Packet(operation: "read video")
        frame = try Frame(operation: "decode video")
    }

    /// Moves to the keyframe at or before `seconds`, so that a cut late in a recording
    /// does not decode everything before it. A file that cannot seek stays at the start
    /// (the decode is then only slower).
    public func seek(toKeyframeBefore seconds: Double) {
        guard seconds > 0 else { return }
        try? seek(to: seconds)
    }

    /// The video stream's time base (checked positive by `ClipInputFile.mediaStreams`).
    var timeBase: AVRational {
        input.pointer.pointee.streams[Int(streamIndex)]?.pointee.time_base ?? AVRational(num: 1, den: 90_000)
    }

    /// The video's length as the container states it, nil when it does not say.
    public var durationSeconds: Double? {
        let duration = input.pointer.pointee.duration
        guard duration > 0, duration != kc_av_nopts_value() else { return nil }
        let seconds = Double(duration) / 1_000_000
        return seconds.isFinite ? seconds : nil
    }

    /// Moves to the keyframe at or before `seconds`; the next `decode` goes on from
    /// there (the caller drops the pictures before `seconds` it does not want).
    /// - Throws: `MediaError.invalidInput` when the time is no position in a file or the
    ///   file cannot seek there.
    public func seek(to seconds: Double) throws(MediaError) {
        guard seconds.isFinite, seconds >= 0, seconds < 366 * 86_400 else {
            throw MediaError(.invalidInput, operation: "seek", path: path, detail: "cannot seek to \(seconds) s")
        }
        guard let stream = input.pointer.pointee.streams[Int(streamIndex)] else { return }
        let base = stream.pointee.time_base
        guard base.num > 0, base.den > 0 else {
            throw MediaError(.invalidInput, operation: "seek", path: path, detail: "the video stream has no time base")
        }
        let start = stream.pointee.start_time == kc_av_nopts_value() ? 0 : stream.pointee.start_time
        // start_time is the file's own number: the sum is checked, never trapped on.
        let (target, overflow) = start.addingReportingOverflow(Int64((seconds * Double(base.den) / Double(base.num)).rounded(.down)))
        guard !overflow else {
            throw MediaError(.invalidInput, operation: "seek", path: path, detail: "the video stream's start time (\(start)) is no position in a file")
        }
        try check(av_seek_frame(input.pointer, streamIndex, target, AVSEEK_FLAG_BACKWARD), .invalidInput,
                  "seek to \(seconds) s", path: path)
        avcodec_flush_buffers(codec.pointer)
    }

    /// Decodes the video from where it stands (the start, or the last `seek`) to its
    /// end, in order.
    /// - Parameters:
    ///   - target: The size to hand pictures on at (even width and height for I420).
    ///   - layout: The pixel layout handed on.
    ///   - skip: Called with each picture's time before it is scaled; true throws the
    ///     picture away unscaled. A player that has fallen behind catches up by decoding
    ///     only: scaling to the panel costs about as much as decoding on a small CPU.
    ///   - body: Called with each picture (valid during the call) and its time in
    ///     seconds; returns false to stop.
    /// - Throws: `MediaError.invalidInput` for undecodable video, what `body` throws.
    public func decode(scaledTo target: FrameSize, layout: DecodedPictureLayout = .yuv420,
                       skipping skip: (Double) -> Bool = { _ in false },
                       _ body: (UnsafeRawBufferPointer, Double) throws(MediaError) -> Bool) throws(MediaError) {
        let even = layout != .yuv420 || (target.width % 2 == 0 && target.height % 2 == 0)
        guard even, target.width >= 2, target.height >= 2, target.width <= 8192, target.height <= 8192 else {
            throw MediaError(.conversion, operation: "scale video", path: path, detail: "\(target) is not a size to scale to")
        }
        let scaler = try PictureScaler(target: target, layout: layout, path: path)
        var running = true
        while running {
            let read = av_read_frame(input.pointer, packet.pointer)
            if read == kc_averror_eof() { break }
            if read < 0 { break }  // a torn tail: what came before stands
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(codec.pointer, packet.pointer)
            guard sent >= 0 || sent == kc_averror_eagain() else { continue }  // a damaged packet
            running = try receive(scaler, skip, body)
        }
        if running, avcodec_send_packet(codec.pointer, nil) >= 0 { _ = try receive(scaler, skip, body) }
    }

    private func receive(_ scaler: PictureScaler, _ skip: (Double) -> Bool,
                         _ body: (UnsafeRawBufferPointer, Double) throws(MediaError) -> Bool) throws(MediaError) -> Bool {
        while true {
            let received = avcodec_receive_frame(codec.pointer, frame.pointer)
            if received == kc_averror_eagain() || received == kc_averror_eof() { return true }
            try check(received, .invalidInput, "decode video", path: path)
            defer { av_frame_unref(frame.pointer) }
            let pts = frame.pointer.pointee.best_effort_timestamp
            let base = codec.pointer.pointee.pkt_timebase
            guard pts != kc_av_nopts_value(), base.num > 0, base.den > 0 else { continue }
            let seconds = Double(pts) * Double(base.num) / Double(base.den)
            guard seconds.isFinite, !skip(seconds) else { continue }
            let picture = try scaler.convert(frame.pointer)
            let outcome = picture.withUnsafeBytes { bytes in
                Result<Bool, MediaError> { () throws(MediaError) in try body(bytes, seconds) }
            }
            guard try outcome.get() else { return false }
        }
    }
}

/// A swscale context from whatever the decoder gives to one packed layout at one size;
/// freed once, remade if the source size or format changes mid-stream.
private final class PictureScaler {
    let target: FrameSize
    let layout: DecodedPictureLayout
    let path: String
    private var context: OpaquePointer?
    private var sourceKey: (Int32, Int32, Int32) = (0, 0, -1)
    private var output: [UInt8]

    init(target: FrameSize, layout: DecodedPictureLayout, path: String) throws(MediaError) {
        self.target = target
        self.layout = layout
        self.path = path
        output = [UInt8](repeating: 0, count: layout.byteCount(target))
    }

    deinit { sws_freeContext(context) }

    func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws(MediaError) -> [UInt8] {
        let key = (frame.pointee.width, frame.pointee.height, frame.pointee.format)
        if context == nil || key != sourceKey {
            sws_freeContext(context)
            context = sws_getContext(key.0, key.1, AVPixelFormat(rawValue: key.2), Int32(target.width), Int32(target.height),
                                     layout.ffmpegFormat, kc_sws_bicubic(), nil, nil, nil)
            sourceKey = key
        }
        guard let context else {
            throw MediaError(.conversion, operation: "scale video", path: path,
                             detail: "cannot convert \(key.0)x\(key.1) pictures to \(target)")
        }
        let width = target.width, height = target.height
        output.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var planes: [UnsafeMutablePointer<UInt8>?]
            var strides: [Int32]
            switch layout {
            case .yuv420:
                planes = [base, base + width * height, base + width * height * 5 / 4, nil]
                strides = [Int32(width), Int32(width / 2), Int32(width / 2), 0]
            case .rgb24:
                planes = [base, nil, nil, nil]
                strides = [Int32(width * 3), 0, 0, 0]
            case .bgrx:
                planes = [base, nil, nil, nil]
                strides = [Int32(width * 4), 0, 0, 0]
            }
            withUnsafePointer(to: &frame.pointee.data) { data in
                withUnsafePointer(to: &frame.pointee.linesize) { lines in
                    data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { sourcePlanes in
                        lines.withMemoryRebound(to: Int32.self, capacity: 8) { sourceStrides in
                            _ = sws_scale(context, sourcePlanes, sourceStrides, 0, key.1, &planes, &strides)
                        }
                    }
                }
            }
        }
        return output
    }
}
