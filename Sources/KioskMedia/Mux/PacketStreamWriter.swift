import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Muxes encoded packets to any libavformat destination: a live URL (`rtmp://…` as FLV,
/// `rtsp://…` published to a server such as MediaMTX, `srt://…` and `udp://…` as MPEG-TS)
/// or an HLS playlist in a folder (`…/index.m3u8`). One owner, one thread. Blocking
/// network calls give up after `timeoutSeconds`, or at once when `cancel()` is called
/// from another thread.
public final class PacketStreamWriter {
    public let url: String
    /// `url` without its password, for errors: made once, not for every packet (a
    /// Foundation search per packet was 0.5 % of a screen broadcast's CPU).
    private let shownURL: String
    public let start: MonotonicInstant
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let interrupt: InterruptFlag
    private var lastVideoPTS: Int64 = -1
    private var closed = false
    public private(set) var bytesSent: Int64 = 0

    /// The muxer a destination needs: from the scheme, or the file name's extension.
    public static func muxerName(for url: String) -> String {
        let lower = url.lowercased()
        if lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") { return "flv" }
        if lower.hasPrefix("rtsp://") || lower.hasPrefix("rtsps://") { return "rtsp" }
        if lower.hasPrefix("srt://") || lower.hasPrefix("udp://") || lower.hasPrefix("tcp://") { return "mpegts" }
        if lower.hasSuffix(".m3u8") { return "hls" }
        if lower.hasSuffix(".ts") { return "mpegts" }
        if lower.hasSuffix(".flv") { return "flv" }
        return "mp4"
    }

    /// The URL with any password (`user:secret@host`) replaced, for logs and status.
    public static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let userInfo = url[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// Opens the destination and writes the header.
    /// - Parameters:
    ///   - video: The video stream (its SPS/PPS known), or nil.
    ///   - audio: The sound stream, or nil.
    ///   - start: Time zero of the stream.
    ///   - timeoutSeconds: How long a connect or a write may block.
    /// - Throws: `MediaError.io` naming the destination and the reason (refused, not
    ///   found, timed out), `.muxer` when the format cannot carry these streams.
    public init(url: String, video: StreamParameters?, audio: StreamParameters?, start: MonotonicInstant,
                timeoutSeconds: Double = 5) throws(MediaError) {
        self.url = url
        self.start = start
        interrupt = InterruptFlag()
        let muxer = Self.muxerName(for: url)
        let shown = Self.redacted(url)
        shownURL = shown
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&context, nil, muxer, url), .muxer, "create \(muxer) muxer", path: shown)
        guard let context else { throw MediaError(.muxer, operation: "create muxer", path: shown) }
        format = context
        context.pointee.interrupt_callback = AVIOInterruptCB(callback: streamInterrupted,
                                                             opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        context.pointee.avoid_negative_ts = 0
        do throws(MediaError) {
            if let video {
                guard video.hasExtradata else {
                    throw MediaError(.muxer, operation: "open stream", path: shown, detail: "the video has no SPS/PPS yet")
                }
                videoStream = try addStream(video, shown)
                videoStream?.pointee.avg_frame_rate = AVRational(num: Int32(max(video.framesPerSecond, 1)), den: 1)
            }
            if let audio { audioStream = try addStream(audio, shown) }
            var options: OpaquePointer? = nil
            defer { av_dict_free(&options) }
            let microseconds = String(Int64(timeoutSeconds * 1_000_000))
            av_dict_set(&options, "rw_timeout", microseconds, 0)
            if muxer == "hls" {
                // A rolling live playlist any web server can serve: 2 s segments, the last 6.
                av_dict_set(&options, "hls_time", "2", 0)
                av_dict_set(&options, "hls_list_size", "6", 0)
                av_dict_set(&options, "hls_flags", "delete_segments+independent_segments", 0)
            }
            if muxer == "rtsp" { av_dict_set(&options, "rtsp_transport", "tcp", 0) }
            if context.pointee.oformat.pointee.flags & kc_avfmt_nofile() == 0 {
                var io: UnsafeMutablePointer<AVIOContext>? = nil
                var interruptCB = context.pointee.interrupt_callback
                try check(avio_open2(&io, url, kc_avio_flag_write(), &interruptCB, &options), .io, "connect", path: shown,
                          hint: "Check that the receiver is running and the address is right")
                context.pointee.pb = io
            }
            try check(avformat_write_header(context, &options), .muxer, "start stream", path: shown)
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    private func addStream(_ parameters: StreamParameters, _ shown: String) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(format, nil) else {
            throw MediaError(.muxer, operation: "add stream", path: shown, detail: "out of memory")
        }
        try parameters.configure(stream, path: shown)
        return stream
    }

    /// Makes a blocked connect or write return (from any thread).
    public func cancel() { interrupt.set() }

    /// `cancel()` for another thread to call (the writer itself stays with its thread).
    public var cancellation: @Sendable () -> Void { { [interrupt] in interrupt.set() } }

    /// Writes one packet (time from `start`; packets before it are skipped).
    /// - Throws: `MediaError.io` when the destination went away or timed out.
    public func write(_ packet: EncodedPacket) throws(MediaError) {
        guard !closed, let format else { return }
        let offset = packet.time.nanoseconds(since: start)
        guard offset >= 0 else { return }
        guard let stream = packet.media == .video ? videoStream : audioStream,
              let (reference, pts) = packet.stamped(for: stream, offset: offset,
                                                    minimumPTS: packet.media == .video ? lastVideoPTS + 1 : .min) else { return }
        var owned: UnsafeMutablePointer<AVPacket>? = reference
        defer { av_packet_free(&owned) }
        if packet.media == .video { lastVideoPTS = pts }
        let size = Int64(reference.pointee.size)
        try check(av_interleaved_write_frame(format, reference), .io, "send packet", path: shownURL,
                  hint: shownURL.hasPrefix("/") ? "The HLS folder could not be written (full, removed, or not writable); kioskcam tries again"
                      : "The receiver stopped answering; kioskcam reconnects")
        bytesSent += size
    }

    /// Writes the trailer (ends an HLS playlist) and closes.
    public func finish() {
        guard !closed, let format else { return }
        _ = av_write_trailer(format)
        tearDown()
    }

    private func tearDown() {
        guard !closed else { return }
        closed = true
        if let format {
            if format.pointee.oformat.pointee.flags & kc_avfmt_nofile() == 0, format.pointee.pb != nil {
                avio_closep(&format.pointee.pb)
            }
            avformat_free_context(format)
            self.format = nil
        }
    }
}

/// A flag libavformat's blocking calls poll through the interrupt callback.
final class InterruptFlag: Sendable {
    private let raised = Locked(false)
    func set() { raised.withLock { $0 = true } }
    var isSet: Bool { raised.withLock { $0 } }
}

private let streamInterrupted: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
    guard let opaque else { return 0 }
    return Unmanaged<InterruptFlag>.fromOpaque(opaque).takeUnretainedValue().isSet ? 1 : 0
}
