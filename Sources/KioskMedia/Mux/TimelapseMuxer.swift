import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Muxes the timelapse: fragmented MP4 with one fragment (`moof` + `mdat`) per frame,
/// so a file cut anywhere keeps every whole frame before the cut. Frames are numbered,
/// not timed: frame n plays at n / fps whatever time it was captured at.
///
/// A day's movie outlives the process (a restart, a power cut): `firstFrame` and
/// `firstFragment` continue the numbering of the fragments already in the file, and
/// libavformat's `frag_discont` writes each fragment's decode time from that number, so
/// the appended fragments follow on as if one muxer had written them all. The init
/// segment it makes is then only compared with the file's (`stsd`), never written.
/// libavformat's own mov muxer writes the boxes, into memory through a custom AVIO.
/// One owner, one thread.
public final class TimelapseMuxer {
    /// `ftyp` + `moov`, written at the start of a new file.
    public let initSegment: [UInt8]
    /// The number of the next frame (frames already in the file, plus those written).
    public private(set) var nextFrame: UInt64
    private let muxer: InMemoryMP4
    private let stream: UnsafeMutablePointer<AVStream>
    /// One frame's duration, 1/fps: the unit of the frame numbers.
    private let perFrame: AVRational

    /// - Parameters:
    ///   - video: The encoder's stream (its SPS/PPS known).
    ///   - framesPerSecond: The movie's rate.
    ///   - firstFrame: Frames already in the file (0 for a new one).
    ///   - firstFragment: The sequence number of the first fragment written (1 for a new file).
    /// - Throws: `MediaError.muxer` when libavformat refuses the stream.
    public init(video: StreamParameters, framesPerSecond: Int, firstFrame: UInt64 = 0, firstFragment: Int = 1) throws(MediaError) {
        let rate = Int32(max(1, min(framesPerSecond, 240)))
        perFrame = AVRational(num: 1, den: rate)
        nextFrame = firstFrame
        guard video.hasExtradata else {
            throw MediaError(.muxer, operation: "start the timelapse", detail: "the video has no SPS/PPS yet")
        }
        guard firstFrame < UInt64(Int64.max / 2), firstFragment >= 1 else {
            throw MediaError(.muxer, operation: "continue the timelapse", detail: "the file claims \(firstFrame) frames")
        }
        muxer = try InMemoryMP4(operation: "create the timelapse muxer")
        stream = try muxer.addStream(video, path: "timelapse")
        // One tick a frame: the muxer picks a finer timescale (a multiple of it).
        stream.pointee.time_base = perFrame
        stream.pointee.avg_frame_rate = AVRational(num: rate, den: 1)
        // frag_custom: a fragment ends after each frame; frag_discont: its decode time
        // comes from the frame's number, not from zero; no edit list (the file's first run
        // wrote the only moov there will be); no trailer (the file never ends).
        let discontinuous = firstFrame > 0 ? "+frag_discont" : ""
        initSegment = try muxer.writeHeader(["movflags": "+frag_custom+empty_moov+default_base_moof+skip_trailer" + discontinuous,
                                             "fragment_index": String(firstFragment), "use_editlist": "0"],
                                            operation: "start the timelapse")
    }

    /// Adds one frame and returns its fragment (the bytes to append to the file).
    /// - Throws: `MediaError.muxer` when libavformat refuses the packet.
    public func write(_ packet: EncodedPacket) throws(MediaError) -> [UInt8] {
        guard packet.media == .video, let reference = packet.reference() else { return [] }
        var owned: UnsafeMutablePointer<AVPacket>? = reference
        defer { av_packet_free(&owned) }
        let timeBase = stream.pointee.time_base
        reference.pointee.pts = av_rescale_q(Int64(nextFrame), perFrame, timeBase)
        reference.pointee.dts = reference.pointee.pts
        reference.pointee.duration = max(1, av_rescale_q(1, perFrame, timeBase))
        reference.pointee.stream_index = stream.pointee.index
        reference.pointee.pos = -1
        let fragment = try muxer.write(reference, closingFragment: true, operation: "mux a timelapse frame")
        nextFrame += 1
        return fragment
    }
}
