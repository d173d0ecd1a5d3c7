import CAVCodec
import CAVFormat
import KioskCore
import CAVUtil
import Glibc

/// Reads the sound of any file libavformat opens (kioskcam's AAC `.m4a`, WAV, the audio
/// track of a video) and hands it on as floats, -1…1 full scale, one decoded frame's
/// worth at a time — the whole file is never in memory.
///
/// The waveform takes mono (channels averaged); a WAV export, the player and a
/// re-encoded clip keep the source's mono or stereo, wider layouts folded to stereo
/// (`ChannelMix`). Sample formats: float, 16- and 32-bit integer, double and unsigned
/// 8-bit, each interleaved or planar (AAC decodes to planar float).
///
/// A damaged packet is counted (`damagedPackets`) and stands in as silence of its
/// length, as a player would play it: a recording that lost one packet still has a
/// picture, and what follows stays in its place. A file whose packets are all damaged
/// is `invalidInput`.
///
/// Over 400 lines as one thing: libavformat's read loop, libavcodec's decode and the
/// sample-format conversion share the same FFmpeg objects and their error paths; most of
/// the length is the eight sample layouts and damaged-packet handling above.
public final class AudioFileDecoder {
    /// The file, as given.
    public let path: String
    /// Frames per second of the audio stream.
    public let sampleRate: Int
    /// Channels in the file.
    public let channelCount: Int
    /// Channels handed on by `decode(keepingChannels: true, …)` and
    /// `decodeInterleavedS16`: the file's 1 or 2, 2 for a wider layout.
    public var keptChannels: Int { ChannelMix.keptChannels(of: channelCount) }
    /// libavcodec's name for the codec, e.g. "aac", "pcm_s16le".
    public let codecName: String
    /// Frames the container says the stream holds (stream duration, else the file's),
    /// nil when it does not say. The decoder may give a few more or fewer (AAC padding).
    public let expectedFrames: Int?
    /// Packets skipped because the decoder rejected them.
    public private(set) var damagedPackets = 0

    private let input: AudioInputFile
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let codec: CodecContext
    private let packet: Packet
    private let frame: Frame
    /// The current frame's samples as mixed, interleaved.
    private var mixed: [Float] = []
    /// The last mix used, rebuilt when a frame's layout differs.
    private var mix: ChannelMix?
    private var mixLayout: [String] = []
    private var decoded = false

    /// Opens the file and its best audio stream's decoder.
    /// - Parameter path: Any file libavformat reads.
    /// - Throws: `MediaError.invalidInput` naming the path when the file is missing,
    ///   unreadable, not media, has no audio stream, or has audio this FFmpeg cannot
    ///   decode; `.encoderRejectedSettings` if the decoder will not open.
    public init(path: String) throws(MediaError) {
        MediaLibraryLog.quietByDefault
        self.path = path
        let operation = "read audio"
        input = try AudioInputFile(path: path, operation: operation)
        let context = input.pointer
        try check(avformat_find_stream_info(context, nil), .invalidInput, operation, path: path,
                  hint: "The file is damaged or not a sound recording")
        let best = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard best >= 0, let stream = context.pointee.streams[Int(best)] else {
            throw MediaError(.invalidInput, operation: operation, path: path,
                             detail: "the file has no audio stream (\(Self.describeStreams(context)))")
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        for index in 0..<Int(context.pointee.nb_streams) where index != Int(best) {
            context.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
        }
        guard let parameters = stream.pointee.codecpar else {
            throw MediaError(.invalidInput, operation: operation, path: path, detail: "the audio stream has no codec parameters")
        }
        codecName = avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw MediaError(.invalidInput, operation: operation, path: path,
                             detail: "this FFmpeg build cannot decode \(codecName) audio")
        }
        codec = try CodecContext(decoder, operation: "open \(codecName) decoder")
        try check(avcodec_parameters_to_context(codec.pointer, parameters), .invalidInput, "open \(codecName) decoder", path: path)
        // Lets the decoder apply the container's priming and padding trims.
        codec.pointer.pointee.pkt_timebase = stream.pointee.time_base
        // A damaged packet is counted in `damagedPackets`; the decoder's own line per
        // packet is shown only with FFmpeg's messages on (`-v`).
        codec.pointer.pointee.log_level_offset = AV_LOG_INFO - AV_LOG_ERROR
        try check(avcodec_open2(codec.pointer, decoder, nil), .encoderRejectedSettings, "open \(codecName) decoder", path: path)
        packet = try Packet(operation: operation)
        frame = try Frame(operation: operation)

        sampleRate = Int(max(0, codec.pointer.pointee.sample_rate))
        channelCount = Int(max(1, codec.pointer.pointee.ch_layout.nb_channels))
        let perFrame = AVRational(num: 1, den: Int32(clamping: max(1, sampleRate)))
        if sampleRate <= 0 {
            expectedFrames = nil
        } else if stream.pointee.duration != kc_av_nopts_value(), stream.pointee.duration > 0 {
            expectedFrames = Int(av_rescale_q(stream.pointee.duration, stream.pointee.time_base, perFrame))
        } else if context.pointee.duration != kc_av_nopts_value(), context.pointee.duration > 0 {
            expectedFrames = Int(av_rescale_q(context.pointee.duration, kc_av_time_base_q(), perFrame))
        } else {
            expectedFrames = nil
        }
    }

    /// Decodes the whole file once, handing each decoded frame to `chunk`.
    /// - Parameters:
    ///   - keepingChannels: false for mono; true for `keptChannels` interleaved.
    ///   - chunk: Called with the samples of one decoded frame (interleaved when
    ///     stereo); the buffer is only valid during the call.
    /// - Returns: Frames handed on (samples per channel), silence for damaged packets included.
    /// - Throws: `MediaError.invalidInput` when no packet of a file could be decoded, on
    ///   a sample format it cannot mix, or when called a second time;
    ///   `.io` when reading fails.
    @discardableResult
    public func decode(keepingChannels: Bool = false,
                       _ chunk: (UnsafeBufferPointer<Float>) -> Void) throws(MediaError) -> Int {
        let operation = "decode audio"
        let outputs = keepingChannels ? keptChannels : 1
        guard !decoded else {
            throw MediaError(.invalidInput, operation: operation, path: path,
                             detail: "the file was already decoded to its end; open a new decoder")
        }
        decoded = true
        var frames = 0
        var stoodIn = 0  // silent frames standing in for damaged packets
        let packets = try pumpPackets(operation, keepGoing: { true }, decodedAny: { frames != stoodIn },
                                      receive: { () throws(MediaError) in frames += try receiveFrames(outputs, chunk) },
                                      standIn: { duration in
                                          let silent = silence(lasting: duration, outputs, chunk)
                                          frames += silent
                                          stoodIn += silent
                                      })
        let flushed = avcodec_send_packet(codec.pointer, nil)
        if flushed >= 0 { frames += try receiveFrames(outputs, chunk) }
        if damagedPackets > 0 && frames == stoodIn {
            throw MediaError(.invalidInput, operation: operation, path: path,
                             detail: "none of its \(packets) \(codecName) packets could be decoded",
                             hint: "The file is damaged")
        }
        return frames
    }

    /// Hands on the silence that stands in for a damaged packet of `duration` (in the
    /// stream's time base); returns how many sample frames.
    private func silence(lasting duration: Int64, _ outputs: Int, _ chunk: (UnsafeBufferPointer<Float>) -> Void) -> Int {
        guard duration > 0, sampleRate > 0 else { return 0 }
        let perFrame = AVRational(num: 1, den: Int32(clamping: sampleRate))
        // No real packet lasts longer than a few seconds; a corrupt field must not
        // produce hours of silence.
        let frames = min(Int(av_rescale_q(duration, timeBase, perFrame)), 10 * sampleRate)
        guard frames > 0 else { return 0 }
        if mixed.count < 4096 * outputs { mixed = [Float](repeating: 0, count: 4096 * outputs) }
        var left = frames
        mixed.withUnsafeMutableBufferPointer { buffer in
            buffer.update(repeating: 0)
            let room = buffer.count / outputs
            while left > 0 {
                let count = min(left, room)
                chunk(UnsafeBufferPointer(rebasing: buffer[0..<(count * outputs)]))
                left -= count
            }
        }
        return frames
    }

    /// Hands on every frame the decoder has ready; returns how many sample frames.
    private func receiveFrames(_ outputs: Int, _ chunk: (UnsafeBufferPointer<Float>) -> Void) throws(MediaError) -> Int {
        var frames = 0
        while true {
            let received = avcodec_receive_frame(codec.pointer, frame.pointer)
            if received == kc_averror_eagain() || received == kc_averror_eof() { return frames }
            if received < 0 {
                damagedPackets += 1
                return frames
            }
            defer { av_frame_unref(frame.pointer) }
            let count = try mixFrame(into: outputs)
            mixed.withUnsafeBufferPointer { chunk(UnsafeBufferPointer(rebasing: $0[0..<(count * outputs)])) }
            frames += count
        }
    }

    /// Mixes the current frame's channels into `mixed` as `outputs` interleaved
    /// channels; returns the frame count.
    private func mixFrame(into outputs: Int) throws(MediaError) -> Int {
        let current = frame.pointer.pointee
        let count = Int(max(0, current.nb_samples))
        let channels = Int(max(1, current.ch_layout.nb_channels))
        let layout = (0..<channels).map { index -> String in
            var name = [CChar](repeating: 0, count: 32)
            let channel = av_channel_layout_channel_from_index(&frame.pointer.pointee.ch_layout, UInt32(index))
            guard av_channel_name(&name, name.count, channel) > 0 else { return "" }
            return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        if mix?.outputs != outputs || layout != mixLayout {
            mix = ChannelMix(channelNames: layout, outputs: outputs)
            mixLayout = layout
        }
        guard let mix else { return 0 }
        if mixed.count < count * outputs { mixed = [Float](repeating: 0, count: count * outputs) }
        let format = AVSampleFormat(rawValue: current.format)
        let planar = av_sample_fmt_is_planar(format) != 0
        switch format {
        case AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP:
            try add(Float.self, count: count, planar: planar, mix) { $0 }
        case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P:
            try add(Int16.self, count: count, planar: planar, mix) { Float($0) / 32768 }
        case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P:
            try add(Int32.self, count: count, planar: planar, mix) { Float($0) / 2_147_483_648 }
        case AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP:
            try add(Double.self, count: count, planar: planar, mix) { Float($0) }
        case AV_SAMPLE_FMT_U8, AV_SAMPLE_FMT_U8P:
            try add(UInt8.self, count: count, planar: planar, mix) { (Float($0) - 128) / 128 }
        default:
            let name = av_get_sample_fmt_name(format).map { String(cString: $0) } ?? "format \(current.format)"
            throw MediaError(.invalidInput, operation: "decode audio", path: path,
                             detail: "the \(codecName) decoder gives \(name) samples, which cannot be mixed here")
        }
        return count
    }

    /// Adds each input channel of the current frame, weighted by `mix`, into `mixed`.
    private func add<Sample>(_ type: Sample.Type, count: Int, planar: Bool, _ mix: ChannelMix,
                             _ convert: (Sample) -> Float) throws(MediaError) {
        guard let data = frame.pointer.pointee.extended_data else {
            throw MediaError(.invalidInput, operation: "decode audio", path: path, detail: "a decoded frame has no data")
        }
        let outputs = mix.outputs, inputs = mix.inputs
        try mixed.withUnsafeMutableBufferPointer { (output) throws(MediaError) in
            UnsafeMutableBufferPointer(rebasing: output[0..<(count * outputs)]).update(repeating: 0)
            for channel in 0..<inputs {
                guard let plane = data[planar ? channel : 0] else {
                    throw MediaError(.invalidInput, operation: "decode audio", path: path,
                                     detail: "a decoded frame lacks channel \(channel + 1)")
                }
                let samples = UnsafeRawPointer(plane).assumingMemoryBound(to: Sample.self)
                let first = planar ? 0 : channel, step = planar ? 1 : inputs
                for out in 0..<outputs {
                    let weight = mix.weights[out][channel]
                    guard weight != 0 else { continue }
                    for index in 0..<count {
                        output[index * outputs + out] += weight * convert(samples[first + index * step])
                    }
                }
            }
        }
    }

    /// Seconds of sound the container says the file holds, nil when it does not say.
    public var expectedSeconds: Double? {
        guard let expectedFrames, sampleRate > 0 else { return nil }
        return Double(expectedFrames) / Double(sampleRate)
    }

    /// Decodes from `start` seconds to the end (or until `chunk` returns false), handing
    /// each decoded frame on as interleaved S16 with `keptChannels` channels — what a
    /// sound card plays. A damaged packet stands in as silence of its length.
    /// - Parameters:
    ///   - start: Where to begin, in seconds from the start of the stream (0 for the
    ///     beginning). Samples before it are decoded and dropped, so playback starts on
    ///     the sample, not on the packet before it.
    ///   - chunk: Called with `keptChannels`-interleaved samples, valid only during the
    ///     call; returns false to stop decoding.
    /// - Returns: Frames handed on (samples per channel).
    /// - Throws: `MediaError.invalidInput` when the file cannot seek to `start`, on a
    ///   sample format it cannot convert, when no
    ///   packet could be decoded, or when called a second time; `.io` when reading fails.
    @discardableResult
    public func decodeInterleavedS16(from start: Double = 0,
                                     _ chunk: (UnsafeBufferPointer<Int16>) -> Bool) throws(MediaError) -> Int {
        let operation = "decode audio"
        guard !decoded else {
            throw MediaError(.invalidInput, operation: operation, path: path,
                             detail: "the file was already decoded to its end; open a new decoder")
        }
        decoded = true
        guard sampleRate > 0 else {
            throw MediaError(.invalidInput, operation: operation, path: path, detail: "the audio stream has no sample rate")
        }
        // Under a year: anything larger is no recording's position, and would overflow
        // the sample arithmetic below.
        guard start.isFinite, start >= 0, start < 366 * 86_400 else {
            throw MediaError(.invalidInput, operation: "seek", path: path, detail: "cannot start at \(start) s")
        }
        let perSample = AVRational(num: 1, den: Int32(clamping: sampleRate))
        var skipUntil: Int64 = 0   // in samples from the stream's start
        if start > 0 {
            skipUntil = Int64((start * Double(sampleRate)).rounded())
            let target = av_rescale_q(skipUntil, perSample, timeBase)
            try check(av_seek_frame(input.pointer, streamIndex, target, AVSEEK_FLAG_BACKWARD), .invalidInput, "seek to \(start) s",
                      path: path, hint: "The file cannot be played from there; try without --from")
            avcodec_flush_buffers(codec.pointer)
        }
        let startTime = streamStartTime
        let channels = keptChannels
        var output = InterleavedS16(channels: channels)
        var frames = 0
        var stoodIn = 0
        var position: Int64?       // the next decoded sample's index, once a frame told us
        var keepGoing = true

        /// Hands on the part of `count` samples (at `position`) from `skipUntil` on.
        func emit(_ samples: UnsafeBufferPointer<Int16>, count: Int) -> Int {
            let first = position ?? skipUntil
            position = first + Int64(count)
            let skip = Int(max(0, min(Int64(count), skipUntil - first)))
            guard skip < count, keepGoing else { return 0 }
            keepGoing = chunk(UnsafeBufferPointer(rebasing: samples[(skip * channels)..<(count * channels)]))
            return count - skip
        }
        func receive() throws(MediaError) {
            while keepGoing {
                let received = avcodec_receive_frame(codec.pointer, frame.pointer)
                if received == kc_averror_eagain() || received == kc_averror_eof() { return }
                if received < 0 {
                    damagedPackets += 1
                    return
                }
                defer { av_frame_unref(frame.pointer) }
                let stamp = frame.pointer.pointee.best_effort_timestamp
                if stamp != kc_av_nopts_value() {
                    // The file's numbers: a stamp whose offset overflows, or that lands past
                    // 2^62 samples (av_rescale_q gives INT64_MIN when it cannot say), is no
                    // position, so the sample arithmetic below never overflows.
                    let (offset, overflow) = stamp.subtractingReportingOverflow(startTime)
                    let sample = overflow ? Int64.min : av_rescale_q(offset, timeBase, perSample)
                    if sample.magnitude <= 1 << 62 { position = sample }
                }
                let count = try mixFrame(into: channels)
                output.convert(mixed, count: count)
                frames += output.samples.withUnsafeBufferPointer { emit($0, count: count) }
            }
        }
        let packets = try pumpPackets(operation, keepGoing: { keepGoing }, decodedAny: { frames != stoodIn },
                                      receive: receive, standIn: { duration in
                                          // As in `silence(lasting:)`: no real packet lasts longer than a few seconds.
                                          let count = duration > 0 ? min(Int(av_rescale_q(duration, timeBase, perSample)), 10 * sampleRate) : 0
                                          guard count > 0 else { return }
                                          output.silence(count)
                                          let emitted = output.samples.withUnsafeBufferPointer { emit($0, count: count) }
                                          frames += emitted
                                          stoodIn += emitted
                                      })
        if keepGoing, avcodec_send_packet(codec.pointer, nil) >= 0 { try receive() }
        if damagedPackets > 0 && frames == stoodIn && packets > 0 {
            throw MediaError(.invalidInput, operation: operation, path: path,
                             detail: "none of its \(packets) \(codecName) packets could be decoded",
                             hint: "The file is damaged")
        }
        return frames
    }

    /// Feeds the audio stream's packets to the decoder until the end or `keepGoing` says
    /// stop; `receive` takes the decoded frames after each packet. A packet the decoder
    /// refuses is counted damaged and `standIn` gets its duration (silence goes in its
    /// place). A read error after something decoded is a torn tail (a recording cut by a
    /// power loss): what came before is kept.
    /// - Returns: How many of the stream's packets were read.
    private func pumpPackets(_ operation: String, keepGoing: () -> Bool, decodedAny: () -> Bool,
                             receive: () throws(MediaError) -> Void, standIn: (Int64) -> Void) throws(MediaError) -> Int {
        var packets = 0
        while keepGoing() {
            let read = av_read_frame(input.pointer, packet.pointer)
            if read == kc_averror_eof() { break }
            if read < 0 {
                if read == kc_averror(EIO) || read == kc_averror(ENOMEM) {
                    try check(read, .io, operation, path: path)
                }
                guard !decodedAny() else {
                    damagedPackets += 1
                    break
                }
                try check(read, .invalidInput, operation, path: path, hint: "The file is damaged")
            }
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            packets += 1
            var sent = avcodec_send_packet(codec.pointer, packet.pointer)
            if sent == kc_averror_eagain() {
                // Frames left over after a damaged one: take them, then the packet fits.
                try receive()
                sent = avcodec_send_packet(codec.pointer, packet.pointer)
            }
            if sent == kc_averror(ENOMEM) { try check(sent, .io, operation, path: path) }
            if sent < 0 {
                damagedPackets += 1
                standIn(packet.pointer.pointee.duration)
                continue
            }
            try receive()
        }
        return packets
    }

    /// The audio stream's first timestamp, 0 when the container does not say.
    private var streamStartTime: Int64 {
        guard let stream = input.pointer.pointee.streams[Int(streamIndex)] else { return 0 }
        let start = stream.pointee.start_time
        return start == kc_av_nopts_value() ? 0 : start
    }

    /// "video h264, data …" for a file without sound.
    private static func describeStreams(_ context: UnsafeMutablePointer<AVFormatContext>) -> String {
        var kinds: [String] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let parameters = context.pointee.streams[index]?.pointee.codecpar else { continue }
            let type = av_get_media_type_string(parameters.pointee.codec_type).map { String(cString: $0) } ?? "unknown"
            let codec = avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
            kinds.append("\(type) \(codec)")
        }
        return kinds.isEmpty ? "it holds no streams" : "it holds " + kinds.joined(separator: ", ")
    }
}

/// An opened input file (`AVFormatContext`), closed exactly once when its owner goes.
private final class AudioInputFile {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    /// - Throws: `MediaError.invalidInput` naming the path and the system's or FFmpeg's reason.
    init(path: String, operation: String) throws(MediaError) {
        pointer = try OwnContainerInput.open(path, operation: operation) { code in
            switch code {
            case kc_averror(ENOENT): "Check the path"
            case kc_averror(EACCES): "Check that kioskcam may read the file"
            default: "The file is not a sound recording FFmpeg can read"
            }
        }
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&doomed)
    }
}

/// One decoded frame as interleaved S16: the layout a sound card plays.
private struct InterleavedS16 {
    let channels: Int
    var samples: [Int16] = []

    init(channels: Int) { self.channels = max(1, channels) }

    /// `count` frames of silence; the samples are in `samples`.
    mutating func silence(_ count: Int) {
        let needed = count * channels
        if samples.count < needed { samples = [Int16](repeating: 0, count: needed) }
        samples.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }

    /// Converts `count` frames of mixed float samples (interleaved, `channels` each)
    /// into `samples`.
    mutating func convert(_ mixed: [Float], count: Int) {
        let needed = count * channels
        if samples.count < needed { samples = [Int16](repeating: 0, count: needed) }
        for index in 0..<min(needed, mixed.count) { samples[index] = Self.s16(mixed[index]) }
    }

    /// A float sample (full scale ±1) as S16, clipped: AAC overshoots ±1 on loud sound.
    /// 16-bit sources come back sample for sample (x / 32768 × 32768).
    static func s16(_ value: Float) -> Int16 {
        guard value.isFinite else { return 0 }
        return Int16(max(-32768, min(32767, (value * 32768).rounded())))
    }
}
