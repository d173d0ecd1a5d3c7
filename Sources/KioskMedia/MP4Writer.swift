import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Everything needed to start one MP4/M4A file.
public struct MP4WriterSettings: Sendable {
    public var path: String
    /// nil for an audio-only (.m4a) file.
    public var video: VideoTrackSettings?
    /// nil for a silent video.
    public var audio: AudioTrackSettings?
    /// Written into the file's metadata (`creation_time`, `comment`, …).
    public var metadata: [String: String]
    /// Push data to the device at least this often (seconds).
    public var syncInterval: Double

    public init(path: String, video: VideoTrackSettings?, audio: AudioTrackSettings?,
                metadata: [String: String] = [:], syncInterval: Double = 2) {
        self.path = path
        self.video = video
        self.audio = audio
        self.metadata = metadata
        self.syncInterval = syncInterval
    }
}

/// Encodes and muxes one recording file: H.264 and/or AAC into a *fragmented* MP4
/// (a fragment per keyframe, ≤ 1 s), so that a power cut loses at most the fragment
/// being built. One owner, one thread; `finish()` or `abandon()` must end it.
public final class MP4Writer {
    public let settings: MP4WriterSettings
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private let output: FileOutput
    private var videoEncoder: VideoEncoder?
    private var audioEncoder: AudioEncoder?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private var lastVideoPTS: Int64 = -1
    private var lastSyncPTS: Int64 = 0
    private var closed = false
    private var videoFinished = false
    /// Video frames handed to the encoder.
    public private(set) var videoFrameCount = 0

    /// Creates the file, opens the encoders and writes the header.
    /// - Throws: `MediaError` — `.encoderNotFound`/`.encoderRejectedSettings` for
    ///   encoder trouble, `.io`/`.diskFull` when the file cannot be created. On error
    ///   nothing is left on disk.
    public init(settings: MP4WriterSettings) throws(MediaError) {
        self.settings = settings
        output = try FileOutput(creating: settings.path)
        do {
            try open()
        } catch {
            tearDown()
            unlink(settings.path)
            throw error
        }
    }

    deinit {
        if !closed { abandon() }
    }

    private func open() throws(MediaError) {
        let muxerName = settings.video == nil ? "ipod" : "mp4"
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&context, nil, muxerName, nil), .muxer, "create \(muxerName) muxer", path: settings.path)
        guard let context else { throw MediaError(.muxer, operation: "create muxer", path: settings.path) }
        format = context
        context.pointee.pb = output.io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // Hand each finished fragment to the kernel at once instead of buffering it.
        context.pointee.flush_packets = 1
        // AAC starts 1024 samples early (encoder priming), which the audio track's edit
        // list absorbs. Shifting every stream to make that non-negative instead would
        // stretch the first video frame by 21 ms.
        context.pointee.avoid_negative_ts = 0  // AVFMT_AVOID_NEG_TS_DISABLED
        let globalHeader = (context.pointee.oformat.pointee.flags & kc_avfmt_globalheader()) != 0

        if let video = settings.video {
            let encoder = try VideoEncoder(settings: video, globalHeader: globalHeader)
            videoEncoder = encoder
            videoStream = try addStream(for: encoder.context)
            videoStream?.pointee.avg_frame_rate = AVRational(num: Int32(video.input.framesPerSecond), den: 1)
        }
        if let audio = settings.audio {
            let encoder = try AudioEncoder(settings: audio, globalHeader: globalHeader)
            audioEncoder = encoder
            audioStream = try addStream(for: encoder.context)
        }
        for (key, value) in settings.metadata {
            av_dict_set(&context.pointee.metadata, key, value, 0)
        }
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        // empty_moov + fragments: the file is playable up to its last complete fragment.
        // use_metadata_tags keeps our own keys (the device id) instead of dropping them.
        if settings.video != nil {
            av_dict_set(&options, "movflags", "+frag_keyframe+empty_moov+default_base_moof+use_metadata_tags", 0)
        } else {
            av_dict_set(&options, "movflags", "+empty_moov+default_base_moof+use_metadata_tags", 0)
            av_dict_set(&options, "frag_duration", "1000000", 0)
        }
        try check(avformat_write_header(context, &options), .muxer, "write MP4 header", path: settings.path)
    }

    private func addStream(for codec: UnsafeMutablePointer<AVCodecContext>) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(format, nil) else {
            throw MediaError(.muxer, operation: "add stream", path: settings.path, detail: "out of memory")
        }
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, codec), .muxer, "add stream", path: settings.path)
        stream.pointee.time_base = codec.pointee.time_base
        return stream
    }

    /// Bytes in the file so far (what has reached the kernel).
    public var bytesWritten: Int64 { output.bytesWritten }

    /// Encoded bytes handed to the muxer so far: what the file will hold once the open
    /// fragment is flushed. Size-based segment cuts use this, as it is exact now.
    public private(set) var bytesEncoded: Int64 = 0

    /// Seconds of video (or audio, for an audio-only file) written so far.
    public var secondsWritten: Double {
        if let videoEncoder {
            // To the end of the last frame, not its start.
            let frame = 1 / Double(max(videoEncoder.settings.input.framesPerSecond, 1))
            return lastVideoPTS < 0 ? 0 : Double(lastVideoPTS) / 90_000 + frame
        }
        guard let audioEncoder else { return 0 }
        return Double(audioEncoder.samplesAccepted) / Double(audioEncoder.sampleRate)
    }

    /// Encodes one video frame.
    /// - Parameters:
    ///   - pixels: A tightly packed frame in the configured input layout.
    ///   - nanosecondsFromStart: Capture time relative to the file's first frame.
    ///   - forceKeyframe: Start a GOP here.
    /// - Throws: `MediaError` on encoder or disk failure (`.diskFull` for ENOSPC).
    public func writeVideo(_ pixels: UnsafeRawBufferPointer, nanosecondsFromStart: Int64,
                           forceKeyframe: Bool = false) throws(MediaError) {
        guard let videoEncoder, !videoFinished, let base = pixels.baseAddress else { return }
        guard pixels.count >= videoEncoder.settings.input.frameByteCount else {
            throw MediaError(.invalidInput, operation: "encode video frame", path: settings.path,
                             detail: "frame has \(pixels.count) bytes, \(videoEncoder.settings.input) needs \(videoEncoder.settings.input.frameByteCount)")
        }
        // Timestamps must rise strictly; a camera that repeats one is nudged forward.
        let pts = max((nanosecondsFromStart * 9 + 50_000) / 100_000, lastVideoPTS + 1)
        lastVideoPTS = pts
        videoFrameCount += 1
        try videoEncoder.encode(base, pts: pts, forceKeyframe: forceKeyframe || videoFrameCount == 1) { packet throws(MediaError) in
            try self.write(packet, from: videoEncoder.context, to: self.videoStream)
        }
        if pts - lastSyncPTS >= Int64(settings.syncInterval * 90_000) {
            lastSyncPTS = pts
            output.sync()
        }
    }

    /// Encodes interleaved S16 samples that continue the audio track without a gap.
    public func writeAudio(_ samples: UnsafeBufferPointer<Int16>) throws(MediaError) {
        guard let audioEncoder else { return }
        try audioEncoder.encode(samples) { packet throws(MediaError) in
            try self.write(packet, from: audioEncoder.context, to: self.audioStream)
        }
        if videoEncoder == nil {
            let samplesPerSync = Int64(settings.syncInterval * Double(audioEncoder.sampleRate))
            if audioEncoder.samplesAccepted - lastSyncPTS >= samplesPerSync {
                lastSyncPTS = audioEncoder.samplesAccepted
                output.sync()
            }
        }
    }

    private func write(_ packet: UnsafeMutablePointer<AVPacket>, from codec: UnsafeMutablePointer<AVCodecContext>,
                       to stream: UnsafeMutablePointer<AVStream>?) throws(MediaError) {
        guard let stream, let format else { return }
        if packet.pointee.duration <= 0, codec.pointee.codec_type == AVMEDIA_TYPE_VIDEO, codec.pointee.framerate.num > 0 {
            // Encoders leave it unset; without it the muxer guesses each fragment's last sample.
            packet.pointee.duration = av_rescale_q(1, av_inv_q(codec.pointee.framerate), codec.pointee.time_base)
        }
        av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
        packet.pointee.stream_index = stream.pointee.index
        bytesEncoded += Int64(packet.pointee.size)
        let result = av_interleaved_write_frame(format, packet)
        if result < 0 { try mapWriteFailure(result, "write packet") }
    }

    private func mapWriteFailure(_ result: Int32, _ operation: String) throws(MediaError) {
        if output.writeErrno != 0 {
            try check(kc_averror(output.writeErrno), .io, operation, path: settings.path)
        }
        try check(result, .muxer, operation, path: settings.path)
    }

    /// Ends the video track before the file (at a segment cut, or a stop, while the sound
    /// catches up with the end): the encoder's last frames and the open fragment go to
    /// the file now. Otherwise they stayed in memory until the sound arrived and the file
    /// was finished — up to 2 s under load — and a power cut then lost the segment's last
    /// second on top of the next segment's first (2.0 s in the power-cut battery).
    /// Frames written after this are ignored.
    /// - Throws: `MediaError` on encoder or disk failure.
    public func finishVideo() throws(MediaError) {
        guard !closed, !videoFinished, let videoEncoder, let format else { return }
        videoFinished = true
        try videoEncoder.flush { packet throws(MediaError) in
            try self.write(packet, from: videoEncoder.context, to: self.videoStream)
        }
        // Out of the interleaving queue (where video waits for sound), then out of the
        // muxer's open fragment; both calls take nil as "flush".
        var result = av_interleaved_write_frame(format, nil)
        if result >= 0 { result = av_write_frame(format, nil) }
        if result < 0 { try mapWriteFailure(result, "write the last video fragment") }
    }

    /// Drains the encoders, writes the trailer and closes the file.
    /// - Throws: `MediaError` if the tail could not be written; the fragments already
    ///   on disk stay playable either way.
    public func finish() throws(MediaError) {
        guard !closed else { return }
        defer { tearDown() }
        if let videoEncoder, !videoFinished {
            try videoEncoder.flush { packet throws(MediaError) in
                try self.write(packet, from: videoEncoder.context, to: self.videoStream)
            }
        }
        if let audioEncoder {
            try audioEncoder.flush { packet throws(MediaError) in
                try self.write(packet, from: audioEncoder.context, to: self.audioStream)
            }
        }
        if let format {
            let result = av_write_trailer(format)
            if result < 0 { try mapWriteFailure(result, "write MP4 trailer") }
        }
        output.sync()  // before tearDown closes the file
    }

    /// Closes without draining or a trailer (after an error); what reached the disk
    /// stays there for salvage.
    public func abandon() { tearDown() }

    private func tearDown() {
        guard !closed else { return }
        closed = true
        videoEncoder = nil
        audioEncoder = nil
        if let format {
            format.pointee.pb = nil
            avformat_free_context(format)
            self.format = nil
        }
        output.close()
    }
}
