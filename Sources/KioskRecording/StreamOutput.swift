import Foundation
import KioskCore
import KioskMedia
import Logging

/// A live stream of the graph's one encode to a libavformat destination (RTMP, RTSP,
/// SRT, an HLS folder): no second encoder.
///
/// It runs on a thread of its own behind a `GOPQueue`: a slow or absent network never
/// holds up the encoder or the recording, and never grows memory — whole GOPs are dropped
/// and counted. A lost destination is reconnected with backoff (1 s, doubling to 30 s);
/// after a reconnect the stream starts again at a keyframe.
public final class StreamOutput: PacketOutput, @unchecked Sendable {
    public enum State: String, Sendable { case stopped, connecting, live, reconnecting }

    public struct Status: Sendable, Equatable {
        public var state: State = .stopped
        /// The destination with any password hidden.
        public var destination: String
        public var bytesSent: Int64 = 0
        public var droppedGOPs = 0
        public var droppedPackets = 0
        public var connects = 0
        public var lastError: String?
    }

    public let url: String
    private let logger: Logger
    private let clock: MonotonicClock
    private let lock = Lock()
    // Guarded by `lock`.
    private var queue: GOPQueue<(EncodedPacket, StreamParameters)>
    private var published: Status
    private var running = false
    private var stopRequested = false
    private var videoParameters: StreamParameters?
    private var audioParameters: StreamParameters?
    private var writer: PacketStreamWriter?
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let wantsAudio: Bool

    /// - Parameters:
    ///   - queueBytes: What may wait for the network before whole GOPs go (about two
    ///     seconds at the stream's bitrate).
    ///   - audio: Whether sound goes too.
    public init(url: String, queueBytes: Int, audio: Bool = true, clock: MonotonicClock, logger: Logger) {
        self.url = url
        self.clock = clock
        self.logger = logger
        wantsAudio = audio
        queue = GOPQueue(byteLimit: queueBytes)
        published = Status(destination: PacketStreamWriter.redacted(url))
    }

    public var status: Status {
        lock.withLock {
            var status = published
            status.droppedGOPs = queue.droppedGOPs
            status.droppedPackets = queue.droppedPackets
            return status
        }
    }

    public var demand: EncoderDemand {
        guard lock.withLock({ running }) else { return .none }
        return wantsAudio ? [.video, .audio] : .video
    }

    /// Starts streaming (on its own thread; returns at once).
    public func start() {
        lock.withLock {
            guard !running else { return }
            running = true
            stopRequested = false
            published.state = .connecting
            let thread = Thread { [self] in
                run()
                finished.signal()
            }
            thread.name = "kioskcam.stream"
            self.thread = thread
            thread.start()
        }
    }

    /// Stops streaming and waits for the thread (a blocked network call is cancelled).
    /// Blocking.
    public func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            guard running, !stopRequested else { return false }
            stopRequested = true
            lock.broadcast()
            return true
        }
        guard wasRunning else { return }
        // A graceful end first (an HLS playlist gets its last entries); a network call
        // that does not return in time is cancelled.
        if finished.wait(timeout: .now() + 3) == .timedOut {
            lock.withLock { writer?.cancel() }
            finished.wait()
        }
        lock.withLock {
            running = false
            thread = nil
            queue.removeAll()
            published.state = .stopped
        }
    }

    // MARK: PacketOutput (encoder thread)

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {
        lock.withLock { if media == .audio { audioParameters = parameters } }
    }

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let info = PacketInfo(media: packet.media == .video ? .video : .audio, time: packet.time,
                              isKeyframe: packet.isKeyframe, byteCount: packet.byteCount)
        lock.withLock {
            guard running, !stopRequested else { return }
            if packet.media == .video { videoParameters = parameters } else { audioParameters = parameters }
            queue.append(info, (packet, parameters))
            lock.broadcast()
        }
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}
    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {}

    // MARK: Stream thread

    private func run() {
        var backoff = 1.0
        while !lock.withLock({ stopRequested }) {
            // Wait for a keyframe to begin at, with the video's SPS/PPS known.
            guard let first = nextKeyframe() else { break }
            let (video, audio) = lock.withLock { (videoParameters, wantsAudio ? audioParameters : nil) }
            do {
                let writer = try PacketStreamWriter(url: url, video: video, audio: audio, start: first.time)
                lock.withLock {
                    self.writer = writer
                    published.state = .live
                    published.connects += 1
                    published.lastError = nil
                }
                logger.notice("stream: live to \(PacketStreamWriter.redacted(url))")
                backoff = 1
                try writer.write(first)
                try pump(writer)
                writer.finish()
                lock.withLock { self.writer = nil }
            } catch {
                let stopping = lock.withLock { () -> Bool in
                    writer = nil
                    published.lastError = error.description
                    published.state = stopRequested ? .stopped : .reconnecting
                    return stopRequested
                }
                if stopping { break }
                logger.warning("stream: \(error); trying again in \(Int(backoff)) s")
                waitForStop(seconds: backoff)
                backoff = min(backoff * 2, 30)
            }
        }
    }

    /// Drops queued packets up to the next video keyframe and returns it; nil when stopping.
    private func nextKeyframe() -> EncodedPacket? {
        lock.withLock { () -> EncodedPacket? in
            while !stopRequested {
                while let item = queue.popFirst() {
                    if item.payload.0.media == .video, item.payload.0.isKeyframe, item.payload.1.hasExtradata {
                        return item.payload.0
                    }
                }
                _ = lock.wait(until: Date(timeIntervalSinceNow: 0.5))
            }
            return nil
        }
    }

    /// Sends packets until stopped; throws when the destination fails.
    private func pump(_ writer: PacketStreamWriter) throws(MediaError) {
        while let (packet, parameters) = nextPacket() {
            if packet.media == .video, let video = lock.withLock({ videoParameters }), !parameters.sameSetup(as: video) {
                throw MediaError(.muxer, operation: "stream", detail: "the camera's format changed; starting the stream again")
            }
            try writer.write(packet)
            lock.withLock { published.bytesSent = writer.bytesSent }
        }
    }

    /// The next queued packet, waiting for one; nil once stopping.
    private func nextPacket() -> (EncodedPacket, StreamParameters)? {
        lock.withLock {
            while !stopRequested {
                if let item = queue.popFirst() { return item.payload }
                _ = lock.wait(until: Date(timeIntervalSinceNow: 0.5))
            }
            return nil
        }
    }

    private func waitForStop(seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        lock.withLock {
            while !stopRequested, lock.wait(until: deadline) {}
        }
    }
}
