/// One captured video frame, tightly packed in `format.pixelFormat`.
public struct VideoFrame: Sendable {
    public var buffer: MediaBuffer
    public var format: VideoFormat
    /// When the frame was captured, on the monotonic clock.
    public var timestamp: MonotonicInstant
    /// The source's running frame number; gaps reveal frames the source itself lost.
    public var sequence: Int

    public init(buffer: MediaBuffer, format: VideoFormat, timestamp: MonotonicInstant, sequence: Int) {
        self.buffer = buffer
        self.format = format
        self.timestamp = timestamp
        self.sequence = sequence
    }
}

/// A run of interleaved S16 PCM samples, stamped with the time of its first sample.
public struct AudioChunk: Sendable {
    public var buffer: MediaBuffer
    public var format: AudioFormat
    public var timestamp: MonotonicInstant

    public init(buffer: MediaBuffer, format: AudioFormat, timestamp: MonotonicInstant) {
        self.buffer = buffer
        self.format = format
        self.timestamp = timestamp
    }

    /// Sample frames (one sample per channel) in the chunk.
    public var frameCount: Int { buffer.byteCount / format.bytesPerFrame }

    public var durationNanoseconds: Int64 {
        Int64(frameCount) * 1_000_000_000 / Int64(max(format.sampleRate, 1))
    }

    /// Time just after the last sample.
    public var endTimestamp: MonotonicInstant { timestamp.advanced(byNanoseconds: durationNanoseconds) }
}

/// What flows from the capture threads to the encoder thread.
public enum CaptureItem: Sendable {
    case video(VideoFrame)
    case audio(AudioChunk)

    public var timestamp: MonotonicInstant {
        switch self {
        case .video(let frame): frame.timestamp
        case .audio(let chunk): chunk.timestamp
        }
    }

}
