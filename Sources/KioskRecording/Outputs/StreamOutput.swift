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
public final class StreamOutput: PacketOutput, Sendable {
    public enum State: String, Sendable { case stopped, connecting, live, reconnecting, failed }

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
    private struct Shared {
        var queue: GOPQueue<(EncodedPacket, StreamParameters)>
        var published: Status
        var running = false
        var stopRequested = false
        /// Until when a stop may still finish the segment going on (`minimumTail`).
        var tailDeadline: Date?
        var videoParameters: StreamParameters?
        var audioParameters: StreamParameters?
        /// Cancels the open writer's blocking network call (`stop()` after its grace time).
        var cancelWriter: (@Sendable () -> Void)?
    }
    /// The stream thread waits in it for packets, and for `stop()` between attempts.
    private let shared: Locked<Shared>
    private let thread = ThreadGroup()
    private let wantsAudio: Bool

    /// - Parameters:
    ///   - queueBytes: What may wait for the network before whole GOPs go (about two
    ///     seconds at the stream's bitrate).
    ///   - audio: Whether sound goes too.
    public init(url: String, queueBytes: Int, audio: Bool = true, clock: MonotonicClock, logger: Logger) {
        self.url = Self.resolved(url)
        self.clock = clock
        self.logger = logger
        wantsAudio = audio
        shared = Locked(Shared(queue: GOPQueue(byteLimit: queueBytes), published: Status(destination: PacketStreamWriter.redacted(Self.resolved(url)))))
    }

    /// A local destination that is a folder (no `.m3u8`) holds `index.m3u8`, as
    /// `kioskcam broadcast --to FOLDER` does; URLs are kept as they are.
    static func resolved(_ url: String) -> String {
        guard url.hasPrefix("/"), !url.hasSuffix(".m3u8") else { return url }
        var folder = url
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder + "/index.m3u8"
    }

    /// For an HLS playlist on this board: its folder, made if missing. Nil when it is
    /// usable; else why not (the stream then stops with that one error: trying again
    /// cannot make a folder writable).
    static func prepareFolder(for url: String) -> String? {
        guard url.hasPrefix("/") else { return nil }
        let folder = (url as NSString).deletingLastPathComponent
        var made = ""
        for part in folder.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o755) != 0, errno != EEXIST {
                return "cannot create the HLS folder \(folder): \(made): \(String(cString: strerror(errno))); make it, writable by the daemon's user, or change [stream] url"
            }
        }
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return "cannot create the HLS folder \(folder): a file is in the way; change [stream] url"
        }
        guard access(folder, W_OK) == 0 else {
            return "the HLS folder \(folder) is not writable by the daemon's user (\(String(cString: strerror(errno)))); chown it, or change [stream] url"
        }
        return nil
    }

    public var status: Status {
        shared.withLock {
            var status = $0.published
            status.droppedGOPs = $0.queue.droppedGOPs
            status.droppedPackets = $0.queue.droppedPackets
            return status
        }
    }

    public var demand: EncoderDemand {
        guard shared.withLock({ $0.running }) else { return .none }
        return wantsAudio ? [.video, .audio] : .video
    }

    /// Starts streaming (on its own thread; returns at once).
    public func start() {
        shared.withLock { shared in
            guard !shared.running else { return }
            shared.running = true
            shared.stopRequested = false
            shared.published.state = .connecting
            thread.start(name: "kioskcam.stream") { [self] in run() }
        }
    }

    /// Stops streaming and waits for the thread (a blocked network call is cancelled).
    /// Blocking.
    public func stop() {
        let wasRunning = shared.withLock { shared -> Bool in
            guard shared.running, !shared.stopRequested else { return false }
            shared.stopRequested = true
            shared.tailDeadline = Date(timeIntervalSinceNow: Self.tailSeconds)
            return true
        }
        guard wasRunning else { return }
        shared.wakeWaiters()
        // A graceful end first (the segment going on is finished to at least
        // `minimumTail`, and an HLS playlist gets its last entries); a network call that
        // does not return in time is cancelled.
        if !thread.wait(timeout: 3) {
            shared.withLock { $0.cancelWriter }?()
            thread.wait()
        }
        shared.withLock { shared in
            shared.running = false
            shared.queue.removeAll()
            shared.published.state = .stopped
        }
    }

    // MARK: PacketOutput (encoder thread)

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {
        shared.withLock { if media == .audio { $0.audioParameters = parameters } }
    }

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let info = PacketInfo(media: packet.media == .video ? .video : .audio, time: packet.time,
                              isKeyframe: packet.isKeyframe, byteCount: packet.byteCount)
        let queued = shared.withLock { shared -> Bool in
            guard shared.running, !shared.stopRequested || Self.tailOpen(shared) else { return false }
            if packet.media == .video { shared.videoParameters = parameters } else { shared.audioParameters = parameters }
            shared.queue.append(info, (packet, parameters))
            return true
        }
        if queued { shared.wakeWaiters() }
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}
    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {}

    // MARK: Stream thread

    private func run() {
        if let problem = Self.prepareFolder(for: url) {
            logger.error("stream: \(problem)")
            shared.withLock { shared in
                shared.published.lastError = problem
                shared.published.state = .failed
            }
            return
        }
        var backoff = 1.0
        while !shared.withLock({ $0.stopRequested }) {
            // Wait for a keyframe to begin at, with the video's SPS/PPS known.
            guard let first = nextKeyframe() else { break }
            let wantsAudio = wantsAudio
            let (video, audio) = shared.withLock { ($0.videoParameters, wantsAudio ? $0.audioParameters : nil) }
            do {
                let writer = try PacketStreamWriter(url: url, video: video, audio: audio, start: first.time)
                let cancel = writer.cancellation
                shared.withLock { shared in
                    shared.cancelWriter = cancel
                    shared.published.state = .live
                    shared.published.connects += 1
                    shared.published.lastError = nil
                }
                logger.notice("stream: live to \(PacketStreamWriter.redacted(url))")
                let wentLive = clock.now()
                defer {
                    // The back-off starts again only after a connection that held: one
                    // that fails at its first packets doubles it like a refused one.
                    if clock.now().seconds(since: wentLive) >= 10 { backoff = 1 }
                }
                try writer.write(first)
                try pump(writer, from: first)
                writer.finish()
                shared.withLock { $0.cancelWriter = nil }
            } catch {
                let stopping = shared.withLock { shared -> Bool in
                    shared.cancelWriter = nil
                    shared.published.lastError = error.description
                    shared.published.state = shared.stopRequested ? .stopped : .reconnecting
                    return shared.stopRequested
                }
                if stopping { break }
                logger.warning("stream: \(error) Trying again in \(Int(backoff)) s.")
                waitForStop(seconds: backoff)
                backoff = min(backoff * 2, 30)
            }
        }
    }

    /// Drops queued packets up to the next video keyframe and returns it; nil when stopping.
    private func nextKeyframe() -> EncodedPacket? {
        while true {
            // nil: none yet, look again; .some(nil): stopping.
            let found = shared.withLock(waitingUntil: { $0.stopRequested || !$0.queue.isEmpty },
                                        deadline: Date(timeIntervalSinceNow: 0.5)) { shared -> EncodedPacket?? in
                if shared.stopRequested { return .some(nil) }
                while let item = shared.queue.popFirst() {
                    if item.payload.0.media == .video, item.payload.0.isKeyframe, item.payload.1.hasExtradata {
                        return item.payload.0
                    }
                }
                return nil
            }
            if let found { return found }
        }
    }

    /// A stop lets the segment going on reach this long past its keyframe (an HLS
    /// player's last segment is not a single frame), never into a new segment.
    static let minimumTail = 1.0
    /// And waits for that at most this long.
    static let tailSeconds = 1.5

    private static func tailOpen(_ shared: Shared) -> Bool {
        shared.tailDeadline.map { Date() < $0 } ?? false
    }

    /// Sends packets until stopped (and the tail is written); throws when the destination fails.
    private func pump(_ writer: PacketStreamWriter, from first: EncodedPacket) throws(MediaError) {
        var lastKeyframe = first.time
        var lastWritten = first.time
        while let (packet, parameters) = nextPacket(tailDone: lastWritten.seconds(since: lastKeyframe) >= Self.minimumTail) {
            if packet.media == .video {
                lastWritten = packet.time
                if packet.isKeyframe { lastKeyframe = packet.time }
            }
            if packet.media == .video, let video = shared.withLock({ $0.videoParameters }), !parameters.sameSetup(as: video) {
                throw MediaError(.muxer, operation: "stream", detail: "the camera's format changed; starting the stream again")
            }
            try writer.write(packet)
            let sent = writer.bytesSent
            shared.withLock { $0.published.bytesSent = sent }
        }
    }

    /// The next queued packet, waiting for one; nil once stopping and the tail is done
    /// (`tailDone`, its time is up, or the next packet would begin a new GOP).
    private func nextPacket(tailDone: Bool) -> (EncodedPacket, StreamParameters)? {
        while true {
            // nil: none yet, look again; .some(nil): stopping.
            let next = shared.withLock(waitingUntil: { !$0.queue.isEmpty || ($0.stopRequested && (tailDone || !Self.tailOpen($0))) },
                                       deadline: Date(timeIntervalSinceNow: 0.5)) { shared -> (EncodedPacket, StreamParameters)?? in
                if shared.stopRequested {
                    guard !tailDone, Self.tailOpen(shared) else { return .some(nil) }
                    guard let head = shared.queue.firstInfo else { return nil }
                    if head.startsGOP { return .some(nil) }
                }
                return shared.queue.popFirst().map { .some($0.payload) }
            }
            if let next { return next }
        }
    }

    private func waitForStop(seconds: Double) {
        shared.withLock(waitingUntil: { $0.stopRequested }, deadline: Date(timeIntervalSinceNow: seconds)) { _ in }
    }
}
