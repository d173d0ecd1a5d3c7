import KioskCore
import KioskMedia

/// The pre-event buffer as an output of the graph's one encode: the last `seconds` of
/// encoded sound and video, bounded in bytes, always starting at a keyframe, so that a
/// recording can begin in the past (an event clip that starts before its trigger) —
/// without a second encode and without keeping raw frames.
public final class PreEventRing: PacketOutput, @unchecked Sendable {
    private let lock = Lock()
    private var ring: PacketRing<(EncodedPacket, StreamParameters)>   // guarded by `lock`
    private var enabled = true
    private var lastVideoParameters: StreamParameters?

    /// - Parameters:
    ///   - seconds: How far back a recording may begin.
    ///   - byteLimit: The most memory the ring may hold (the ring drops whole GOPs from
    ///     the front beyond it): about `seconds` at the encoder's bitrate plus one GOP.
    public init(seconds: Double, byteLimit: Int) {
        ring = PacketRing(seconds: seconds, byteLimit: byteLimit)
    }

    /// The budget for `seconds` of a stream of `bitrate` bits per second with a keyframe
    /// every `keyframeSeconds`: the span, one GOP more (the ring starts at a keyframe),
    /// and a quarter for keyframes being larger than average.
    public static func byteBudget(seconds: Double, bitrate: Int, keyframeSeconds: Double = 1) -> Int {
        Int((seconds + keyframeSeconds) * Double(bitrate) / 8 * 1.25)
    }

    /// Stops or resumes filling (and asking the encoder to run); stopping empties it.
    public func setEnabled(_ on: Bool) {
        lock.withLock {
            enabled = on
            if !on { ring.removeAll() }
        }
    }

    public var demand: EncoderDemand { lock.withLock { enabled ? [.video, .audio] : .none } }

    /// Bytes held and the span they cover, for status and the benchmark.
    public var held: (bytes: Int, seconds: Double) { lock.withLock { (ring.bytes, ring.heldSeconds) } }

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {}

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let info = PacketInfo(media: packet.media == .video ? .video : .audio, time: packet.time,
                              isKeyframe: packet.isKeyframe, byteCount: packet.byteCount)
        lock.withLock {
            guard enabled else { return }
            if packet.media == .video, !parameters.sameSetup(as: lastVideoParameters) {
                // Another encoder set-up (the camera's format changed): older packets could
                // not go into the same file.
                ring.removeAll()
                lastVideoParameters = parameters
            }
            ring.append(info, (packet, parameters))
        }
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}
    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {}

    /// The packets from the last keyframe at or before `time` on (sound from that
    /// keyframe's time), by reference.
    public func packets(from time: MonotonicInstant) -> [(packet: EncodedPacket, parameters: StreamParameters)] {
        lock.withLock { ring.packets(from: time).map { ($0.payload.0, $0.payload.1) } }
    }
}
