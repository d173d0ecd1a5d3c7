import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Muxes encoded packets into one *fragmented* MP4 (or M4A): a fragment per keyframe
/// (≤ 1 s; every second for sound only), so that a power cut loses at most the fragment
/// being built. No encoding here — the graph encodes once and several files (and
/// streams) take the same packets. One owner, one thread; `finish()` or `abandon()`
/// must end it.
public final class PacketFileWriter {
    public let path: String
    /// Time zero of the file: the capture time of its first video frame (or first sound).
    public let start: MonotonicInstant
    private let video: StreamParameters?
    private let audio: StreamParameters?
    private let metadata: [String: String]
    private let syncInterval: Double
    private let output: FileOutput
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private var headerWritten = false
    private var closed = false
    private var lastVideoPTS: Int64 = -1
    private var lastVideoEnd: Int64 = 0
    private var lastAudioEnd: Int64 = 0
    private var lastSyncNanoseconds: Int64 = 0
    /// Sound that came before the first video frame was encoded (an encoder holds frames
    /// back for a while): written after the header, from `start` on.
    private var waitingAudio: [EncodedPacket] = []
    /// What each track holds so far, for the header's truth at `finish()`.
    private var videoRate = PeakBitrate()
    private var audioRate = PeakBitrate()
    private var firstVideoStart: Int64?
    private var firstAudioStart: Int64?
    /// The init segment as it went to the file (with the room for `mehd`).
    private var initSegment: [UInt8] = []
    /// Video frames written.
    public private(set) var videoFrameCount = 0
    /// Encoded bytes handed to the muxer so far: what the file will hold once the open
    /// fragment is flushed. Size-based segment cuts use this, as it is exact now.
    public private(set) var bytesEncoded: Int64 = 0

    /// Creates the file (failing if one exists); the header follows with the first packet,
    /// once the video's SPS/PPS are known.
    /// - Parameters:
    ///   - video: nil for a sound-only (.m4a) file.
    ///   - audio: nil for a silent video.
    ///   - start: Time zero: packets before it are not written.
    /// - Throws: `MediaError.io`/`.diskFull` when the file cannot be created.
    public init(path: String, video: StreamParameters?, audio: StreamParameters?, metadata: [String: String] = [:],
                syncInterval: Double = 2, start: MonotonicInstant) throws(MediaError) {
        self.path = path
        self.video = video
        self.audio = audio
        self.metadata = metadata
        self.syncInterval = syncInterval
        self.start = start
        output = try FileOutput(creating: path)
    }

    deinit {
        if !closed { abandon() }
    }

    /// Bytes in the file so far (what has reached the kernel).
    public var bytesWritten: Int64 { output.bytesWritten }

    /// Seconds of video (or sound, for a sound-only file) written so far, to the end of
    /// the last frame.
    public var secondsWritten: Double { Double(video != nil ? lastVideoEnd : lastAudioEnd) / 1e9 }

    /// Writes one packet. Video must begin with a keyframe (earlier packets are skipped);
    /// packets before `start` are skipped.
    /// - Throws: `MediaError` on muxer or disk failure (`.diskFull` for ENOSPC).
    public func write(_ packet: EncodedPacket) throws(MediaError) {
        guard !closed else { return }
        let offset = packet.time.nanoseconds(since: start)
        guard offset >= 0 else { return }
        let stream: UnsafeMutablePointer<AVStream>?
        switch packet.media {
        case .video:
            guard video != nil, headerWritten || packet.isKeyframe else { return }
            if !headerWritten { try writeHeader() }
            stream = videoStream
        case .audio:
            guard audio != nil else { return }
            // A video file starts at its first frame: sound waits for it (a bounded wait:
            // 10 s of AAC frames, the oldest going first).
            guard video == nil || headerWritten else {
                if waitingAudio.count >= 500 { waitingAudio.removeFirst() }
                waitingAudio.append(packet)
                return
            }
            if !headerWritten { try writeHeader() }
            stream = audioStream
        }
        guard let stream, let format, let reference = packet.reference() else { return }
        var owned: UnsafeMutablePointer<AVPacket>? = reference
        defer { av_packet_free(&owned) }
        let timeBase = stream.pointee.time_base
        var pts = Self.rescale(offset, to: timeBase)
        if packet.media == .video {
            // Timestamps must rise strictly; a camera that repeats one is nudged forward.
            pts = max(pts, lastVideoPTS + 1)
            lastVideoPTS = pts
            videoFrameCount += 1
            lastVideoEnd = offset + packet.durationNanoseconds
            videoRate.add(time: offset, bytes: Int64(reference.pointee.size))
            if firstVideoStart == nil { firstVideoStart = offset }
        } else {
            lastAudioEnd = offset + packet.durationNanoseconds
            audioRate.add(time: offset, bytes: Int64(reference.pointee.size))
            if firstAudioStart == nil { firstAudioStart = offset }
        }
        reference.pointee.pts = pts
        reference.pointee.dts = pts
        reference.pointee.duration = max(1, Self.rescale(packet.durationNanoseconds, to: timeBase))
        reference.pointee.stream_index = stream.pointee.index
        reference.pointee.pos = -1
        bytesEncoded += Int64(reference.pointee.size)
        let result = av_interleaved_write_frame(format, reference)
        if result < 0 { try mapWriteFailure(result, "write packet") }
        if offset - lastSyncNanoseconds >= Int64(syncInterval * 1e9) {
            lastSyncNanoseconds = offset
            output.sync()
        }
    }

    /// Nanoseconds in a stream's time base, rounded, without overflow.
    static func rescale(_ nanoseconds: Int64, to timeBase: AVRational) -> Int64 {
        av_rescale_q(nanoseconds, AVRational(num: 1, den: 1_000_000_000), timeBase)
    }

    private func writeHeader() throws(MediaError) {
        let muxerName = video == nil ? "ipod" : "mp4"
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&context, nil, muxerName, nil), .muxer, "create \(muxerName) muxer", path: path)
        guard let context else { throw MediaError(.muxer, operation: "create muxer", path: path) }
        format = context
        context.pointee.pb = output.io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // Hand each finished fragment to the kernel at once instead of buffering it.
        context.pointee.flush_packets = 1
        context.pointee.avoid_negative_ts = 0  // AVFMT_AVOID_NEG_TS_DISABLED: times are ours
        if let video {
            guard video.hasExtradata else {
                throw MediaError(.muxer, operation: "write MP4 header", path: path,
                                 detail: "the video encoder gave no SPS/PPS with its first keyframe")
            }
            videoStream = try addStream(video)
            videoStream?.pointee.avg_frame_rate = AVRational(num: Int32(max(video.framesPerSecond, 1)), den: 1)
        }
        if let audio { audioStream = try addStream(audio) }
        for (key, value) in metadata { av_dict_set(&context.pointee.metadata, key, value, 0) }
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        // empty_moov + fragments: the file is playable up to its last complete fragment.
        // use_metadata_tags keeps our own keys (the device id) instead of dropping them.
        if video != nil {
            av_dict_set(&options, "movflags", "+frag_keyframe+empty_moov+default_base_moof+use_metadata_tags", 0)
        } else {
            av_dict_set(&options, "movflags", "+empty_moov+default_base_moof+use_metadata_tags", 0)
            av_dict_set(&options, "frag_duration", "1000000", 0)
        }
        // The header is kept in memory and amended before it goes to the file: room for the
        // `mehd` that `finish()` fills in (MP4HeaderTruth).
        output.startCapture()
        let header = avformat_write_header(context, &options)
        if header >= 0 { avio_flush(context.pointee.pb) }
        let (captured, written, result) = output.writeCaptured { MP4HeaderTruth.reservingMovieExtendsDuration(in: $0) ?? $0 }
        try check(header, .muxer, "write MP4 header", path: path)
        if result < 0 { try mapWriteFailure(result, "write MP4 header") }
        // The muxer counts file offsets itself (the fragment index at the end records where
        // each fragment starts): it learns of the added bytes here, with nothing buffered.
        context.pointee.pb.pointee.pos += Int64(written.count - captured.count)
        initSegment = written
        headerWritten = true
        let waiting = waitingAudio
        waitingAudio = []
        for packet in waiting { try write(packet) }
    }

    private func addStream(_ parameters: StreamParameters) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(format, nil) else {
            throw MediaError(.muxer, operation: "add stream", path: path, detail: "out of memory")
        }
        try parameters.configure(stream, path: path)
        return stream
    }

    private func mapWriteFailure(_ result: Int32, _ operation: String) throws(MediaError) {
        if output.writeErrno != 0 {
            try check(kc_averror(output.writeErrno), .io, operation, path: path)
        }
        try check(result, .muxer, operation, path: path)
    }

    /// Ends the video track before the file (at a segment cut or a stop, while the sound
    /// catches up with the end): the interleaving queue, where video waits for sound, and
    /// the open fragment go to the file now. Otherwise they stayed in memory until the
    /// sound arrived — up to 2 s under load — and a power cut then lost the segment's last
    /// second on top of the next one's first (2.0 s in the power-cut battery).
    /// - Throws: `MediaError` on a write failure (`.diskFull` for ENOSPC).
    public func flushVideoTail() throws(MediaError) {
        guard !closed, headerWritten, let format else { return }
        // Both calls take nil as "flush": the first the interleaver, the second the fragment.
        var result = av_interleaved_write_frame(format, nil)
        if result >= 0 { result = av_write_frame(format, nil) }
        if result < 0 { try mapWriteFailure(result, "write the last video fragment") }
    }

    /// Writes the trailer and closes the file.
    /// - Throws: `MediaError` if the tail could not be written; the fragments already on
    ///   disk stay playable either way. A file that never got a packet throws `.invalidInput`.
    public func finish() throws(MediaError) {
        guard !closed else { return }
        defer { tearDown() }
        guard headerWritten, let format else {
            throw MediaError(.invalidInput, operation: "finish recording", path: path, detail: "no frame was written")
        }
        let result = av_write_trailer(format)
        if result < 0 { try mapWriteFailure(result, "write MP4 trailer") }
        output.sync()  // the fragments are on the disk before the header is touched
        _ = try HeaderTruthWriter.write(MP4HeaderTruth.patches(initSegment: initSegment, tracks: tracks), fd: output.fd, path: path)
    }

    /// What each track really holds: durations from time zero, bytes and bitrates.
    var tracks: [MP4HeaderTruth.Track] {
        var tracks: [MP4HeaderTruth.Track] = []
        if video != nil {
            tracks.append(MP4HeaderTruth.Track(kind: .video, startNanoseconds: firstVideoStart ?? 0, endNanoseconds: lastVideoEnd,
                                               bytes: videoRate.totalBytes,
                                               peakBitsPerSecond: videoRate.bitsPerSecond, largestSample: videoRate.largestSample))
        }
        if audio != nil {
            tracks.append(MP4HeaderTruth.Track(kind: .audio, startNanoseconds: firstAudioStart ?? 0, endNanoseconds: lastAudioEnd,
                                               bytes: audioRate.totalBytes,
                                               peakBitsPerSecond: audioRate.bitsPerSecond, largestSample: audioRate.largestSample))
        }
        return tracks
    }

    /// Closes without a trailer (after an error); what reached the disk stays there for salvage.
    public func abandon() { tearDown() }

    private func tearDown() {
        guard !closed else { return }
        closed = true
        if let format {
            format.pointee.pb = nil
            avformat_free_context(format)
            self.format = nil
        }
        output.close()
    }
}
