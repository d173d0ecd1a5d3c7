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
                             detail: "it refused \(settings.input) at \(settings.bitrate / 1000) kbit/s",
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

/// The graph's one AAC encode: every chunk of the microphone, kept gap-free on the
/// monotonic time line (a lost chunk becomes silence, an overlap is skipped), encoded
/// once and shared by every output that wants sound (a video file, a sound-only file,
/// the pre-event ring, a stream).
public final class AACPacketEncoder {
    public let settings: AudioTrackSettings
    public let parameters: StreamParameters
    private let encoder: AudioEncoder
    private var aligner: AudioAligner?
    /// Zeros for gaps; grown once, reused.
    private let silence: [Int16]
    /// Gaps longer than this are a clock jump, bridged by moving the time line.
    static let largestGapNanoseconds: Int64 = 5_000_000_000
    /// Clock jumps bridged so far.
    public private(set) var rebased = 0

    /// - Throws: `MediaError` when there is no AAC encoder or it refuses the format.
    public init(settings: AudioTrackSettings) throws(MediaError) {
        self.settings = settings
        // With a global header the AudioSpecificConfig is extradata: what MP4, FLV and
        // (with ADTS added by the muxer) MPEG-TS want.
        encoder = try AudioEncoder(settings: settings, globalHeader: true)
        guard let parameters = StreamParameters(context: encoder.context, media: .audio) else {
            throw MediaError(.encoderRejectedSettings, operation: "open audio encoder", detail: "out of memory")
        }
        self.parameters = parameters
        silence = [Int16](repeating: 0, count: settings.input.sampleRate / 10 * settings.input.channels)
    }

    /// Where the encoded time line starts (the first chunk), once known.
    public var start: MonotonicInstant? { aligner?.start }

    /// Encodes one chunk; finished AAC packets go to `emit`.
    public func encode(_ chunk: AudioChunk, emit: (EncodedPacket) -> Void) throws(MediaError) {
        if aligner == nil { aligner = AudioAligner(sampleRate: settings.input.sampleRate, start: chunk.timestamp) }
        guard var aligner else { return }
        // A gap or an overlap of more than a few seconds is a clock jump, not lost sound:
        // the time line moves instead of being filled with minutes of silence (which would
        // hold the encoder thread while frames drop).
        if abs(aligner.offset(of: chunk.timestamp)) > Self.largestGapNanoseconds {
            aligner.rebase(continuingAt: chunk.timestamp)
            rebased += 1
        }
        let plan = aligner.plan(timestamp: chunk.timestamp, frameCount: chunk.frameCount)
        self.aligner = aligner
        let channels = settings.input.channels
        var remaining = plan.silence
        while remaining > 0 {
            let count = min(remaining, silence.count / max(channels, 1))
            try silence.withUnsafeBufferPointer { zeros throws(MediaError) in
                try encoder.encode(UnsafeBufferPointer(rebasing: zeros[0..<(count * channels)])) { raw throws(MediaError) in try wrap(raw, emit) }
            }
            remaining -= count
        }
        guard plan.take > 0 else { return }
        let samples = chunk.buffer.bytes.bindMemory(to: Int16.self)
        let first = plan.skip * channels
        let end = min(samples.count, first + plan.take * channels)
        guard end > first else { return }
        try encoder.encode(UnsafeBufferPointer(rebasing: samples[first..<end])) { raw throws(MediaError) in try wrap(raw, emit) }
    }

    /// Encodes samples that continue the track without a gap (a file written from
    /// samples rather than timed chunks); the time line starts at 0.
    public func encode(contiguous samples: UnsafeBufferPointer<Int16>, emit: (EncodedPacket) -> Void) throws(MediaError) {
        if aligner == nil { aligner = AudioAligner(sampleRate: settings.input.sampleRate, start: MonotonicInstant(nanoseconds: 0)) }
        try encoder.encode(samples) { raw throws(MediaError) in try wrap(raw, emit) }
    }

    /// Sends the last partial frame and drains the encoder.
    public func flush(emit: (EncodedPacket) -> Void) throws(MediaError) {
        try encoder.flush { raw throws(MediaError) in try wrap(raw, emit) }
    }

    private func wrap(_ raw: UnsafeMutablePointer<AVPacket>, _ emit: (EncodedPacket) -> Void) throws(MediaError) {
        let rate = Int64(max(settings.input.sampleRate, 1))
        let start = aligner?.start ?? MonotonicInstant(nanoseconds: 0)
        let pts = raw.pointee.pts == kc_av_nopts_value() ? 0 : raw.pointee.pts
        // Samples to nanoseconds without overflow: whole seconds, then the rest.
        let nanoseconds = (pts / rate) * 1_000_000_000 + (pts % rate) * 1_000_000_000 / rate
        let duration = raw.pointee.duration > 0 ? raw.pointee.duration * 1_000_000_000 / rate : 1024 * 1_000_000_000 / rate
        guard let packet = EncodedPacket(movingFrom: raw, media: .audio, time: start.advanced(byNanoseconds: nanoseconds),
                                         durationNanoseconds: duration) else {
            throw MediaError(.encoderRejectedSettings, operation: "receive audio packet", detail: "out of memory")
        }
        emit(packet)
    }
}
