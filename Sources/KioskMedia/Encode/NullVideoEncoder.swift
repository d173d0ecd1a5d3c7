import KioskCore

/// The stand-in encoder: a small, well-formed Annex B packet per frame (SPS, PPS and an
/// IDR slice on keyframes; a P slice otherwise), a keyframe every `keyframeInterval`
/// frames or when forced. No pixels are read, so the graph's timing, keyframe logic,
/// outputs and drops are tested at any size without a core spent on encoding.
public final class NullVideoEncoder: VideoEncoding {
    public let settings: VideoTrackSettings
    public let parameters: StreamParameters
    public var name: String { "null" }
    private var framesSinceKeyframe = Int.max - 1
    public private(set) var framesEncoded = 0
    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xDA, 0x02, 0x80, 0xBF, 0xE5, 0xC0, 0x44, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x03, 0x00, 0xF2, 0x3C, 0x58, 0xBA, 0x80]
    static let pps: [UInt8] = [0x68, 0xCE, 0x0F, 0x2C, 0x80]

    /// - Throws: `MediaError` only when memory runs out.
    public init(settings: VideoTrackSettings) throws(MediaError) {
        self.settings = settings
        guard let parameters = StreamParameters(nullVideo: settings) else {
            throw MediaError(.encoderRejectedSettings, operation: "open null encoder", detail: "out of memory")
        }
        self.parameters = parameters
    }

    public func encode(_ frame: VideoFrame, forceKeyframe: Bool, emit: (EncodedPacket) -> Void) throws(MediaError) {
        framesSinceKeyframe += 1
        let keyframe = forceKeyframe || framesSinceKeyframe >= settings.keyframeInterval
        if keyframe { framesSinceKeyframe = 0 }
        framesEncoded += 1
        let body: [UInt8] = keyframe
            ? [0, 0, 0, 1] + Self.sps + [0, 0, 0, 1] + Self.pps + [0, 0, 0, 1, 0x65, 0x88, 0x80, 0x40]
            : [0, 0, 0, 1, 0x41, 0x9A, 0x00, 0x40]
        if let packet = EncodedPacket(bytes: body, media: .video, time: frame.timestamp,
                                      durationNanoseconds: frame.format.frameDurationNanoseconds, isKeyframe: keyframe) {
            emit(packet)
        }
    }

    public func flush(emit: (EncodedPacket) -> Void) throws(MediaError) {}
}
