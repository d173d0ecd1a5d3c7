import Foundation
import KioskCore
import KioskMedia
import Logging

/// One piece of the live view: the init segment, or a fragment (one picture and the
/// sound before it). Starting a viewer at a `keyframe` fragment is what MSE needs.
public struct LiveChunk: Sendable {
    public enum Kind: Sendable, Equatable { case initSegment(mimeType: String), fragment(keyframe: Bool) }
    public let kind: Kind
    public let bytes: [UInt8]
    /// A fragment's picture time, seconds since the stream's start (0 for the init segment):
    /// what HLS segment durations are made of.
    public let seconds: Double

    public init(kind: Kind, bytes: [UInt8], seconds: Double = 0) {
        self.kind = kind
        self.bytes = bytes
        self.seconds = seconds
    }
}

/// The live view's fan-out: one encode, many viewers (the web app's `/api/live`).
///
/// An output of the encode branch like a recording: while someone watches, it asks for
/// video and sound, muxes each packet into small fMP4 fragments in memory on the encoder
/// thread (a copy, no encode) and hands each fragment to every viewer's queue. A queue
/// is bounded in bytes: a viewer that cannot keep up loses the rest of the GOP and goes
/// on at the next keyframe, counted (`droppedGOPs`); it never slows the encoder, the
/// recording or another viewer. A new viewer asks the encoder for a keyframe, so its
/// first picture comes within a frame or two rather than a GOP.
public final class LiveStream: PacketOutput, Sendable {
    /// One watcher: its chunks arrive on `chunks`; `consumed` gives the bytes back.
    public final class Viewer: Sendable {
        public let id: Int
        public let chunks: AsyncStream<LiveChunk>
        fileprivate let continuation: AsyncStream<LiveChunk>.Continuation
        fileprivate let state: Locked<LiveViewerBudget>

        fileprivate init(id: Int, byteLimit: Int) {
            self.id = id
            (chunks, continuation) = AsyncStream.makeStream(of: LiveChunk.self, bufferingPolicy: .unbounded)
            state = Locked(LiveViewerBudget(byteLimit: byteLimit))
        }

        /// The consumer sent a chunk on: its bytes leave the queue's budget.
        public func consumed(_ chunk: LiveChunk) { state.withLock { $0.consumed(bytes: chunk.bytes.count) } }

        /// GOPs this viewer lost because it fell behind.
        public var droppedGOPs: Int { state.withLock { $0.droppedGOPs } }
        public var sentBytes: Int64 { state.withLock { $0.sentBytes } }
    }

    public struct Status: Sendable, Equatable {
        public var viewers: Int
        public var droppedGOPs: Int
        public var fragments: Int
        public var mimeType: String?
    }

    private struct Shared {
        var viewers: [Int: Viewer] = [:]
        var nextID = 1
        var video: StreamParameters?
        var audio: StreamParameters?
        var videoOpenedAt: MonotonicInstant?
        var muxer: LiveFragmentMuxer?
        var muxerStart: MonotonicInstant?
        var initChunk: LiveChunk?
        var fragments = 0
        var droppedGOPsOfLeft = 0
        var lastKeyframeRequest: MonotonicInstant?
    }

    private let shared = Locked(Shared())
    private let maximumViewers: Int
    private let viewerByteLimit: Int
    private let expectsAudio: Bool
    private let requestKeyframe: @Sendable (MonotonicInstant) -> Void
    private let clock: MonotonicClock
    private let logger: Logger

    /// - Parameters:
    ///   - maximumViewers: Viewers at once; one more is refused.
    ///   - viewerByteLimit: Each viewer's queue (about two seconds at the stream's bitrate).
    ///   - expectsAudio: A microphone exists: wait (≤ 2 s) for its parameters before the init segment.
    ///   - requestKeyframe: Asks the encoder for a keyframe (a viewer joined).
    public init(maximumViewers: Int, viewerByteLimit: Int, expectsAudio: Bool, clock: MonotonicClock, logger: Logger,
                requestKeyframe: @escaping @Sendable (MonotonicInstant) -> Void) {
        self.maximumViewers = maximumViewers
        self.viewerByteLimit = max(64 * 1024, viewerByteLimit)
        self.expectsAudio = expectsAudio
        self.clock = clock
        self.logger = logger
        self.requestKeyframe = requestKeyframe
    }

    public var status: Status {
        shared.withLock { shared in
            Status(viewers: shared.viewers.count,
                   droppedGOPs: shared.droppedGOPsOfLeft + shared.viewers.values.reduce(0) { $0 + $1.droppedGOPs },
                   fragments: shared.fragments, mimeType: shared.initChunk.flatMap {
                       if case .initSegment(let type) = $0.kind { type } else { nil }
                   })
        }
    }

    /// A new viewer, or nil when `maximumViewers` already watch. Viewers joining within
    /// a second share one keyframe (each costs the encoder and the recording a few bytes).
    public func join() -> Viewer? {
        let now = clock.now()
        let (viewer, askForKeyframe) = shared.withLock { shared -> (Viewer?, Bool) in
            guard shared.viewers.count < maximumViewers else { return (nil, false) }
            let viewer = Viewer(id: shared.nextID, byteLimit: viewerByteLimit)
            shared.nextID += 1
            shared.viewers[viewer.id] = viewer
            if let initChunk = shared.initChunk { viewer.continuation.yield(initChunk) }
            let ask = shared.lastKeyframeRequest.map { now.seconds(since: $0) >= 1 } ?? true
            if ask { shared.lastKeyframeRequest = now }
            return (viewer, ask)
        }
        if askForKeyframe { requestKeyframe(now) }
        return viewer
    }

    /// The viewer left (its socket closed).
    public func leave(_ viewer: Viewer) {
        shared.withLock { shared in
            guard shared.viewers.removeValue(forKey: viewer.id) != nil else { return }
            shared.droppedGOPsOfLeft += viewer.droppedGOPs
            if shared.viewers.isEmpty {
                // Nobody watches: the next viewer gets a fresh muxer (and time zero).
                shared.muxer = nil
                shared.initChunk = nil
            }
        }
        viewer.continuation.finish()
    }

    /// Ends every viewer (shutdown); their pages reconnect to the next daemon.
    public func finishAll() {
        let all = shared.withLock { shared -> [Viewer] in
            defer { shared.viewers.removeAll(); shared.muxer = nil; shared.initChunk = nil }
            return Array(shared.viewers.values)
        }
        for viewer in all { viewer.continuation.finish() }
    }

    // MARK: PacketOutput (the encoder thread)

    public var demand: EncoderDemand {
        shared.withLock { $0.viewers.isEmpty } ? .none : (expectsAudio ? [.video, .audio] : .video)
    }

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {
        shared.withLock { shared in
            if media == .video {
                if !parameters.sameSetup(as: shared.video) { restart(&shared, reason: "the picture's format changed") }
                shared.video = parameters
                shared.videoOpenedAt = clock.now()
            } else {
                if shared.muxer != nil, !parameters.sameSetup(as: shared.audio) { restart(&shared, reason: "the sound's format changed") }
                shared.audio = parameters
            }
        }
    }

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let (chunk, viewers) = shared.withLock { shared -> (LiveChunk?, [Viewer]) in
            guard !shared.viewers.isEmpty else { return (nil, []) }
            if packet.media == .video { shared.video = parameters } else { shared.audio = parameters }
            if shared.muxer == nil {
                guard packet.media == .video, packet.isKeyframe, let video = shared.video, video.hasExtradata else { return (nil, []) }
                let waitedLongEnough = shared.videoOpenedAt.map { clock.now().seconds(since: $0) > 2 } ?? true
                guard !expectsAudio || shared.audio != nil || waitedLongEnough else { return (nil, []) }
                do {
                    let muxer = try LiveFragmentMuxer(video: video, audio: expectsAudio ? shared.audio : nil, start: packet.time)
                    guard let type = MSEMimeType.of(initSegment: muxer.initSegment) else {
                        logger.error("live view: the init segment carries no H.264 configuration")
                        return (nil, [])
                    }
                    shared.muxer = muxer
                    shared.muxerStart = packet.time
                    let initChunk = LiveChunk(kind: .initSegment(mimeType: type), bytes: muxer.initSegment)
                    shared.initChunk = initChunk
                    for viewer in shared.viewers.values { viewer.continuation.yield(initChunk) }
                } catch {
                    logger.error("live view: \(error)")
                    return (nil, [])
                }
            }
            guard let muxer = shared.muxer else { return (nil, []) }
            do {
                guard let fragment = try muxer.write(packet) else { return (nil, []) }
                shared.fragments += 1
                let seconds = shared.muxerStart.map { packet.time.seconds(since: $0) } ?? 0
                return (LiveChunk(kind: .fragment(keyframe: packet.isKeyframe), bytes: fragment, seconds: seconds),
                        Array(shared.viewers.values))
            } catch {
                logger.error("live view: \(error); the viewers reconnect")
                restart(&shared, reason: "\(error)")
                return (nil, [])
            }
        }
        guard let chunk else { return }
        guard case .fragment(let keyframe) = chunk.kind else { return }
        for viewer in viewers where viewer.state.withLock({ $0.admit(bytes: chunk.bytes.count, keyframe: keyframe) }) {
            viewer.continuation.yield(chunk)
        }
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}

    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {
        shared.withLock { restart(&$0, reason: "the encoder failed") }
    }

    /// A new init segment cannot follow the old one in a viewer's SourceBuffer: the
    /// viewers are ended (their pages reconnect in a second) and the muxer starts again.
    private func restart(_ shared: inout Shared, reason: String) {
        guard shared.muxer != nil else { return }
        logger.info("live view: starting again (\(reason))")
        shared.muxer = nil
        shared.initChunk = nil
        for viewer in shared.viewers.values {
            shared.droppedGOPsOfLeft += viewer.droppedGOPs
            viewer.continuation.finish()
        }
        shared.viewers.removeAll()
    }
}
