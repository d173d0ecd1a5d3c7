import CAVCodec
import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Everything needed to start one MP4/M4A file.
public struct MP4WriterSettings: Sendable {
    public var path: String
    /// nil for an audio-only (.m4a) file.
    public var video: VideoTrackSettings?
    /// nil for a silent video.
    public var audio: AudioTrackSettings?
    /// Written into the file's metadata (`creation_time`, `comment`, …).
    public var metadata: [String: String]
    /// Push data to the device at least this often (seconds).
    public var syncInterval: Double

    public init(path: String, video: VideoTrackSettings?, audio: AudioTrackSettings?,
                metadata: [String: String] = [:], syncInterval: Double = 2) {
        self.path = path
        self.video = video
        self.audio = audio
        self.metadata = metadata
        self.syncInterval = syncInterval
    }
}

/// Encodes and muxes one file by itself: an encoder for each track feeding a
/// `PacketFileWriter`. The recording graph does not use it (it encodes once for many
/// outputs); tools and tests that make one file from raw frames do. One owner, one
/// thread; `finish()` or `abandon()` must end it.
public final class MP4Writer {
    public let settings: MP4WriterSettings
    private let videoEncoder: LibavVideoEncoder?
    private let audioEncoder: AACPacketEncoder?
    private let writer: PacketFileWriter
    private var failure: MediaError?
    private var videoFinished = false
    /// Video frames handed to the encoder.
    public private(set) var videoFrameCount = 0
    /// Sound sample frames handed to the encoder.
    private var samplesAccepted: Int64 = 0

    /// Opens the encoders, then creates the file (the header follows the first frame).
    /// - Throws: `MediaError` — `.encoderNotFound`/`.encoderRejectedSettings` for
    ///   encoder trouble, `.io`/`.diskFull` when the file cannot be created. On error
    ///   nothing is left on disk.
    public init(settings: MP4WriterSettings) throws(MediaError) {
        self.settings = settings
        videoEncoder = try settings.video.map { settings throws(MediaError) in try LibavVideoEncoder(settings: settings) }
        audioEncoder = try settings.audio.map { settings throws(MediaError) in try AACPacketEncoder(settings: settings) }
        writer = try PacketFileWriter(path: settings.path, video: videoEncoder?.parameters, audio: audioEncoder?.parameters,
                                      metadata: settings.metadata, syncInterval: settings.syncInterval,
                                      start: MonotonicInstant(nanoseconds: 0))
    }

    /// Bytes in the file so far (what has reached the kernel).
    public var bytesWritten: Int64 { writer.bytesWritten }

    /// Encoded bytes handed to the muxer so far.
    public var bytesEncoded: Int64 { writer.bytesEncoded }

    /// Seconds of video (or audio, for an audio-only file) written so far.
    public var secondsWritten: Double {
        if videoEncoder != nil { return writer.secondsWritten }
        guard let audioEncoder else { return 0 }
        return Double(samplesAccepted) / Double(max(audioEncoder.settings.input.sampleRate, 1))
    }

    /// Encodes one video frame.
    /// - Parameters:
    ///   - pixels: A tightly packed frame in the configured input layout.
    ///   - nanosecondsFromStart: Capture time relative to the file's first frame.
    ///   - forceKeyframe: Start a GOP here.
    /// - Throws: `MediaError` on encoder or disk failure (`.diskFull` for ENOSPC).
    public func writeVideo(_ pixels: UnsafeRawBufferPointer, nanosecondsFromStart: Int64,
                           forceKeyframe: Bool = false) throws(MediaError) {
        guard let videoEncoder, !videoFinished, let format = settings.video?.input else { return }
        videoFrameCount += 1
        try videoEncoder.encode(copying: pixels, format: format, time: MonotonicInstant(nanoseconds: nanosecondsFromStart),
                                forceKeyframe: forceKeyframe || videoFrameCount == 1) { packet in write(packet) }
        try rethrowFailure()
    }

    /// Encodes interleaved S16 samples that continue the audio track without a gap.
    public func writeAudio(_ samples: UnsafeBufferPointer<Int16>) throws(MediaError) {
        guard let audioEncoder else { return }
        samplesAccepted += Int64(samples.count / max(audioEncoder.settings.input.channels, 1))
        try audioEncoder.encode(contiguous: samples) { packet in write(packet) }
        try rethrowFailure()
    }

    private func write(_ packet: EncodedPacket) {
        guard failure == nil else { return }
        do { try writer.write(packet) } catch { failure = error }
    }

    private func rethrowFailure() throws(MediaError) {
        if let failure { throw failure }
    }

    /// Ends the video track before the file, as a recording does at a cut while the sound
    /// catches up: the encoder's last frames and the open fragment go to the file now
    /// (`PacketFileWriter.flushVideoTail`). Frames written after this are ignored.
    /// - Throws: `MediaError` on encoder or disk failure.
    public func finishVideo() throws(MediaError) {
        guard let videoEncoder, !videoFinished else { return }
        videoFinished = true
        try videoEncoder.flush { packet in write(packet) }
        try rethrowFailure()
        try writer.flushVideoTail()
    }

    /// Drains the encoders, writes the trailer and closes the file.
    /// - Throws: `MediaError` if the tail could not be written; the fragments already
    ///   on disk stay playable either way.
    public func finish() throws(MediaError) {
        if !videoFinished { try videoEncoder?.flush { packet in write(packet) } }
        try audioEncoder?.flush { packet in write(packet) }
        try rethrowFailure()
        try writer.finish()
    }

    /// Closes without draining or a trailer (after an error); what reached the disk
    /// stays there for salvage.
    public func abandon() { writer.abandon() }
}
