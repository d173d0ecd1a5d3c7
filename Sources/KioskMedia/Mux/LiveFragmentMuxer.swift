import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Muxes the one encode into fragmented MP4 in memory for browsers (Media Source
/// Extensions): an init segment (`ftyp` + `moov`) once, then one small fragment (`moof` +
/// `mdat`) per video frame, so a picture reaches the page one frame after it was encoded
/// instead of one GOP later. libavformat's own mov muxer writes the boxes, into our buffer
/// through a custom AVIO (`InMemoryMP4`: no file, no seeking). One owner, one thread.
public final class LiveFragmentMuxer {
    /// `ftyp` + `moov`: what a new viewer's SourceBuffer needs first.
    public private(set) var initSegment: [UInt8] = []
    private let muxer: InMemoryMP4
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let start: MonotonicInstant
    private var lastVideoPTS: Int64 = -1
    private var lastAudioPTS: Int64 = -1

    /// - Parameters:
    ///   - video: The video stream, its SPS/PPS known.
    ///   - audio: The sound, or nil.
    ///   - start: Time zero (the first keyframe's capture time).
    /// - Throws: `MediaError.muxer` when libavformat refuses the streams.
    public init(video: StreamParameters, audio: StreamParameters?, start: MonotonicInstant) throws(MediaError) {
        self.start = start
        guard video.hasExtradata else {
            throw MediaError(.muxer, operation: "start the live view", detail: "the video has no SPS/PPS yet")
        }
        muxer = try InMemoryMP4(operation: "create the live muxer")
        videoStream = try muxer.addStream(video, path: "live view")
        videoStream?.pointee.avg_frame_rate = AVRational(num: Int32(max(video.framesPerSecond, 1)), den: 1)
        if let audio { audioStream = try muxer.addStream(audio, path: "live view") }
        // frag_custom: a fragment ends when we say (after each picture); default_base_moof
        // is what MSE wants; no trailer: a live stream has no end to index.
        initSegment = try muxer.writeHeader(["movflags": "+frag_custom+empty_moov+default_base_moof+skip_trailer"],
                                            operation: "start the live view")
    }

    /// Adds one packet. After a picture the fragment is closed and returned (its bytes);
    /// sound waits in the open fragment for the next picture.
    /// - Returns: A finished fragment, or nil.
    /// - Throws: `MediaError.muxer` when libavformat refuses the packet.
    public func write(_ packet: EncodedPacket) throws(MediaError) -> [UInt8]? {
        let offset = packet.time.nanoseconds(since: start)
        guard offset >= 0 else { return nil }
        let isVideo = packet.media == .video
        guard let stream = isVideo ? videoStream : audioStream,
              let (reference, pts) = packet.stamped(for: stream, offset: offset,
                                                    minimumPTS: (isVideo ? lastVideoPTS : lastAudioPTS) + 1) else { return nil }
        var owned: UnsafeMutablePointer<AVPacket>? = reference
        defer { av_packet_free(&owned) }
        if isVideo { lastVideoPTS = pts } else { lastAudioPTS = pts }
        let fragment = try muxer.write(reference, closingFragment: isVideo, operation: "mux a live packet")
        return fragment.isEmpty ? nil : fragment
    }
}

/// libavformat's mp4 muxer writing into memory (`MemorySink`), for the muxers that hand
/// out their bytes: the live view's fragments and the timelapse's. It owns the format
/// context and frees it once, with its AVIO. One owner, one thread.
final class InMemoryMP4 {
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let sink = MemorySink()

    /// - Throws: `MediaError.muxer` naming `operation` when libavformat or memory fails.
    init(operation: String) throws(MediaError) {
        var made: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&made, nil, "mp4", nil), .muxer, operation)
        guard let made else { throw MediaError(.muxer, operation: operation) }
        context = made
        try sink.attach(to: made, operation: operation)   // on a throw, deinit frees the context
        made.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        made.pointee.avoid_negative_ts = 0
    }

    deinit {
        if let context {
            context.pointee.pb = nil
            avformat_free_context(context)
        }
        sink.close()
    }

    /// A new stream set up for `parameters`' packets.
    func addStream(_ parameters: StreamParameters, path: String) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaError(.muxer, operation: "add a stream", path: path, detail: "out of memory")
        }
        try parameters.configure(stream, path: path)
        return stream
    }

    /// Writes the header with the muxer's `options` and returns its bytes (`ftyp` + `moov`).
    func writeHeader(_ options: KeyValuePairs<String, String>, operation: String) throws(MediaError) -> [UInt8] {
        guard let context else { throw MediaError(.muxer, operation: operation) }
        var dictionary: OpaquePointer? = nil
        defer { av_dict_free(&dictionary) }
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        try check(avformat_write_header(context, &dictionary), .muxer, operation)
        avio_flush(context.pointee.pb)
        return sink.take()
    }

    /// Writes a packet (its stream index and times set); with `closingFragment`, ends the
    /// fragment (`frag_custom`) and returns the bytes written since the last call.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, closingFragment: Bool, operation: String) throws(MediaError) -> [UInt8] {
        guard let context else { return [] }
        try check(av_write_frame(context, packet), .muxer, operation)
        guard closingFragment else { return [] }
        try check(av_write_frame(context, nil), .muxer, operation + ": close the fragment")
        avio_flush(context.pointee.pb)
        return sink.take()
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
