import CAVCodec
import CAVFormat
import CAVUtil
import KioskCore

/// What a smart cut wrote.
public struct ClipSmartCutReport: Sendable, Equatable {
    /// Pictures re-encoded from `--from` up to the next keyframe.
    public var reencodedFrames: Int
    /// Where the copied part starts in the recording (a keyframe), in seconds.
    public var copyStart: Double
    public var copiedVideoPackets: Int
    public var audioPackets: Int
}

/// Cuts a clip frame-exactly while re-encoding as little as possible: the pictures from
/// the cut to the next keyframe are decoded and encoded again with libx264, everything
/// after is copied packet for packet.
///
/// An MP4 track has one `avcC`; the re-encoded head gets its own SPS/PPS id
/// (`sps-id`) and both sets go into that `avcC`, so each part decodes with its own
/// parameters. When that cannot be done (no libx264, a recording that is not H.264 in
/// MP4, a profile libx264 cannot match) the cut says why and the caller falls back.
public enum ClipSmartCut {
    public enum Outcome: Sendable, Equatable {
        case written(ClipSmartCutReport)
        /// Nothing was written; the reason is a sentence for the user.
        case notPossible(String)
    }

    /// - Parameters:
    ///   - input: A recording with H.264 video.
    ///   - output: The MP4 to write, replaced if it exists; written under a temporary
    ///     name first so a failure leaves nothing under the asked name.
    ///   - range: Seconds in the recording; `range.start` should not be on a keyframe
    ///     (it works there too, re-encoding a whole GOP for nothing).
    ///   - outline: `ClipCopy.outline(of: input)`.
    /// - Throws: `MediaError` for a recording that cannot be decoded or a clip that
    ///   cannot be written; a cut that is merely not possible is an `Outcome`.
    public static func write(input path: String, output: String, range: ClipRange,
                             outline: RecordingOutline) throws(MediaError) -> Outcome {
        let halfFrame = outline.frameDuration / 2
        guard outline.hasVideo else { return .notPossible("the recording has no video") }
        guard let copyStart = outline.keyframes.first(where: { $0 > range.start + halfFrame }),
              copyStart < range.end - halfFrame else {
            return .notPossible("no keyframe lies between --from and --to, so nothing could be copied")
        }
        let input = try ClipInputFile(path: path)
        let streams = try input.mediaStreams()
        guard let videoIndex = streams.video, let videoStream = input.pointer.pointee.streams[Int(videoIndex)],
              let parameters = videoStream.pointee.codecpar else { return .notPossible("the recording has no video") }
        guard parameters.pointee.codec_id == AV_CODEC_ID_H264 else { return .notPossible("its video is not H.264") }
        guard let configuration = AVCConfiguration(parsing: extradata(of: parameters)) else {
            return .notPossible("its H.264 configuration (avcC) cannot be read")
        }
        guard let profile = x264ProfileName(configuration.profile) else {
            return .notPossible("libx264 cannot encode its H.264 profile \(configuration.profile)")
        }
        let usedIDs = configuration.sequenceParameterSets.compactMap(H264ParameterSetIDs.sequenceParameterSet)
            + configuration.pictureParameterSets.compactMap { H264ParameterSetIDs.pictureParameterSet($0)?.pps }
        let headID = (usedIDs.max() ?? 0) + 1
        guard headID <= 31 else { return .notPossible("its parameter sets use every id") }

        // The head: decoded from the keyframe before the cut, encoded from the cut on.
        let decoder = try VideoFileDecoder(path: path)
        decoder.seek(toKeyframeBefore: range.start)
        var settings = VideoTrackSettings(
            input: VideoFormat(size: decoder.size, pixelFormat: .yuv420, framesPerSecond: decoder.framesPerSecond),
            codecName: "libx264", bitrate: parameters.pointee.bit_rate > 0 ? Int(clamping: parameters.pointee.bit_rate) : nil,
            keyframeInterval: 10_000)
        settings.profile = profile
        settings.x264Parameters = "sps-id=\(headID)"
        guard decoder.size.width % 2 == 0, decoder.size.height % 2 == 0 else {
            return .notPossible("its picture size \(decoder.size) is odd")
        }
        let encoder: LibavVideoEncoder
        do throws(MediaError) { encoder = try LibavVideoEncoder(settings: settings) } catch {
            return .notPossible("libx264 cannot re-encode it here (\(error.description))")
        }
        let base = decoder.timeBase
        var head: [(packet: EncodedPacket, pts: Int64)] = []
        var sourceTicks: [Int64: Int64] = [:]   // capture nanoseconds handed to the encoder → pts in the recording
        var first = true
        let collect: (EncodedPacket) -> Void = { packet in
            head.append((packet, sourceTicks[packet.time.nanoseconds] ?? 0))
        }
        try decoder.decode(scaledTo: decoder.size) { (picture, seconds) throws(MediaError) in
            guard seconds < copyStart - halfFrame else { return false }
            guard seconds >= range.start - halfFrame else { return true }
            let nanoseconds = Int64((seconds * 1e9).rounded())
            sourceTicks[nanoseconds] = ClipCopy.ticks(seconds, base)
            try encoder.encode(copying: picture, format: settings.input, time: MonotonicInstant(nanoseconds: nanoseconds),
                               forceKeyframe: first, emit: collect)
            first = false
            return true
        }
        try encoder.flush(emit: collect)
        guard let opening = head.first, opening.packet.isKeyframe else {
            return .notPossible("no picture between --from and the next keyframe could be decoded")
        }
        // The clip's zero is its first picture's time, which capture jitter may put a
        // hair before --from: a negative first timestamp would make players drop it.
        let shift = opening.pts
        let shiftSeconds = Double(shift) * Double(base.num) / Double(base.den)
        let units = H264AnnexB.units(in: opening.packet.data)
        guard let sps = units.first(where: { $0.type == H264AnnexB.UnitType.sequenceParameterSet.rawValue }),
              let pps = units.first(where: { $0.type == H264AnnexB.UnitType.pictureParameterSet.rawValue }) else {
            return .notPossible("libx264 gave no SPS/PPS with its first picture")
        }
        let merged: AVCConfiguration
        do throws(AVCConfiguration.MergeProblem) {
            merged = try configuration.adding(sequenceParameterSet: Array(opening.packet.data[sps.range]),
                                              pictureParameterSet: Array(opening.packet.data[pps.range]))
        } catch {
            return .notPossible("the re-encoded part cannot share the recording's H.264 configuration: \(error)")
        }

        let temporary = output + ".partial"
        let destination = try ClipOutputFile(path: temporary, format: "mp4")
        var windows: [Int32: ClipCopy.CopyWindow] = [:]
        var videoOut: UnsafeMutablePointer<AVStream>?
        for index in [streams.video, streams.audio].compactMap({ $0 }) {
            guard let inStream = input.pointer.pointee.streams[Int(index)] else { continue }
            let outStream = try destination.addStream(copying: inStream)
            let streamBase = inStream.pointee.time_base
            if index == videoIndex {
                replaceExtradata(of: outStream.pointee.codecpar, with: merged.bytes)
                videoOut = outStream
                windows[index] = .init(input: inStream, output: outStream, from: ClipCopy.ticks(copyStart, streamBase),
                                       end: ClipCopy.ticks(range.end - halfFrame, streamBase), shift: shift)
            } else {
                let from = ClipCopy.ticks(shiftSeconds, streamBase)
                windows[index] = .init(input: inStream, output: outStream, from: from,
                                       end: ClipCopy.ticks(range.end, streamBase), shift: from)
            }
        }
        guard let videoOut else { return .notPossible("the recording has no video") }
        try destination.writeHeader()
        let packet = try Packet(operation: "export \(path)")
        let frameTicks = ClipCopy.ticks(outline.frameDuration, base)
        let dropped: Set<UInt8> = [H264AnnexB.UnitType.sequenceParameterSet.rawValue,
                                   H264AnnexB.UnitType.pictureParameterSet.rawValue,
                                   H264AnnexB.UnitType.accessUnitDelimiter.rawValue]
        for (encoded, pts) in head {
            guard let sample = H264AnnexB.lengthPrefixed(encoded.data, lengthSize: merged.lengthSize, dropping: dropped) else {
                return .notPossible("a re-encoded picture is too large for the recording's NAL length size")
            }
            try check(av_new_packet(packet.pointer, Int32(clamping: sample.count)), .muxer, "export \(path)")
            defer { av_packet_unref(packet.pointer) }
            sample.withUnsafeBytes { bytes in
                if let target = packet.pointer.pointee.data, let source = bytes.baseAddress {
                    UnsafeMutableRawPointer(target).copyMemory(from: source, byteCount: sample.count)
                }
            }
            packet.pointer.pointee.pts = pts - shift
            packet.pointer.pointee.dts = pts - shift
            packet.pointer.pointee.duration = frameTicks
            if encoded.isKeyframe { packet.pointer.pointee.flags |= kc_av_pkt_flag_key() }
            try destination.write(packet.pointer, from: videoStream, to: videoOut)
        }
        let (copied, audio) = try ClipCopy.copyPackets(from: input, video: streams.video, windows: windows,
                                                         to: destination, videoStarted: true)
        try destination.finish(renamingTo: output)
        return .written(ClipSmartCutReport(reencodedFrames: head.count, copyStart: copyStart,
                                           copiedVideoPackets: copied, audioPackets: audio))
    }

    /// libx264's name for an H.264 `profile_idc`, nil for profiles it does not make
    /// (4:2:2, 4:4:4, 10-bit recordings are not ours).
    static func x264ProfileName(_ profile: UInt8) -> String? {
        switch profile {
        case 66: "baseline"
        case 77: "main"
        case 100: "high"
        default: nil
        }
    }
}
