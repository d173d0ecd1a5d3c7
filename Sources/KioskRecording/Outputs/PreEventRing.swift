import KioskCore
import KioskMedia

/// The pre-event buffer as an output of the graph's one encode: the last `seconds` of
/// encoded sound and video, bounded in bytes, always starting at a keyframe, so that a
/// recording can begin in the past (an event clip that starts before its trigger) —
/// without a second encode and without keeping raw frames.
public final class PreEventRing: PacketOutput, Sendable {
    private struct State {
        var ring: PacketRing<(EncodedPacket, StreamParameters)>
        var enabled = true
        var lastVideoParameters: StreamParameters?
    }
    private let state: Locked<State>

    /// - Parameters:
    ///   - seconds: How far back a recording may begin.
    ///   - byteLimit: The most memory the ring may hold (the ring drops whole GOPs from
    ///     the front beyond it): about `seconds` at the encoder's bitrate plus one GOP.
    public init(seconds: Double, byteLimit: Int) {
        self.byteLimit = byteLimit
        state = Locked(State(ring: PacketRing(seconds: seconds, byteLimit: byteLimit)))
    }

    /// The budget for `seconds` of a stream of `bitrate` bits per second with a keyframe
    /// every `keyframeSeconds`: the span, one GOP more (the ring starts at a keyframe),
    /// and a quarter for keyframes being larger than average.
    public static func byteBudget(seconds: Double, bitrate: Int, keyframeSeconds: Double = 1) -> Int {
        Int((seconds + keyframeSeconds) * Double(bitrate) / 8 * 1.25)
    }

    /// Stops or resumes filling (and asking the encoder to run); stopping empties it.
    public func setEnabled(_ on: Bool) {
        state.withLock { state in
            state.enabled = on
            if !on { state.ring.removeAll() }
        }
    }

    public var demand: EncoderDemand { state.withLock { $0.enabled ? [.video, .audio] : .none } }

    /// Bytes held and the span they cover, for status and the benchmark.
    /// The most bytes it may hold.
    public let byteLimit: Int

    public var held: (bytes: Int, seconds: Double) { state.withLock { ($0.ring.bytes, $0.ring.heldSeconds) } }

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {}

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let info = PacketInfo(media: packet.media == .video ? .video : .audio, time: packet.time,
                              isKeyframe: packet.isKeyframe, byteCount: packet.byteCount)
        state.withLock { state in
            guard state.enabled else { return }
            if packet.media == .video, !parameters.sameSetup(as: state.lastVideoParameters) {
                // Another encoder set-up (the camera's format changed): older packets could
                // not go into the same file.
                state.ring.removeAll()
                state.lastVideoParameters = parameters
            }
            state.ring.append(info, (packet, parameters))
        }
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}
    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {}

    /// The packets from the last keyframe at or before `time` on (sound from that
    /// keyframe's time), by reference.
    public func packets(from time: MonotonicInstant) -> [(packet: EncodedPacket, parameters: StreamParameters)] {
        state.withLock { $0.ring.packets(from: time).map { ($0.payload.0, $0.payload.1) } }
    }
}
