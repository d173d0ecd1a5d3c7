import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Muxes the one encode into fragmented MP4 in memory for browsers (Media Source
/// Extensions): an init segment (`ftyp` + `moov`) once, then one small fragment (`moof` +
/// `mdat`) per video frame, so a picture reaches the page one frame after it was encoded
/// instead of one GOP later. libavformat's own mov muxer writes the boxes, into our buffer
/// through a custom AVIO (no file, no seeking). One owner, one thread.
public final class LiveFragmentMuxer {
    /// `ftyp` + `moov`: what a new viewer's SourceBuffer needs first.
    public private(set) var initSegment: [UInt8] = []
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let sink: MemorySink
    private let start: MonotonicInstant
    private var lastVideoPTS: Int64 = -1
    private var lastAudioPTS: Int64 = -1
    private var closed = false

    /// - Parameters:
    ///   - video: The video stream, its SPS/PPS known.
    ///   - audio: The sound, or nil.
    ///   - start: Time zero (the first keyframe's capture time).
    /// - Throws: `MediaError.muxer` when libavformat refuses the streams.
    public init(video: StreamParameters, audio: StreamParameters?, start: MonotonicInstant) throws(MediaError) {
        self.start = start
        sink = MemorySink()
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&context, nil, "mp4", nil), .muxer, "create the live muxer")
        guard let context else { throw MediaError(.muxer, operation: "create the live muxer") }
        format = context
        do throws(MediaError) {
            guard video.hasExtradata else {
                throw MediaError(.muxer, operation: "start the live view", detail: "the video has no SPS/PPS yet")
            }
            try sink.attach(to: context)
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
            context.pointee.avoid_negative_ts = 0
            videoStream = try addStream(video)
            videoStream?.pointee.avg_frame_rate = AVRational(num: Int32(max(video.framesPerSecond, 1)), den: 1)
            if let audio { audioStream = try addStream(audio) }
            var options: OpaquePointer? = nil
            defer { av_dict_free(&options) }
            // frag_custom: a fragment ends when we say (after each picture); default_base_moof
            // is what MSE wants; no trailer: a live stream has no end to index.
            av_dict_set(&options, "movflags", "+frag_custom+empty_moov+default_base_moof+skip_trailer", 0)
            try check(avformat_write_header(context, &options), .muxer, "start the live view")
            avio_flush(context.pointee.pb)
            initSegment = sink.take()
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    private func addStream(_ parameters: StreamParameters) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(format, nil) else {
            throw MediaError(.muxer, operation: "add a live stream", detail: "out of memory")
        }
        try parameters.configure(stream, path: "live view")
        return stream
    }

    /// Adds one packet. After a picture the fragment is closed and returned (its bytes);
    /// sound waits in the open fragment for the next picture.
    /// - Returns: A finished fragment, or nil.
    /// - Throws: `MediaError.muxer` when libavformat refuses the packet.
    public func write(_ packet: EncodedPacket) throws(MediaError) -> [UInt8]? {
        guard !closed, let format else { return nil }
        let offset = packet.time.nanoseconds(since: start)
        guard offset >= 0 else { return nil }
        let isVideo = packet.media == .video
        guard let stream = isVideo ? videoStream : audioStream,
              let (reference, pts) = packet.stamped(for: stream, offset: offset,
                                                    minimumPTS: (isVideo ? lastVideoPTS : lastAudioPTS) + 1) else { return nil }
        var owned: UnsafeMutablePointer<AVPacket>? = reference
        defer { av_packet_free(&owned) }
        if isVideo { lastVideoPTS = pts } else { lastAudioPTS = pts }
        try check(av_write_frame(format, reference), .muxer, "mux a live packet")
        guard packet.media == .video else { return nil }
        try check(av_write_frame(format, nil), .muxer, "close a live fragment")
        avio_flush(format.pointee.pb)
        let fragment = sink.take()
        return fragment.isEmpty ? nil : fragment
    }

    private func tearDown() {
        guard !closed else { return }
        closed = true
        if let format {
            format.pointee.pb = nil
            avformat_free_context(format)
            self.format = nil
        }
        sink.close()
    }
}

/// The bytes libavformat writes, collected until taken (the live view's and the
/// timelapse's muxers).
final class MemorySink {
    private var bytes: [UInt8] = []
    private var io: UnsafeMutablePointer<AVIOContext>?

    func attach(to context: UnsafeMutablePointer<AVFormatContext>, operation: String = "start the live view") throws(MediaError) {
        let size = 64 * 1024
        guard let buffer = av_malloc(size) else { throw MediaError(.muxer, operation: operation, detail: "out of memory") }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 1, opaque, nil, memorySinkWrite, nil) else {
            av_free(buffer)
            throw MediaError(.muxer, operation: operation, detail: "out of memory")
        }
        io.pointee.seekable = 0
        self.io = io
        context.pointee.pb = io
    }

    func append(_ buffer: UnsafePointer<UInt8>, _ count: Int) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
    }

    func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    func close() {
        if io != nil {
            av_free(io?.pointee.buffer)
            avio_context_free(&io)
        }
    }

    deinit { close() }
}

private func memorySinkWrite(_ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ count: Int32) -> Int32 {
    guard let opaque, let buffer, count >= 0 else { return kc_averror(EINVAL) }
    Unmanaged<MemorySink>.fromOpaque(opaque).takeUnretainedValue().append(buffer, Int(count))
    return count
}
