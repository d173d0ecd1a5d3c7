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
    private let codec: CodecContext
    private let frame: Frame
    private let packet: Packet
    private let frameSize: Int
    private let channels: Int
    /// Sample frames already in `frame`.
    private var filled = 0
    /// Timestamp (in samples) of the next frame handed to the encoder.
    private var nextPTS: Int64 = 0
    /// Total sample frames accepted, for duration reports.
    private(set) var samplesAccepted: Int64 = 0
    var context: UnsafeMutablePointer<AVCodecContext> { codec.pointer }

    /// - Throws: `MediaError` when there is no AAC encoder or it refuses the format.
    init(settings: AudioTrackSettings, globalHeader: Bool) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw MediaError(.encoderNotFound, operation: "open audio encoder", detail: "this FFmpeg build has no AAC encoder")
        }
        codec = try CodecContext(encoder, operation: "open audio encoder")
        let context = codec.pointer
        channels = settings.input.channels
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(settings.input.sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
        context.pointee.bit_rate = Int64(settings.bitrate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(settings.input.sampleRate))
        if globalHeader { context.pointee.flags |= kc_av_codec_flag_global_header() }
        let opened = avcodec_open2(context, encoder, nil)
        if opened < 0 {
            throw MediaError(.encoderRejectedSettings, operation: "open AAC encoder", averror: opened,
                             detail: "it refused \(settings.input) at \(settings.bitrate / 1000) kbit/s (\(MediaError.describe(opened)))",
                             hint: "Use microphone.sample_rate 44100 or 48000 and 1 or 2 channels")
        }
        frameSize = Int(context.pointee.frame_size > 0 ? context.pointee.frame_size : 1024)
        frame = try Frame(operation: "open audio encoder")
        packet = try Packet(operation: "open audio encoder")
        let samples = frame.pointer
        samples.pointee.nb_samples = Int32(frameSize)
        samples.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        samples.pointee.sample_rate = context.pointee.sample_rate
        av_channel_layout_copy(&samples.pointee.ch_layout, &context.pointee.ch_layout)
        try check(av_frame_get_buffer(samples, 0), .encoderRejectedSettings, "allocate audio frame")
    }

    var sampleRate: Int { Int(context.pointee.sample_rate) }

    /// Accepts interleaved S16 sample frames; emits AAC packets as frames fill.
    func encode(_ samples: UnsafeBufferPointer<Int16>,
                emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        let total = samples.count / channels
        var consumed = 0
        let frame = frame.pointer
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
            frame.pointer.pointee.nb_samples = Int32(filled)
            try sendFrame(emit)
        }
        try codec.sendFlush(operation: "flush audio encoder")
        try codec.receivePackets(into: packet, operation: "receive audio packet", emit: emit)
    }

    private func sendFrame(_ emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        let frame = frame.pointer
        frame.pointee.pts = nextPTS
        nextPTS += Int64(frame.pointee.nb_samples)
        filled = 0
        try check(avcodec_send_frame(context, frame), .encoderRejectedSettings, "encode audio frame")
        try codec.receivePackets(into: packet, operation: "receive audio packet", emit: emit)
    }
}
