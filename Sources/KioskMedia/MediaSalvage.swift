import CAVCodec
import CAVFormat
import CAVUtil
import Glibc

/// What salvage recovered from a file a crash left behind.
public struct SalvageReport: Sendable, Equatable {
    public var packets: Int
    public var videoPackets: Int
    public var seconds: Double
}

/// Recovers the playable part of an interrupted fragmented MP4 by re-muxing every
/// packet libavformat can still read into a fresh, properly closed file. No
/// re-encoding: what was on the disk is what ends up in the library.
public enum MediaSalvage {
    /// Reads every packet of a file to learn what is really playable in it.
    /// - Throws: `MediaError.invalidInput` when no media can be read at all.
    public static func inspect(_ path: String) throws(MediaError) -> SalvageReport {
        var inputContext: UnsafeMutablePointer<AVFormatContext>? = nil
        let opened = avformat_open_input(&inputContext, path, nil, nil)
        guard opened >= 0, let source = inputContext else {
            throw MediaError(.invalidInput, operation: "read media", path: path, averror: opened,
                             detail: "no readable media header (\(MediaError.describe(opened)))")
        }
        defer { avformat_close_input(&inputContext) }
        try check(avformat_find_stream_info(source, nil), .invalidInput, "read stream info", path: path)
        guard let packet = av_packet_alloc() else { throw MediaError(.io, operation: "read media", detail: "out of memory") }
        var packetHolder: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetHolder) }
        var report = SalvageReport(packets: 0, videoPackets: 0, seconds: 0)
        while av_read_frame(source, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.flags & kc_av_pkt_flag_corrupt() == 0 else { continue }
            let stream = source.pointee.streams[Int(packet.pointee.stream_index)]!
            let end = Double(packet.pointee.pts + packet.pointee.duration) * av_q2d(stream.pointee.time_base)
            report.packets += 1
            if stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO { report.videoPackets += 1 }
            report.seconds = max(report.seconds, end)
        }
        if report.packets == 0 {
            throw MediaError(.invalidInput, operation: "read media", path: path, detail: "the file holds no complete media fragment")
        }
        return report
    }

    /// - Parameters:
    ///   - input: The interrupted file.
    ///   - output: Where to write the repaired file (must not exist).
    /// - Returns: What was recovered.
    /// - Throws: `MediaError.invalidInput` when the file holds no readable media (for
    ///   instance a crash before the header was written), `.io`/`.diskFull` on write errors.
    public static func remux(input: String, output: String) throws(MediaError) -> SalvageReport {
        var inputContext: UnsafeMutablePointer<AVFormatContext>? = nil
        let opened = avformat_open_input(&inputContext, input, nil, nil)
        guard opened >= 0, let source = inputContext else {
            throw MediaError(.invalidInput, operation: "salvage", path: input, averror: opened,
                             detail: "no readable media header (\(MediaError.describe(opened)))")
        }
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
        try check(avformat_write_header(destination, nil), .muxer, "salvage: write header", path: output)
        wroteHeader = true

        var report = SalvageReport(packets: 0, videoPackets: 0, seconds: 0)
        guard let packet = av_packet_alloc() else { throw MediaError(.io, operation: "salvage", detail: "out of memory") }
        var packetHolder: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetHolder) }
        // A torn last fragment ends the loop with an error or a corrupt packet.
        while av_read_frame(source, packet) >= 0 {
            defer { av_packet_unref(packet) }
            let index = Int(packet.pointee.stream_index)
            guard index < streamMap.count, streamMap[index] >= 0,
                  packet.pointee.flags & kc_av_pkt_flag_corrupt() == 0 else { continue }
            let inStream = source.pointee.streams[index]!
            let outStream = destination.pointee.streams[Int(streamMap[index])]!
            let end = Double(packet.pointee.pts + packet.pointee.duration) * av_q2d(inStream.pointee.time_base)
            if inStream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
                report.videoPackets += 1
                report.seconds = max(report.seconds, end)
            } else if isAudioOnly {
                report.seconds = max(report.seconds, end)
            }
            av_packet_rescale_ts(packet, inStream.pointee.time_base, outStream.pointee.time_base)
            packet.pointee.stream_index = streamMap[index]
            packet.pointee.pos = -1
            try check(av_interleaved_write_frame(destination, packet), .io, "salvage: write packet", path: output)
            report.packets += 1
        }
        try check(av_write_trailer(destination), .io, "salvage: write trailer", path: output)
        if report.packets == 0 {
            wroteHeader = false
            throw MediaError(.invalidInput, operation: "salvage", path: input, detail: "the file holds no complete media fragment")
        }
        return report
    }
}
