import Foundation
import KioskCore
import KioskMedia
import Logging

/// One encoded packet as RTP payloads, made once and shared by every client.
public struct RTPUnit: Sendable {
    public let media: EncodedPacket.Media
    public let payloads: [RTPPayload]
    /// The RTP timestamp on the media's clock (90 kHz, or the sample rate).
    public let timestamp: UInt32
    /// The capture time, for the sender reports' wall-clock mapping.
    public let time: MonotonicInstant
    /// A picture a client can start at.
    public let keyframe: Bool
    /// Payload and RTP header bytes: what the client's queue counts.
    public let byteCount: Int
}

/// The RTSP server's fan-out: one encode, many clients (`rtsp://…/live`).
///
/// An output of the encode branch like the web app's live view: while a client plays
/// (or one is being described), it asks for video and sound, cuts each packet into RTP
/// payloads on the encoder thread (RFC 6184 / RFC 3640; no copy per client) and offers
/// the unit to every client. Each client's queue is bounded in bytes: one that cannot
/// keep up loses the rest of the GOP and goes on at the next keyframe, counted; it never
/// slows the encoder, the recording or another client. A client joining asks the encoder
/// for a keyframe, so its first picture comes within a frame or two.
public final class RTPStream: PacketOutput, Sendable {
    /// One playing client: units reach it through `deliver` (called on the encoder
    /// thread; it must only hand them on), and `sent` gives their bytes back.
    public final class Client: Sendable {
        public let id: Int
        fileprivate let budget: Locked<LiveViewerBudget>
        /// The capture time of the first picture it was given: sound from before it is
        /// not sent (it would start the client's sound track before the picture's).
        fileprivate let start = Locked<MonotonicInstant?>(nil)
        fileprivate let deliver: @Sendable (RTPUnit) -> Void
        fileprivate let wantsAudio: Bool

        fileprivate init(id: Int, byteLimit: Int, wantsAudio: Bool, deliver: @escaping @Sendable (RTPUnit) -> Void) {
            self.id = id
            budget = Locked(LiveViewerBudget(byteLimit: byteLimit))
            self.deliver = deliver
            self.wantsAudio = wantsAudio
        }

        /// The client's connection sent a unit's bytes on.
        public func sent(bytes: Int) { budget.withLock { $0.consumed(bytes: bytes) } }

        /// GOPs this client lost because it fell behind, and the bytes it was given.
        public var droppedGOPs: Int { budget.withLock { $0.droppedGOPs } }
        public var queuedBytes: Int { budget.withLock { $0.queuedBytes } }
        public var sentBytes: Int64 { budget.withLock { $0.sentBytes } }
    }

    /// What a DESCRIBE says: the tracks as the encoder set them up.
    public struct Tracks: Sendable, Equatable {
        public var video: SDPDescription.Video
        public var audio: SDPDescription.Audio?
        public var videoClock: RTPClock
        public var audioClock: RTPClock?
        /// Changes whenever the encoder's set-up does: clients of an older one are ended.
        public var generation: Int
    }

    private struct Shared {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var video: StreamParameters?
        var audio: StreamParameters?
        var parameterSets: [[UInt8]] = []
        var generation = 1
        var warmUntil: MonotonicInstant?
        var lastKeyframeRequest: MonotonicInstant?
        /// A keyframe was asked for and has not gone out yet.
        var keyframeRequested = false
        var droppedGOPsOfLeft = 0
    }

    private let shared = Locked(Shared())
    private let expectsAudio: Bool
    private let framesPerSecond: Int
    private let maximumPayload: Int
    private let clientByteLimit: Int
    /// Time zero of every RTP timestamp: the stream's creation.
    private let zero: MonotonicInstant
    private let videoOffset = UInt32.random(in: 0 ... .max)
    private let audioOffset = UInt32.random(in: 0 ... .max)
    private let requestKeyframe: @Sendable (MonotonicInstant) -> Void
    private let onEnded: @Sendable (Client) -> Void
    private let clock: MonotonicClock
    private let logger: Logger

    /// - Parameters:
    ///   - clientByteLimit: Each client's queue (about two seconds of the stream).
    ///   - expectsAudio: A microphone exists: the description waits for its track.
    ///   - requestKeyframe: Asks the encoder for a keyframe (a client joined).
    ///   - onEnded: A client was ended by the stream (the encoder's set-up changed): its
    ///     connection should close.
    public init(clientByteLimit: Int, expectsAudio: Bool, framesPerSecond: Int, maximumPayload: Int = 1400,
                clock: MonotonicClock, logger: Logger, requestKeyframe: @escaping @Sendable (MonotonicInstant) -> Void,
                onEnded: @escaping @Sendable (Client) -> Void = { _ in }) {
        self.clientByteLimit = max(128 * 1024, clientByteLimit)
        self.expectsAudio = expectsAudio
        self.framesPerSecond = framesPerSecond
        self.maximumPayload = maximumPayload
        self.clock = clock
        self.logger = logger
        self.requestKeyframe = requestKeyframe
        self.onEnded = onEnded
        zero = clock.now()
    }

    /// Now on the clock packet times are on (for the sender reports' wall-clock mapping).
    public func now() -> MonotonicInstant { clock.now() }

    /// Clients playing now, and GOPs dropped by all (those gone included).
    public var figures: (clients: Int, droppedGOPs: Int) {
        shared.withLock { shared in
            (shared.clients.count, shared.droppedGOPsOfLeft + shared.clients.values.reduce(0) { $0 + $1.droppedGOPs })
        }
    }

    /// The tracks, or nil while the encoder has not set them up (it starts on `warmUp`).
    public var tracks: Tracks? {
        shared.withLock { shared in
            guard let video = shared.video, !shared.parameterSets.isEmpty else { return nil }
            if expectsAudio, shared.audio == nil { return nil }
            let audio = shared.audio.map {
                SDPDescription.Audio(sampleRate: $0.sampleRate, channels: $0.channels, config: $0.extradataBytes)
            }
            return Tracks(video: .init(parameterSets: shared.parameterSets, width: video.width, height: video.height,
                                       framesPerSecond: framesPerSecond),
                          audio: audio, videoClock: RTPClock(rate: 90_000, offset: videoOffset),
                          audioClock: audio.map { RTPClock(rate: $0.sampleRate, offset: audioOffset) },
                          generation: shared.generation)
        }
    }

    /// Keeps the encoder on for a while without a client: a DESCRIBE needs the tracks'
    /// set-up (SPS/PPS, the AAC config), which exists only once the encoder has opened.
    public func warmUp(seconds: Double = 15) {
        let until = clock.now().advanced(byNanoseconds: Int64(seconds * 1e9))
        shared.withLock { $0.warmUntil = until }
    }

    /// A new client, fed from the next keyframe (asked for now).
    public func join(wantsAudio: Bool, deliver: @escaping @Sendable (RTPUnit) -> Void) -> Client {
        let now = clock.now()
        let (client, ask) = shared.withLock { shared -> (Client, Bool) in
            let client = Client(id: shared.nextID, byteLimit: clientByteLimit, wantsAudio: wantsAudio, deliver: deliver)
            shared.nextID += 1
            shared.clients[client.id] = client
            // Clients joining together share one keyframe, unless it went out already.
            let ask = !shared.keyframeRequested || shared.lastKeyframeRequest.map { now.seconds(since: $0) >= 1 } ?? true
            if ask {
                shared.lastKeyframeRequest = now
                shared.keyframeRequested = true
            }
            return (client, ask)
        }
        if ask { requestKeyframe(now) }
        return client
    }

    /// The client stopped playing (PAUSE, TEARDOWN, its connection closed).
    public func leave(_ client: Client) {
        shared.withLock { shared in
            guard shared.clients[client.id] === client else { return }
            shared.clients[client.id] = nil
            shared.droppedGOPsOfLeft += client.droppedGOPs
        }
    }

    // MARK: PacketOutput (the encoder thread)

    public var demand: EncoderDemand {
        let now = clock.now()
        let wanted = shared.withLock { shared in !shared.clients.isEmpty || shared.warmUntil.map { now < $0 } == true }
        return wanted ? (expectsAudio ? [.video, .audio] : .video) : .none
    }

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {
        update(media, parameters)
    }

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        update(packet.media, parameters)
        let (clients, parameterSets) = shared.withLock { shared -> ([Client], [[UInt8]]) in
            if packet.media == .video, shared.parameterSets.isEmpty, packet.isKeyframe,
               let inBand = H264AnnexB.parameterSets(in: packet.data) {
                // A hardware encoder gives its SPS/PPS with the first keyframe only.
                shared.parameterSets = H264RTPPacketizer.parameterSets(extradata: inBand)
            }
            if packet.media == .video, packet.isKeyframe { shared.keyframeRequested = false }
            return (Array(shared.clients.values), shared.parameterSets)
        }
        guard !clients.isEmpty else { return }
        let elapsed = packet.time.nanoseconds(since: zero)
        let unit: RTPUnit
        switch packet.media {
        case .video:
            let payloads = H264RTPPacketizer.payloads(accessUnit: packet.data, parameterSets: parameterSets,
                                                      maximumPayload: maximumPayload)
            guard !payloads.isEmpty else { return }
            unit = RTPUnit(media: .video, payloads: payloads,
                           timestamp: RTPClock(rate: 90_000, offset: videoOffset).timestamp(nanosecondsSinceZero: elapsed),
                           time: packet.time, keyframe: packet.isKeyframe,
                           byteCount: payloads.reduce(0) { $0 + $1.bytes.count + RTPHeader.size + 4 })
        case .audio:
            guard let payload = AACRTPPacketizer.payload(frame: packet.data) else { return }
            let rate = max(1, parameters.sampleRate)
            unit = RTPUnit(media: .audio, payloads: [payload],
                           timestamp: RTPClock(rate: rate, offset: audioOffset).timestamp(nanosecondsSinceZero: elapsed),
                           time: packet.time, keyframe: false, byteCount: payload.bytes.count + RTPHeader.size + 4)
        }
        for client in clients where unit.media == .video || client.wantsAudio {
            if unit.media == .audio, client.start.withLock({ $0.map { unit.time < $0 } ?? true }) { continue }
            if client.budget.withLock({ $0.admit(bytes: unit.byteCount, keyframe: unit.keyframe) }) {
                if unit.keyframe { client.start.withLock { if $0 == nil { $0 = unit.time } } }
                client.deliver(unit)
            }
        }
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}

    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {}

    /// Keeps the newest set-up; a different one (the camera's format changed) ends the
    /// clients, whose SDP no longer holds.
    private func update(_ media: EncodedPacket.Media, _ parameters: StreamParameters) {
        let ended = shared.withLock { shared -> [Client] in
            let old = media == .video ? shared.video : shared.audio
            if old === parameters { return [] }
            let changed = old != nil && !parameters.sameSetup(as: old)
            if media == .video {
                shared.video = parameters
                if changed || shared.parameterSets.isEmpty {
                    shared.parameterSets = H264RTPPacketizer.parameterSets(extradata: parameters.extradataBytes)
                }
            } else {
                shared.audio = parameters
            }
            guard changed else { return [] }
            shared.generation += 1
            let ended = Array(shared.clients.values)
            for client in ended { shared.droppedGOPsOfLeft += client.droppedGOPs }
            shared.clients.removeAll()
            return ended
        }
        guard !ended.isEmpty else { return }
        logger.info("rtsp: the \(media.rawValue) set-up changed; \(ended.count) client(s) will reconnect")
        for client in ended { onEnded(client) }
    }
}
