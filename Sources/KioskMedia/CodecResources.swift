import CAVCodec
import CAVUtil
import KioskCore

/// An `AVCodecContext` with one owner, freed exactly once when the owner goes — also
/// when an initialiser throws half-way, which is why the encoders hold these instead
/// of raw pointers.
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>

    /// - Throws: `MediaError` when libavcodec cannot allocate the context.
    init(_ codec: UnsafePointer<AVCodec>, operation: String) throws(MediaError) {
        guard let pointer = avcodec_alloc_context3(codec) else {
            throw MediaError(.encoderRejectedSettings, operation: operation, detail: "out of memory")
        }
        self.pointer = pointer
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&doomed)
    }

    /// Hands every packet the encoder has ready to `emit`, reusing `packet`.
    func receivePackets(into packet: Packet, operation: String,
                        emit: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        while true {
            let result = avcodec_receive_packet(pointer, packet.pointer)
            if result == kc_averror_eagain() || result == kc_averror_eof() { return }
            try check(result, .encoderRejectedSettings, operation)
            defer { av_packet_unref(packet.pointer) }
            try emit(packet.pointer)
        }
    }

    /// Sends the end-of-stream marker (the encoder then returns its delayed packets).
    func sendFlush(operation: String) throws(MediaError) {
        let result = avcodec_send_frame(pointer, nil)
        if result != kc_averror_eof() { try check(result, .encoderRejectedSettings, operation) }
    }
}

/// An `AVPacket` with one owner, reused for every packet of a stream.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>

    init(operation: String) throws(MediaError) {
        guard let pointer = av_packet_alloc() else {
            throw MediaError(.encoderRejectedSettings, operation: operation, detail: "out of memory")
        }
        self.pointer = pointer
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&doomed)
    }
}

/// An `AVFrame` with one owner, reused for every picture or audio frame.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init(operation: String) throws(MediaError) {
        guard let pointer = av_frame_alloc() else {
            throw MediaError(.encoderRejectedSettings, operation: operation, detail: "out of memory")
        }
        self.pointer = pointer
    }

    /// A picture with its own reference-counted buffers, so the encoder can take a
    /// reference instead of copying.
    static func picture(size: FrameSize, format: AVPixelFormat, operation: String) throws(MediaError) -> Frame {
        let frame = try Frame(operation: operation)
        frame.pointer.pointee.width = Int32(size.width)
        frame.pointer.pointee.height = Int32(size.height)
        frame.pointer.pointee.format = format.rawValue
        try check(av_frame_get_buffer(frame.pointer, 0), .encoderRejectedSettings, "allocate a \(size) picture")
        return frame
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&doomed)
    }
}
