import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// What salvage recovered from a file a crash left behind.
public struct SalvageReport: Sendable, Equatable {
    public var packets: Int
    public var videoPackets: Int
    public var seconds: Double
    /// What each track holds, read back: for the header's truth (`HeaderTruthWriter`).
    public var tracks: [MP4HeaderTruth.Track] = []
}

/// Recovers the playable part of an interrupted fragmented MP4 by re-muxing every
/// packet libavformat can still read into a fresh, properly closed file. No
/// re-encoding: what was on the disk is what ends up in the library.
public enum MediaSalvage {
    /// Reads every packet of a file to learn what is really playable in it. A file only
    /// counts as playable if every stream has a known codec (and a picture size), and the
    /// first picture (or, without video, the first sound) really decodes: damage to the
    /// header's codec set-up would otherwise put a file in the library that plays nowhere.
    /// - Throws: `MediaError.invalidInput` when no media can be read or decoded.
    public static func inspect(_ path: String) throws(MediaError) -> SalvageReport {
        let source = try OwnContainerInput.open(path, operation: "read media", detail: "no readable media header")
        var inputContext: UnsafeMutablePointer<AVFormatContext>? = source
        defer { avformat_close_input(&inputContext) }
        try check(avformat_find_stream_info(source, nil), .invalidInput, "read stream info", path: path)
        let probe = try FirstFrameProbe(source, path: path)
        guard let packet = av_packet_alloc() else { throw MediaError(.io, operation: "read media", detail: "out of memory") }
        var packetHolder: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetHolder) }
        var report = SalvageReport(packets: 0, videoPackets: 0, seconds: 0)
        var rates: [AVMediaType: (rate: PeakBitrate, start: Double, end: Double)] = [:]
        while av_read_frame(source, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.flags & kc_av_pkt_flag_corrupt() == 0 else { continue }
            let index = Int(packet.pointee.stream_index)
            guard index >= 0, index < Int(source.pointee.nb_streams), let stream = source.pointee.streams[index] else { continue }
            let end = endSeconds(packet, timeBase: stream.pointee.time_base)
            report.packets += 1
            if stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO { report.videoPackets += 1 }
            report.seconds = max(report.seconds, end)
            let type = stream.pointee.codecpar.pointee.codec_type
            let start = startSeconds(packet, timeBase: stream.pointee.time_base)
            var track = rates[type] ?? (PeakBitrate(), start, 0)
            track.rate.add(time: Int64(start * 1e9), bytes: Int64(packet.pointee.size))
            track.start = min(track.start, start)
            track.end = max(track.end, end)
            rates[type] = track
            probe.offer(packet)
        }
        for (type, track) in rates {
            guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO else { continue }
            report.tracks.append(MP4HeaderTruth.Track(kind: type == AVMEDIA_TYPE_VIDEO ? .video : .audio,
                                                      startNanoseconds: Int64(track.start * 1e9), endNanoseconds: Int64(track.end * 1e9),
                                                      bytes: track.rate.totalBytes,
                                                      peakBitsPerSecond: track.rate.bitsPerSecond, largestSample: track.rate.largestSample))
        }
        if report.packets == 0 {
            throw MediaError(.invalidInput, operation: "read media", path: path, detail: "the file holds no complete media fragment")
        }
        guard probe.decoded else {
            throw MediaError(.invalidInput, operation: "read media", path: path,
                             detail: "its first \(probe.mediaName) cannot be decoded (the codec set-up is damaged)")
        }
        return report
    }

    /// Where a packet ends, in seconds; 0 for a packet without a usable time. The numbers
    /// come from a damaged file: no sum may overflow and no result may be out of range.
    static func endSeconds(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational) -> Double {
        let pts = packet.pointee.pts
        guard pts != kc_av_nopts_value() else { return 0 }
        let (sum, overflow) = pts.addingReportingOverflow(max(0, packet.pointee.duration))
        return seconds(overflow ? pts : sum, timeBase: timeBase)
    }

    /// Where a packet starts, in seconds, within the same bounds as `endSeconds`.
    static func startSeconds(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational) -> Double {
        let pts = packet.pointee.pts
        guard pts != kc_av_nopts_value() else { return 0 }
        return seconds(pts, timeBase: timeBase)
    }

    /// `ticks` in seconds; 0 for an unusable time base. A recording is never longer than a
    /// day; larger values (up to a week) are damage, not time, and are clamped.
    private static func seconds(_ ticks: Int64, timeBase: AVRational) -> Double {
        guard timeBase.den > 0, timeBase.num > 0 else { return 0 }
        let seconds = Double(ticks) * av_q2d(timeBase)
        return seconds.isFinite ? min(max(0, seconds), 86_400 * 7) : 0
    }

    /// - Parameters:
    ///   - input: The interrupted file.
    ///   - output: Where to write the repaired file (must not exist).
    /// - Returns: What was recovered.
    /// - Throws: `MediaError.invalidInput` when the file holds no readable media (for
    ///   instance a crash before the header was written), `.io`/`.diskFull` on write errors.
    public static func remux(input: String, output: String) throws(MediaError) -> SalvageReport {
        let source = try OwnContainerInput.open(input, operation: "salvage", detail: "no readable media header")
        var inputContext: UnsafeMutablePointer<AVFormatContext>? = source
        defer { avformat_close_input(&inputContext) }
        try check(avformat_find_stream_info(source, nil), .invalidInput, "salvage: read stream info", path: input)

        let isAudioOnly = (0..<Int(source.pointee.nb_streams)).allSatisfy {
            source.pointee.streams[$0]!.pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_VIDEO
        }
        var outputContext: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&outputContext, nil, isAudioOnly ? "ipod" : "mp4", output),
                  .muxer, "salvage: create output", path: output)
        guard let destination = outputContext else { throw MediaError(.muxer, operation: "salvage", path: output) }
        var wroteHeader = false
        defer {
            if destination.pointee.pb != nil { avio_closep(&destination.pointee.pb) }
            avformat_free_context(destination)
            if !wroteHeader { unlink(output) }
        }
        var streamMap = [Int32](repeating: -1, count: Int(source.pointee.nb_streams))
        for index in 0..<Int(source.pointee.nb_streams) {
            let inStream = source.pointee.streams[index]!
            let type = inStream.pointee.codecpar.pointee.codec_type
            guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO,
                  let outStream = avformat_new_stream(destination, nil) else { continue }
            try check(avcodec_parameters_copy(outStream.pointee.codecpar, inStream.pointee.codecpar), .muxer, "salvage: copy stream", path: output)
            outStream.pointee.codecpar.pointee.codec_tag = 0
            outStream.pointee.time_base = inStream.pointee.time_base
            outStream.pointee.avg_frame_rate = inStream.pointee.avg_frame_rate
            streamMap[index] = outStream.pointee.index
        }
        av_dict_copy(&destination.pointee.metadata, source.pointee.metadata, 0)
        try check(avio_open(&destination.pointee.pb, output, kc_avio_flag_write()), .io, "salvage: create file", path: output)
        try checkMuxing(avformat_write_header(destination, nil), .muxer, "salvage: write header", input: input, output: output)
        wroteHeader = true

        var report = SalvageReport(packets: 0, videoPackets: 0, seconds: 0)
        guard let packet = av_packet_alloc() else { throw MediaError(.io, operation: "salvage", detail: "out of memory") }
        var packetHolder: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetHolder) }
        // A torn last fragment ends the loop with an error or a corrupt packet.
        while av_read_frame(source, packet) >= 0 {
            defer { av_packet_unref(packet) }
            let index = Int(packet.pointee.stream_index)
            guard index >= 0, index < streamMap.count, streamMap[index] >= 0,
                  packet.pointee.flags & kc_av_pkt_flag_corrupt() == 0 else { continue }
            let inStream = source.pointee.streams[index]!
            let outStream = destination.pointee.streams[Int(streamMap[index])]!
            let end = endSeconds(packet, timeBase: inStream.pointee.time_base)
            if inStream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
                report.videoPackets += 1
                report.seconds = max(report.seconds, end)
            } else if isAudioOnly {
                report.seconds = max(report.seconds, end)
            }
            av_packet_rescale_ts(packet, inStream.pointee.time_base, outStream.pointee.time_base)
            packet.pointee.stream_index = streamMap[index]
            packet.pointee.pos = -1
            try checkMuxing(av_interleaved_write_frame(destination, packet), .io, "salvage: write packet", input: input, output: output)
            report.packets += 1
        }
        try checkMuxing(av_write_trailer(destination), .io, "salvage: write trailer", input: input, output: output)
        if report.packets == 0 {
            wroteHeader = false
            throw MediaError(.invalidInput, operation: "salvage", path: input, detail: "the file holds no complete media fragment")
        }
        return report
    }
}

extension MediaSalvage {
    /// `check` for the muxer of a re-mux. What the storage or the machine says (a full disk,
    /// a write error, no memory, the card gone) may pass and keeps its code. Any other
    /// refusal of the muxer is about what the damaged file holds (EINVAL for a stream
    /// without codec set-up or timestamps that run backwards, INVALIDDATA for a malformed
    /// packet): no retry changes it, so it is `invalidInput`, like media that cannot be read.
    static func checkMuxing(_ result: Int32, _ code: MediaError.Code, _ operation: String,
                            input: String, output: String) throws(MediaError) {
        guard result < 0 else { return }
        guard passingErrors.contains(result) else {
            throw MediaError(.invalidInput, operation: operation, path: input, averror: result,
                             detail: "the muxer refuses what the file holds")
        }
        try check(result, code, operation, path: output)
    }

    /// Errors of writing a file that say nothing about what is written.
    static let passingErrors = Set([ENOSPC, EDQUOT, EIO, EROFS, EFBIG, ENOMEM, EINTR, EAGAIN, ENODEV, ENXIO].map(kc_averror))
}

/// Decodes the first frame of a file's main stream (video if there is one, else sound),
/// to prove that what salvage would keep really plays.
private final class FirstFrameProbe {
    private let streamIndex: Int32
    private let codec: CodecContext
    private let frame: Frame
    private var packetsTried = 0
    private(set) var decoded = false
    let mediaName: String

    /// - Throws: `MediaError.invalidInput` when a stream has no known codec or no picture
    ///   size, or there is no decoder for the main stream.
    init(_ source: UnsafeMutablePointer<AVFormatContext>, path: String) throws(MediaError) {
        var main: Int32 = -1
        for index in 0..<Int(source.pointee.nb_streams) {
            guard let parameters = source.pointee.streams[index]?.pointee.codecpar else { continue }
            let type = parameters.pointee.codec_type
            guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO else { continue }
            guard parameters.pointee.codec_id != AV_CODEC_ID_NONE else {
                throw MediaError(.invalidInput, operation: "read media", path: path, detail: "stream \(index) has no known codec")
            }
            if type == AVMEDIA_TYPE_VIDEO {
                guard parameters.pointee.width > 0, parameters.pointee.height > 0 else {
                    throw MediaError(.invalidInput, operation: "read media", path: path, detail: "the video stream has no picture size")
                }
                if main < 0 || source.pointee.streams[Int(main)]!.pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_VIDEO {
                    main = Int32(index)
                }
            } else if main < 0 {
                main = Int32(index)
            }
        }
        guard main >= 0, let stream = source.pointee.streams[Int(main)], let parameters = stream.pointee.codecpar else {
            throw MediaError(.invalidInput, operation: "read media", path: path, detail: "the file has no video or sound stream")
        }
        let isVideo = parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO
        mediaName = isVideo ? "picture" : "sound"
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw MediaError(.invalidInput, operation: "read media", path: path, detail: "no decoder for its \(isVideo ? "video" : "sound")")
        }
        streamIndex = main
        codec = try CodecContext(decoder, operation: "open a decoder to check \(path)")
        frame = try Frame(operation: "check \(path)")
        guard avcodec_parameters_to_context(codec.pointer, parameters) >= 0 else {
            throw MediaError(.invalidInput, operation: "read media", path: path, detail: "its codec parameters are damaged")
        }
        codec.pointer.pointee.thread_count = 1
        // Damage is what this looks for: the decoder's own complaints stay out of the log.
        codec.pointer.pointee.log_level_offset = AV_LOG_INFO - AV_LOG_ERROR
        guard avcodec_open2(codec.pointer, decoder, nil) >= 0 else {
            throw MediaError(.invalidInput, operation: "read media", path: path, detail: "its codec set-up is damaged")
        }
    }

    /// Feeds one packet of the main stream until a frame comes out (at most 120 packets:
    /// a few keyframe intervals).
    func offer(_ packet: UnsafeMutablePointer<AVPacket>) {
        guard !decoded, packetsTried < 120, packet.pointee.stream_index == streamIndex else { return }
        packetsTried += 1
        guard avcodec_send_packet(codec.pointer, packet) >= 0 else { return }
        if avcodec_receive_frame(codec.pointer, frame.pointer) >= 0 {
            decoded = frame.pointer.pointee.width > 0 || frame.pointer.pointee.nb_samples > 0
            av_frame_unref(frame.pointer)
        }
    }
}
