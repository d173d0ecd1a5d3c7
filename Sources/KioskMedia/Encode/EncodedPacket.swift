import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// One encoded packet — an H.264 access unit or an AAC frame — shared by reference.
///
/// The graph encodes once and hands the same packet to every output (a file, the
/// pre-event ring, a stream): each holds this object, and libavcodec's reference-counted
/// data goes when the last one lets go. Times are capture times on the monotonic clock,
/// so outputs cut files and align streams without knowing an encoder's time base.
// @unchecked: it owns an AVPacket (a C pointer), never written after init, read by every output.
public final class EncodedPacket: @unchecked Sendable {
    public enum Media: String, Sendable { case video, audio }

    public let media: Media
    /// When its first sample was captured.
    public let time: MonotonicInstant
    /// How long it lasts, in nanoseconds (a frame interval; 1024 samples for AAC).
    public let durationNanoseconds: Int64
    /// A video keyframe (IDR): a file or a stream can begin here.
    public let isKeyframe: Bool
    /// Owns one reference to the data.
    let packet: UnsafeMutablePointer<AVPacket>

    /// Takes over the data of `source` (which is left empty), without copying it.
    init?(movingFrom source: UnsafeMutablePointer<AVPacket>, media: Media, time: MonotonicInstant,
          durationNanoseconds: Int64) {
        guard let packet = av_packet_alloc() else { return nil }
        av_packet_move_ref(packet, source)
        self.packet = packet
        self.media = media
        self.time = time
        self.durationNanoseconds = max(0, durationNanoseconds)
        isKeyframe = media == .audio || packet.pointee.flags & kc_av_pkt_flag_key() != 0
    }

    /// A packet of given bytes (the null encoder, tests).
    public init?(bytes: [UInt8], media: Media, time: MonotonicInstant, durationNanoseconds: Int64, isKeyframe: Bool) {
        guard let packet = av_packet_alloc() else { return nil }
        guard av_new_packet(packet, Int32(bytes.count)) >= 0, let data = packet.pointee.data else {
            var doomed: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&doomed)
            return nil
        }
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(data).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        if isKeyframe { packet.pointee.flags |= kc_av_pkt_flag_key() }
        self.packet = packet
        self.media = media
        self.time = time
        self.durationNanoseconds = max(0, durationNanoseconds)
        self.isKeyframe = media == .audio || isKeyframe
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&doomed)
    }

    public var byteCount: Int { Int(packet.pointee.size) }

    /// The encoded bytes (Annex B for H.264, raw AAC).
    public var data: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(max(0, packet.pointee.size)))
    }

    /// Time just after it.
    public var endTime: MonotonicInstant { time.advanced(byNanoseconds: durationNanoseconds) }

    /// A new AVPacket referring to the same data (no copy), for a muxer to own.
    func reference() -> UnsafeMutablePointer<AVPacket>? {
        guard let copy = av_packet_alloc() else { return nil }
        guard av_packet_ref(copy, packet) >= 0 else {
            var doomed: UnsafeMutablePointer<AVPacket>? = copy
            av_packet_free(&doomed)
            return nil
        }
        return copy
    }

    /// The same packet with other bytes in front (SPS/PPS before a keyframe that lacks
    /// them); copies once.
    func prefixed(with prefix: [UInt8]) -> EncodedPacket? {
        let bytes = prefix + Array(data)
        return EncodedPacket(bytes: bytes, media: media, time: time, durationNanoseconds: durationNanoseconds, isKeyframe: isKeyframe)
    }
}

/// What a muxer needs to know about one encoded stream: its codec parameters (with the
/// extradata: SPS/PPS for H.264, AudioSpecificConfig for AAC), time base and rate.
// @unchecked: it owns AVCodecParameters (a C pointer), never written after init.
public final class StreamParameters: @unchecked Sendable {
    public let media: EncodedPacket.Media
    let codecParameters: UnsafeMutablePointer<AVCodecParameters>
    let timeBase: AVRational
    /// Frames per second (video), for the container's average rate.
    public let framesPerSecond: Int
    /// How players turn the picture (video): the stream's display matrix.
    public let orientation: PictureOrientation

    init?(context: UnsafeMutablePointer<AVCodecContext>, media: EncodedPacket.Media, framesPerSecond: Int = 0,
          orientation: PictureOrientation = .upright) {
        guard let parameters = avcodec_parameters_alloc() else { return nil }
        guard avcodec_parameters_from_context(parameters, context) >= 0 else {
            var doomed: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&doomed)
            return nil
        }
        codecParameters = parameters
        timeBase = context.pointee.time_base
        self.media = media
        self.framesPerSecond = framesPerSecond
        self.orientation = orientation
    }

    /// Sets up a muxer's new stream for these packets: codec parameters, time base and,
    /// for a turned camera, the display matrix players turn the picture by.
    /// - Throws: `MediaError.muxer` naming `path` when libavformat refuses or memory runs out.
    func configure(_ stream: UnsafeMutablePointer<AVStream>, path: String) throws(MediaError) {
        try check(avcodec_parameters_copy(stream.pointee.codecpar, codecParameters), .muxer, "add stream", path: path)
        stream.pointee.codecpar.pointee.codec_tag = 0
        stream.pointee.time_base = timeBase
        guard media == .video, !orientation.isUpright else { return }
        let size = 9 * MemoryLayout<Int32>.size
        guard let data = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, size) else {
            throw MediaError(.muxer, operation: "add stream", path: path, detail: "out of memory for the display matrix")
        }
        data.withMemoryRebound(to: Int32.self, capacity: 9) { orientation.writeDisplayMatrix(into: $0) }
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecParameters>? = codecParameters
        avcodec_parameters_free(&doomed)
    }

    /// Whether the codec set-up is known (H.264 from an encoder without a global header
    /// gets it from its first keyframe).
    public var hasExtradata: Bool { codecParameters.pointee.extradata_size > 0 }

    /// The extradata: SPS/PPS (Annex B or `avcC`) for H.264, the AudioSpecificConfig for AAC.
    public var extradataBytes: [UInt8] { extradata(of: codecParameters) }

    /// Picture size (video), sample rate and channels (sound): what a session description says.
    public var width: Int { Int(codecParameters.pointee.width) }
    public var height: Int { Int(codecParameters.pointee.height) }
    public var sampleRate: Int { Int(codecParameters.pointee.sample_rate) }
    public var channels: Int { Int(codecParameters.pointee.ch_layout.nb_channels) }

    /// Sets the extradata (padded as libavcodec requires).
    func setExtradata(_ bytes: [UInt8]) { replaceExtradata(of: codecParameters, with: bytes) }

    /// Whether packets made with `other` can go into the same file as ours: the same
    /// codec, size and set-up (an encoder opened again with the same settings gives the
    /// same SPS/PPS).
    public func sameSetup(as other: StreamParameters?) -> Bool {
        guard let other else { return false }
        if other === self { return true }
        guard orientation == other.orientation else { return false }
        let a = codecParameters.pointee, b = other.codecParameters.pointee
        guard a.codec_id == b.codec_id, a.width == b.width, a.height == b.height, a.sample_rate == b.sample_rate,
              a.extradata_size == b.extradata_size else { return false }
        guard a.extradata_size > 0, let x = a.extradata, let y = b.extradata else { return a.extradata_size == 0 }
        return memcmp(x, y, Int(a.extradata_size)) == 0
    }

    /// "h264 1280x720", "aac 48000 Hz 1 ch": for logs.
    public var summary: String {
        let name = avcodec_get_name(codecParameters.pointee.codec_id).map { String(cString: $0) } ?? "?"
        let p = codecParameters.pointee
        return media == .video ? "\(name) \(p.width)x\(p.height)" : "\(name) \(p.sample_rate) Hz \(p.ch_layout.nb_channels) ch"
    }
}

/// Replaces a stream's extradata (SPS/PPS, AudioSpecificConfig) with `bytes`, padded as
/// libavcodec requires; left empty when memory runs out (the muxer then refuses the header).
func replaceExtradata(of parameters: UnsafeMutablePointer<AVCodecParameters>, with bytes: [UInt8]) {
    av_freep(&parameters.pointee.extradata)
    parameters.pointee.extradata_size = 0
    guard !bytes.isEmpty, let memory = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else { return }
    let target = memory.assumingMemoryBound(to: UInt8.self)
    bytes.withUnsafeBytes { source in
        if let base = source.baseAddress { UnsafeMutableRawPointer(target).copyMemory(from: base, byteCount: bytes.count) }
    }
    parameters.pointee.extradata = target
    parameters.pointee.extradata_size = Int32(bytes.count)
}

/// A stream's extradata as bytes (empty when it has none).
func extradata(of parameters: UnsafeMutablePointer<AVCodecParameters>) -> [UInt8] {
    let count = Int(parameters.pointee.extradata_size)
    guard count > 0, let data = parameters.pointee.extradata else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: count))
}

extension PictureOrientation {
    /// Writes this turn as an FFmpeg display matrix (9 × Int32, 16.16 fixed point).
    ///
    /// Set as FFmpeg's own readers take it: ffprobe then shows "rotation: -90" for a
    /// quarter turn clockwise, as for a phone's portrait video, and players (ffmpeg's
    /// autorotate, checked in OrientationTests) turn it clockwise. The flip negates the
    /// output's x, so it applies after the turn, as on stills.
    func writeDisplayMatrix(into matrix: UnsafeMutablePointer<Int32>) {
        av_display_rotation_set(matrix, Double(rotation.degrees))
        if mirror { av_display_matrix_flip(matrix, 1, 0) }
    }

    /// The turn a stream's display matrix describes; nil for a matrix that is none of
    /// the eight quarter turns and flips (a skew or a scale: left alone).
    init?(displayMatrix matrix: UnsafePointer<Int32>) {
        for rotation in ScreenRotation.allCases {
            for mirror in [false, true] {
                let candidate = PictureOrientation(rotation: rotation, mirror: mirror)
                var built = [Int32](repeating: 0, count: 9)
                built.withUnsafeMutableBufferPointer { if let base = $0.baseAddress { candidate.writeDisplayMatrix(into: base) } }
                if (0..<9).allSatisfy({ abs(Int(built[$0]) - Int(matrix[$0])) <= 2 }) {
                    self = candidate
                    return
                }
            }
        }
        return nil
    }
}

extension EncodedPacket {
    /// A new reference to the packet, timed for `stream`: `offset` nanoseconds from the
    /// output's time zero in the stream's time base, the pts at least `minimumPTS` (a
    /// muxer refuses a picture that does not move forward), dts = pts (no B-frames). The
    /// caller frees it (`av_packet_free`).
    /// - Returns: The packet and its pts, or nil when no reference can be made.
    func stamped(for stream: UnsafeMutablePointer<AVStream>, offset: Int64,
                 minimumPTS: Int64 = .min) -> (packet: UnsafeMutablePointer<AVPacket>, pts: Int64)? {
        guard let reference = reference() else { return nil }
        let pts = max(PacketFileWriter.rescale(offset, to: stream.pointee.time_base), minimumPTS)
        reference.pointee.pts = pts
        reference.pointee.dts = pts
        reference.pointee.duration = max(1, PacketFileWriter.rescale(durationNanoseconds, to: stream.pointee.time_base))
        reference.pointee.stream_index = stream.pointee.index
        reference.pointee.pos = -1
        return (reference, pts)
    }
}
