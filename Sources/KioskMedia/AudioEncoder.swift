import CAVCodec
import CAVUtil
import KioskCore

/// What the audio track is made from and how it is encoded.
public struct AudioTrackSettings: Sendable, Equatable {
    public var input: AudioFormat
    public var bitrate: Int

    public init(input: AudioFormat, bitrate: Int = 128_000) {
        self.input = input
        self.bitrate = bitrate
    }
}

/// An AAC encoder fed with interleaved S16 samples in chunks of any length. Samples
/// are converted straight into the encoder's planar-float frame, 1024 at a time, so
/// there is no intermediate buffer and no per-chunk allocation.
final class AudioEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private var frame: UnsafeMutablePointer<AVFrame>
    private var packet: UnsafeMutablePointer<AVPacket>
    private let frameSize: Int
    private let channels: Int
    /// Sample frames already in `frame`.
    private var filled = 0
    /// Timestamp (in samples) of the next frame handed to the encoder.
    private var nextPTS: Int64 = 0
    /// Total sample frames accepted, for duration reports.
    private(set) var samplesAccepted: Int64 = 0

    /// - Throws: `MediaError` when there is no AAC encoder or it refuses the format.
    init(settings: AudioTrackSettings, globalHeader: Bool) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw MediaError(.encoderNotFound, operation: "open audio encoder", detail: "this FFmpeg build has no AAC encoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError(.encoderRejectedSettings, operation: "open audio encoder", detail: "out of memory")
        }
        self.context = context
        channels = settings.input.channels
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(settings.input.sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
        context.pointee.bit_rate = Int64(settings.bitrate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(settings.input.sampleRate))
        if globalHeader { context.pointee.flags |= kc_av_codec_flag_global_header() }
        func release() {
            var doomed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&doomed)
        }
        let opened = avcodec_open2(context, codec, nil)
        if opened < 0 {
            release()
            throw MediaError(.encoderRejectedSettings, operation: "open AAC encoder", averror: opened,
                             detail: "it refused \(settings.input) at \(settings.bitrate / 1000) kbit/s (\(MediaError.describe(opened)))",
                             hint: "Use microphone.sample_rate 44100 or 48000 and 1 or 2 channels")
        }
        frameSize = Int(context.pointee.frame_size > 0 ? context.pointee.frame_size : 1024)
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            release()
            throw MediaError(.encoderRejectedSettings, operation: "open audio encoder", detail: "out of memory")
        }
        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = context.pointee.sample_rate
        av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout)
        self.frame = frame
        self.packet = packet
        let allocated = av_frame_get_buffer(frame, 0)
        if allocated < 0 {
            release()
            try check(allocated, .encoderRejectedSettings, "allocate audio frame")
        }
    }

    deinit {
        var doomedContext: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&doomedContext)
        var doomedFrame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&doomedFrame)
        var doomedPacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&doomedPacket)
    }

    var sampleRate: Int { Int(context.pointee.sample_rate) }

    /// Accepts interleaved S16 sample frames; emits AAC packets as frames fill.
    func encode(_ samples: UnsafeBufferPointer<Int16>,
                emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        let total = samples.count / channels
        var consumed = 0
        while consumed < total {
            if filled == 0 {
                try check(av_frame_make_writable(frame), .encoderRejectedSettings, "prepare audio frame")
            }
            let take = min(frameSize - filled, total - consumed)
            for channel in 0..<channels {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
                    .assumingMemoryBound(to: Float.self)
                var source = channel + consumed * channels
                for index in filled..<(filled + take) {
                    plane[index] = Float(samples[source]) * (1.0 / 32768.0)
                    source += channels
                }
            }
            filled += take
            consumed += take
            if filled == frameSize { try sendFrame(emit) }
        }
        samplesAccepted += Int64(total)
    }

    /// Sends a partly filled last frame, then drains the encoder.
    func flush(emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        if filled > 0 {
            frame.pointee.nb_samples = Int32(filled)
            try sendFrame(emit)
        }
        let result = avcodec_send_frame(context, nil)
        if result != kc_averror_eof() { try check(result, .encoderRejectedSettings, "flush audio encoder") }
        try drain(emit)
    }

    private func sendFrame(_ emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        frame.pointee.pts = nextPTS
        nextPTS += Int64(frame.pointee.nb_samples)
        filled = 0
        try check(avcodec_send_frame(context, frame), .encoderRejectedSettings, "encode audio frame")
        try drain(emit)
    }

    private func drain(_ emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == kc_averror_eagain() || result == kc_averror_eof() { return }
            try check(result, .encoderRejectedSettings, "receive audio packet")
            defer { av_packet_unref(packet) }
            try emit(packet)
        }
    }
}
