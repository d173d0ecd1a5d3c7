/// Why a source stopped delivering.
public enum SourceEnd: Sendable, Equatable, Codable {
    /// A file source reached its end.
    case endOfInput
    /// The source was asked to stop.
    case stopped
    /// The device failed; the text says what happened and what to do.
    case failed(String)
}

/// Where capture sources deliver. Implemented by the recording pipeline (and later
/// the preview); called on the source's own thread, so it must not block for long —
/// except a file replayed "as fast as possible", which relies on back-pressure.
public protocol CaptureSink: AnyObject, Sendable {
    func deliver(_ frame: VideoFrame)
    func deliver(_ chunk: AudioChunk)
    /// The camera delivered its last frame (called after its last `deliver`).
    func videoSourceEnded(_ name: String, _ end: SourceEnd)
    /// The microphone delivered its last chunk.
    func audioSourceEnded(_ name: String, _ end: SourceEnd)
}

/// A camera: the test pattern, a raw file, a V4L2 device, libcamera, or the screen itself.
public protocol VideoSource: AnyObject, Sendable {
    /// Human name for logs ("test pattern", "/dev/video0").
    var name: String { get }
    var format: VideoFormat { get }
    /// Starts delivering frames to `sink` on the source's own thread.
    func start(into sink: CaptureSink) throws
    /// Stops delivering and waits until the source's thread has finished.
    func stop()
}

/// A microphone: the tone generator, a WAV file or an ALSA device.
public protocol AudioSource: AnyObject, Sendable {
    var name: String { get }
    var format: AudioFormat { get }
    func start(into sink: CaptureSink) throws
    func stop()
}
