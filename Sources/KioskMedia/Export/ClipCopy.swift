import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// What a recording holds, as far as cutting it is concerned: its length, its streams,
/// and where its keyframes are. Read once, by walking the packets (no decoding).
public struct RecordingOutline: Sendable, Equatable {
    /// Seconds, to the end of the last packet of the main stream (video, else sound).
    public var length: Double
    public var hasVideo: Bool
    public var hasAudio: Bool
    /// Video keyframe times in seconds from the start, ascending; empty without video.
    public var keyframes: [Double]
    /// Seconds per video frame (from the stream's frame rate, else the packets); 0 without video.
    public var frameDuration: Double

    /// The keyframe a stream copy must start from to show `time`: the last one at or
    /// before it (half a frame of slack, as times typed by a person are rounded).
    public func keyframe(atOrBefore time: Double) -> Double? {
        let slack = frameDuration / 2
        return keyframes.last { $0 <= time + slack }
    }
}

/// What a stream-copy cut wrote.
public struct ClipCopyReport: Sendable, Equatable {
    /// Where the copy starts in the source, in seconds (a keyframe for video).
    public var start: Double
    public var end: Double
    public var videoPackets: Int
    public var audioPackets: Int
}

/// Cuts recordings without re-encoding: packets are read with libavformat and the
/// ones in range written to a new file, their timestamps moved so the clip starts at 0.
public enum ClipCopy {
    /// Walks a recording's packets to learn its length and keyframes.
    /// - Throws: `MediaError.invalidInput` when the file is not media FFmpeg reads, has
    ///   neither video nor sound, or has a stream with an unusable time base;
    ///   `.io` when reading fails.
    public static func outline(of path: String) throws(MediaError) -> RecordingOutline {
        MediaLibraryLog.quietByDefault
        let input = try ClipInputFile(path: path)
        let source = input.pointer
        let streams = try input.mediaStreams()
        let packet = try Packet(operation: "read \(path)")
        var outline = RecordingOutline(length: 0, hasVideo: streams.video != nil, hasAudio: streams.audio != nil,
                                       keyframes: [], frameDuration: 0)
        var videoEnd = 0.0, audioEnd = 0.0
        var smallestVideoStep = Double.infinity, lastVideoTime: Double? = nil
        while true {
            let read = av_read_frame(source, packet.pointer)
            if read == kc_averror_eof() { break }
            if read < 0 {
                // A torn tail still leaves the part before it to cut from.
                if videoEnd > 0 || audioEnd > 0 { break }
                try check(read, .invalidInput, "read packets", path: path, hint: "The file is damaged; try `kioskcam salvage`")
            }
            defer { av_packet_unref(packet.pointer) }
            let index = packet.pointer.pointee.stream_index
            guard let time = input.seconds(packet.pointer) else { continue }
            let end = time + input.durationSeconds(packet.pointer)
            if index == streams.video {
                videoEnd = max(videoEnd, end)
                if packet.pointer.pointee.flags & kc_av_pkt_flag_key() != 0 { outline.keyframes.append(time) }
                if let last = lastVideoTime, time > last { smallestVideoStep = min(smallestVideoStep, time - last) }
                lastVideoTime = time
            } else if index == streams.audio {
                audioEnd = max(audioEnd, end)
            }
        }
        outline.keyframes.sort()
        outline.length = outline.hasVideo ? videoEnd : audioEnd
        if let video = streams.video, let stream = source.pointee.streams[Int(video)] {
            let rate = stream.pointee.avg_frame_rate
            if rate.num > 0, rate.den > 0 {
                outline.frameDuration = Double(rate.den) / Double(rate.num)
            } else if smallestVideoStep.isFinite {
                outline.frameDuration = smallestVideoStep
            }
        }
        guard outline.length > 0, !outline.hasVideo || !outline.keyframes.isEmpty else {
            throw MediaError(.invalidInput, operation: "read packets", path: path,
                             detail: outline.hasVideo ? "the video has no keyframe" : "the file holds no media packets",
                             hint: "The file is damaged; try `kioskcam salvage`")
        }
        return outline
    }

    /// Copies the packets of `range` into a new MP4 (M4A for sound only), from the
    /// keyframe at or before `range.start` so the first picture decodes.
    /// - Parameters:
    ///   - input: The recording.
    ///   - output: The file to write; it is replaced if it exists (the caller decides
    ///     whether that is allowed). Written under a temporary name first, so a failure
    ///     never leaves half a clip under the asked name.
    ///   - range: Seconds in the recording.
    ///   - outline: `outline(of: input)`.
    /// - Throws: `MediaError.invalidInput` for a recording that cannot be read,
    ///   `.muxer`/`.io`/`.diskFull` when the clip cannot be written.
    public static func copy(input path: String, output: String, range: ClipRange,
                            outline: RecordingOutline) throws(MediaError) -> ClipCopyReport {
        let start = outline.hasVideo ? (outline.keyframe(atOrBefore: range.start) ?? 0) : range.start
        let input = try ClipInputFile(path: path)
        let source = input.pointer
        let streams = try input.mediaStreams()
        let temporary = output + ".partial"
        let destination = try ClipOutputFile(path: temporary, format: outline.hasVideo ? "mp4" : "ipod")
        var windows: [Int32: CopyWindow] = [:]
        for index in [streams.video, streams.audio].compactMap({ $0 }) {
            guard let inStream = source.pointee.streams[Int(index)] else { continue }
            let outStream = try destination.addStream(copying: inStream)
            let base = inStream.pointee.time_base
            // Capture times jitter around the frame grid (a frame "at 3 s" may be stamped
            // 2.99997 s): a picture within half a frame of the end belongs after it.
            let end = index == streams.video ? range.end - outline.frameDuration / 2 : range.end
            windows[index] = CopyWindow(input: inStream, output: outStream, from: ticks(start, base),
                                        end: ticks(end, base), shift: ticks(start, base))
        }
        try destination.writeHeader()
        var report = ClipCopyReport(start: start, end: range.end, videoPackets: 0, audioPackets: 0)
        (report.videoPackets, report.audioPackets) = try copyPackets(from: input, video: streams.video, windows: windows,
                                                                     to: destination, videoStarted: streams.video == nil)
        guard report.videoPackets + report.audioPackets > 0 else {
            throw MediaError(.invalidInput, operation: "export", path: path,
                             detail: "no packet lies between \(formatClipTime(start)) and \(formatClipTime(range.end))")
        }
        try destination.finish(renamingTo: output)
        return report
    }

    /// One stream's part of a copy: packets with pts in `from..<end` (ticks of the input
    /// stream) go to `output`, their times moved back by `shift`.
    struct CopyWindow {
        var input: UnsafeMutablePointer<AVStream>
        var output: UnsafeMutablePointer<AVStream>
        var from: Int64
        var end: Int64
        var shift: Int64
    }

    /// Reads `input` to its end and writes the packets inside each stream's window.
    /// - Parameters:
    ///   - videoStarted: False when the copy must wait for a video keyframe (what comes
    ///     before it cannot decode) and drop the sound before it (it would play over black).
    /// - Returns: The video and sound packets written.
    /// - Throws: `MediaError.invalidInput` when nothing can be read, `.io` when writing fails.
    static func copyPackets(from input: ClipInputFile, video: Int32?, windows: [Int32: CopyWindow],
                            to destination: ClipOutputFile, videoStarted started: Bool) throws(MediaError) -> (Int, Int) {
        let packet = try Packet(operation: "export \(input.path)")
        var videoPackets = 0, audioPackets = 0
        var videoStarted = started
        while true {
            let read = av_read_frame(input.pointer, packet.pointer)
            if read == kc_averror_eof() { break }
            if read < 0 {
                if videoPackets + audioPackets > 0 { break }  // a torn tail
                try check(read, .invalidInput, "read packets", path: input.path)
            }
            defer { av_packet_unref(packet.pointer) }
            let index = packet.pointer.pointee.stream_index
            guard let window = windows[index], packet.pointer.pointee.flags & kc_av_pkt_flag_corrupt() == 0 else { continue }
            let pts = packet.pointer.pointee.pts
            guard pts != kc_av_nopts_value(), pts >= window.from, pts < window.end else { continue }
            let isVideo = index == video
            if isVideo && !videoStarted {
                guard packet.pointer.pointee.flags & kc_av_pkt_flag_key() != 0 else { continue }
                videoStarted = true
            }
            if !isVideo && !videoStarted { continue }
            packet.pointer.pointee.pts = pts - window.shift
            let dts = packet.pointer.pointee.dts
            // No B-frames in our recordings, so dts ≤ pts; a foreign file's earlier dts
            // is kept but not allowed to go below zero's neighbourhood by overflow.
            packet.pointer.pointee.dts = dts == kc_av_nopts_value() ? pts - window.shift
                : dts.subtractingReportingOverflow(window.shift).partialValue
            packet.pointer.pointee.pos = -1
            try destination.write(packet.pointer, from: window.input, to: window.output)
            if isVideo { videoPackets += 1 } else { audioPackets += 1 }
        }
        return (videoPackets, audioPackets)
    }

    /// `seconds` in ticks of `base` (checked: a zero or negative base gives 0).
    static func ticks(_ seconds: Double, _ base: AVRational) -> Int64 {
        guard base.num > 0, base.den > 0, seconds.isFinite else { return 0 }
        let value = (seconds * Double(base.den) / Double(base.num)).rounded()
        return value >= Double(Int64.max) ? Int64.max : Int64(max(0, value))
    }
}

/// An input `AVFormatContext` opened for cutting, closed exactly once when its owner goes.
final class ClipInputFile {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    let path: String

    /// - Throws: `MediaError.invalidInput` naming the path and what to do.
    init(path: String) throws(MediaError) {
        self.path = path
        let context = try OwnContainerInput.open(path, operation: "open recording") { code in
            switch code {
            case kc_averror(ENOENT): "Check the path"
            case kc_averror(EACCES): "Check that kioskcam may read the file"
            default: "Give a kioskcam recording (.mp4 or .m4a)"
            }
        }
        pointer = context
        try check(avformat_find_stream_info(context, nil), .invalidInput, "read stream info", path: path,
                  hint: "The file is damaged or not a recording")
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&doomed)
    }

    /// The first video and first sound stream, every other stream discarded.
    /// - Throws: `MediaError.invalidInput` when there is neither, or a used stream has a
    ///   time base that is not a positive fraction (it would divide by zero).
    func mediaStreams() throws(MediaError) -> (video: Int32?, audio: Int32?) {
        var video: Int32? = nil, audio: Int32? = nil
        for index in 0..<Int(pointer.pointee.nb_streams) {
            guard let stream = pointer.pointee.streams[index], let parameters = stream.pointee.codecpar else { continue }
            let type = parameters.pointee.codec_type
            if type == AVMEDIA_TYPE_VIDEO && video == nil && parameters.pointee.codec_id != AV_CODEC_ID_NONE {
                video = Int32(index)
            } else if type == AVMEDIA_TYPE_AUDIO && audio == nil && parameters.pointee.codec_id != AV_CODEC_ID_NONE {
                audio = Int32(index)
            } else {
                stream.pointee.discard = AVDISCARD_ALL
                continue
            }
            let base = stream.pointee.time_base
            guard base.num > 0, base.den > 0 else {
                throw MediaError(.invalidInput, operation: "read stream info", path: path,
                                 detail: "stream \(index) has the time base \(base.num)/\(base.den)",
                                 hint: "The file is damaged; try `kioskcam salvage`")
            }
        }
        guard video != nil || audio != nil else {
            throw MediaError(.invalidInput, operation: "read stream info", path: path,
                             detail: "the file has no video or sound stream",
                             hint: "Give a kioskcam recording (.mp4 or .m4a)")
        }
        return (video, audio)
    }

    /// A packet's presentation time in seconds, nil without a usable one.
    func seconds(_ packet: UnsafeMutablePointer<AVPacket>) -> Double? {
        let pts = packet.pointee.pts
        let index = Int(packet.pointee.stream_index)
        guard pts != kc_av_nopts_value(), index >= 0, index < Int(pointer.pointee.nb_streams),
              let stream = pointer.pointee.streams[index] else { return nil }
        let base = stream.pointee.time_base
        guard base.num > 0, base.den > 0 else { return nil }
        let seconds = Double(pts) * Double(base.num) / Double(base.den)
        // A recording is never longer than a week; larger values are damage, not time.
        return seconds.isFinite && seconds >= -1 && seconds < 86_400 * 7 ? max(0, seconds) : nil
    }

    /// A packet's duration in seconds, 0 when it has none or a nonsensical one.
    func durationSeconds(_ packet: UnsafeMutablePointer<AVPacket>) -> Double {
        let index = Int(packet.pointee.stream_index)
        guard packet.pointee.duration > 0, index >= 0, index < Int(pointer.pointee.nb_streams),
              let stream = pointer.pointee.streams[index] else { return 0 }
        let base = stream.pointee.time_base
        guard base.num > 0, base.den > 0 else { return 0 }
        let seconds = Double(packet.pointee.duration) * Double(base.num) / Double(base.den)
        return seconds.isFinite && seconds < 60 ? seconds : 0
    }
}

/// An output `AVFormatContext` writing to a temporary file; freed exactly once, and
/// the temporary file removed unless `finish` renamed it into place.
final class ClipOutputFile {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    let path: String
    private var finished = false

    /// - Throws: `MediaError.muxer` when the muxer is missing, `.io` when the file cannot be created.
    init(path: String, format: String) throws(MediaError) {
        self.path = path
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&context, nil, format, path), .muxer, "create \(format) output", path: path)
        guard let context else { throw MediaError(.muxer, operation: "create \(format) output", path: path) }
        pointer = context
        do throws(MediaError) {
            try check(avio_open(&context.pointee.pb, path, kc_avio_flag_write()), .io, "create file", path: path,
                      hint: "Check that the folder exists and kioskcam may write there")
        } catch {
            avformat_free_context(context)
            throw error
        }
    }

    deinit {
        if pointer.pointee.pb != nil { avio_closep(&pointer.pointee.pb) }
        avformat_free_context(pointer)
        if !finished { unlink(path) }
    }

    /// A stream with the same codec parameters (and so the same SPS/PPS or AAC config).
    func addStream(copying inStream: UnsafeMutablePointer<AVStream>) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let outStream = avformat_new_stream(pointer, nil) else {
            throw MediaError(.muxer, operation: "add stream", path: path, detail: "out of memory")
        }
        try check(avcodec_parameters_copy(outStream.pointee.codecpar, inStream.pointee.codecpar), .muxer, "copy stream parameters", path: path)
        outStream.pointee.codecpar.pointee.codec_tag = 0
        outStream.pointee.time_base = inStream.pointee.time_base
        outStream.pointee.avg_frame_rate = inStream.pointee.avg_frame_rate
        // A turned camera's display matrix is stream side data, which the parameters lack.
        var size = 0
        if let matrix = av_stream_get_side_data(inStream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36,
           let copy = av_stream_new_side_data(outStream, AV_PKT_DATA_DISPLAYMATRIX, size) {
            copy.update(from: matrix, count: size)
        }
        return outStream
    }

    func writeHeader() throws(MediaError) {
        try check(avformat_write_header(pointer, nil), .muxer, "write header", path: path)
    }

    /// Writes one packet whose times are in `inStream`'s time base.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, from inStream: UnsafeMutablePointer<AVStream>,
               to outStream: UnsafeMutablePointer<AVStream>) throws(MediaError) {
        av_packet_rescale_ts(packet, inStream.pointee.time_base, outStream.pointee.time_base)
        packet.pointee.stream_index = outStream.pointee.index
        try check(av_interleaved_write_frame(pointer, packet), .io, "write packet", path: path)
    }

    /// Writes the trailer, closes the file and moves it to `final`.
    func finish(renamingTo final: String) throws(MediaError) {
        try check(av_write_trailer(pointer), .io, "write trailer", path: path)
        try check(avio_closep(&pointer.pointee.pb), .io, "close file", path: path)
        guard rename(path, final) == 0 else {
            throw MediaError(.io, operation: "rename to \(final)", path: path, averror: kc_averror(errno))
        }
        finished = true
    }
}
