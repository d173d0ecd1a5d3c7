import Foundation
import KioskCore
import KioskMedia
import Logging

/// What an output needs encoded.
public struct EncoderDemand: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let video = EncoderDemand(rawValue: 1)
    public static let audio = EncoderDemand(rawValue: 2)
    public static let none: EncoderDemand = []
}

/// Takes the packets of the graph's one encode: a file, the pre-event ring, a stream.
///
/// `receive` runs on the encoder thread and must return at once: an output that
/// falls behind queues and drops whole GOPs itself (`GOPQueue`) and never blocks the
/// encoder or the other outputs — except a file replayed as fast as possible, whose
/// output may wait on purpose so that nothing is dropped.
public protocol PacketOutput: AnyObject, Sendable {
    /// What it needs encoded now; read on the encoder thread for every item.
    var demand: EncoderDemand { get }
    /// An encoder opened: the parameters its packets will carry (an output opening a
    /// file needs the sound's before the first sound packet is out).
    func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters)
    /// One packet and the parameters of the stream it belongs to.
    func receive(_ packet: EncodedPacket, parameters: StreamParameters)
    /// The encoder of `media` handed over everything it held (it was drained: no one
    /// wants it any more, the camera's format changed, or the input ended).
    func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool)
    /// The encoder of `media` failed; it is closed and will be opened again on demand.
    func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError)
}

/// The encode branch: one bounded queue from capture, one thread, one H.264 encoder and
/// one AAC encoder, run only while an output wants them, and every packet handed to
/// every output that wants it — one encode for the file, the ring and a stream.
///
/// It also meters the sound level (whether or not anything encodes), answers keyframe
/// requests (a recording or a segment starts exactly at a requested time), and counts
/// the frames it could not keep up with.
public final class EncodeBranch: CaptureBranch, Sendable {
    public let videoSettings: VideoTrackSettings?
    public let audioSettings: AudioTrackSettings?
    /// The text burned into every picture before it is encoded; nil for none.
    public let overlay: OverlaySpec?
    private let queue: CaptureQueue
    private let clock: MonotonicClock
    private let logger: Logger
    fileprivate struct Shared {
        var outputs: [any PacketOutput] = []
        var keyframeRequests: [MonotonicInstant] = []
        var levels: AudioLevels?
        var encoderDescription: String?
        var beats: UInt64 = 0
        var stopping = false
        /// Pictures the overlay was drawn into, and the time it took (benchmark figure).
        var overlayPictures = 0
        var overlayNanoseconds: Int64 = 0
    }
    private let shared = Locked(Shared())
    private let thread = ThreadGroup()

    /// An encoder nobody has wanted for this long is drained and closed (it holds tens
    /// of MiB); reopening it costs a few tens of milliseconds.
    static let idleCloseNanoseconds: Int64 = 5_000_000_000

    /// - Parameters:
    ///   - video: How to encode video (`input` is replaced by each frame's format); nil for none.
    ///   - audio: How to encode sound; nil for none.
    ///   - overflow: `.dropOldest` for live capture, `.block` for a file replayed fast.
    ///   - threadName: The encoder thread's name (the RTSP sub-stream has one of its own).
    ///   - overlay: Text drawn into the encoder's copy of each frame (`[overlay]`).
    public init(video: VideoTrackSettings?, audio: AudioTrackSettings?, overflow: CaptureQueue.OverflowPolicy,
                clock: MonotonicClock, logger: Logger, threadName: String = "kioskcam.encoder", overlay: OverlaySpec? = nil) {
        videoSettings = video
        audioSettings = audio
        self.overlay = overlay
        self.clock = clock
        self.logger = logger
        // ~0.25 s of video at 30 fps, ~1 s of 20 ms audio chunks.
        queue = CaptureQueue(videoCapacity: 8, audioCapacity: 50, overflow: overflow,
                             expectsVideo: video != nil, expectsAudio: audio != nil)
        thread.start(name: threadName) { [self] in
            var encoding = EncoderThread(branch: self)
            encoding.run()
        }
    }

    /// Adds an output; it gets packets from the next item on.
    public func add(_ output: any PacketOutput) { shared.withLock { $0.outputs.append(output) } }

    /// Asks for a keyframe on the first frame captured at or after `time` (a recording
    /// or a segment begins there).
    public func requestKeyframe(at time: MonotonicInstant) {
        shared.withLock { $0.keyframeRequests.append(time) }
    }

    /// Loop iterations so far: the watchdog pings only while this moves.
    public var heartbeat: UInt64 { shared.withLock { $0.beats } }

    /// The sound level, 10 times a second, whether or not anything records.
    public var audioLevels: AudioLevels? { shared.withLock { $0.levels } }

    /// Frames and chunks dropped because the encoder fell behind.
    public var dropped: CaptureQueue.Counters { queue.snapshot }

    /// Pictures the overlay was drawn into, and the nanoseconds that took on the encoder thread.
    public var overlayCost: (pictures: Int, nanoseconds: Int64) {
        shared.withLock { ($0.overlayPictures, $0.overlayNanoseconds) }
    }

    /// "libx264" or "h264_v4l2m2m" once a video encoder opened.
    public var videoEncoderName: String? { shared.withLock { $0.encoderDescription } }

    /// Finishes: drains the encoders into the outputs and ends the thread. Call once,
    /// after capture stopped. Blocking.
    public func shutdown(timeout: Double = 30) {
        shared.withLock { $0.stopping = true }
        queue.close()
        thread.wait(timeout: timeout)
        queue.drain()
        let cost = overlayCost
        if cost.pictures > 0, let rate = videoSettings?.input.framesPerSecond {
            let microseconds = Double(cost.nanoseconds) / Double(cost.pictures) / 1000
            logger.notice("overlay: \(cost.pictures) pictures, \(String(format: "%.1f", microseconds)) µs each (\(String(format: "%.3f", microseconds * Double(rate) / 1e4)) % of a core at \(rate) fps)")
        }
    }

    // MARK: CaptureBranch (capture threads)

    public func take(_ frame: VideoFrame) { if videoSettings != nil { queue.push(frame) } }
    public func take(_ chunk: AudioChunk) { if audioSettings != nil { queue.push(chunk) } }
    public func videoEnded(_ name: String, _ end: SourceEnd) { queue.finishVideo() }
    public func audioEnded(_ name: String, _ end: SourceEnd) { queue.finishAudio() }

    // MARK: Encoder thread

    /// What only the encoder thread touches: the encoders (FFmpeg, not `Sendable`) and
    /// their bookkeeping. It lives on that thread's stack, so it needs no lock.
    fileprivate struct EncoderThread {
        let branch: EncodeBranch
        var videoEncoder: (any VideoEncoding)?
        var audioEncoder: AACPacketEncoder?
        var levelMeter = AudioLevelMeter()
        var lastDemand: (video: MonotonicInstant?, audio: MonotonicInstant?) = (nil, nil)
        var lastSlowReport: MonotonicInstant?
        var videoEndSent = false
        var audioEndSent = false
        /// Video encoders opened so far (a format change or a failure opens another).
        var videoEncodersOpened = 0
        let overlay: OverlayStamp?

        init(branch: EncodeBranch) {
            self.branch = branch
            overlay = branch.overlay?.makeStamp()
        }

        var queue: CaptureQueue { branch.queue }
        var clock: MonotonicClock { branch.clock }
        var logger: Logger { branch.logger }
        var shared: Locked<Shared> { branch.shared }
        var videoSettings: VideoTrackSettings? { branch.videoSettings }
        var audioSettings: AudioTrackSettings? { branch.audioSettings }
    }
}

extension EncodeBranch.EncoderThread {
    mutating func run() {
        while true {
            let item = queue.pop(timeout: 0.05)
            let (current, stop) = shared.withLock { shared -> ([any PacketOutput], Bool) in
                shared.beats &+= 1
                return (shared.outputs, shared.stopping)
            }
            var demand = EncoderDemand.none
            for output in current { demand.formUnion(output.demand) }
            let now = clock.now()
            if demand.contains(.video) { lastDemand.video = now }
            if demand.contains(.audio) {
                lastDemand.audio = now
                if audioEncoder == nil, let settings = audioSettings { openAudio(settings, current) }
            }
            switch item {
            case .video(let frame)?:
                encode(frame, demand: demand, outputs: current)
                frame.buffer.doneReading()
            case .audio(let chunk)?:
                encode(chunk, demand: demand, outputs: current)
                chunk.buffer.doneReading()
            case nil: break
            }
            let took = clock.now().nanoseconds(since: now)
            if took > 1_000_000_000, lastSlowReport.map({ now.nanoseconds(since: $0) > 60_000_000_000 }) ?? true {
                lastSlowReport = now
                logger.warning("encoding one \(item.map { if case .video = $0 { "frame" } else { "sound chunk" } } ?? "round") took \(String(format: "%.1f", Double(took) / 1e9)) s; frames are dropped meanwhile")
            }
            if item == nil && stop { break }
            closeIdleEncoders(now: now, outputs: current)
            // A source that delivered its last item: its encoder hands over the rest, and
            // the outputs hear that no more will come (a file ends with its last frame).
            if !videoEndSent, videoSettings != nil, queue.isVideoDone {
                videoEndSent = true
                drainVideo(current, endOfInput: true)
            }
            if !audioEndSent, audioSettings != nil, queue.isAudioDone {
                audioEndSent = true
                drainAudio(current, endOfInput: true)
            }
        }
        let current = shared.withLock { $0.outputs }
        drainVideo(current, endOfInput: true)
        drainAudio(current, endOfInput: true)
    }

    private mutating func encode(_ frame: VideoFrame, demand: EncoderDemand, outputs: [any PacketOutput]) {
        videoEndSent = false   // a source that ended may start again (a new file, a camera back)
        guard demand.contains(.video), var settings = videoSettings else { return }
        if let encoder = videoEncoder, encoder.settings.input != frame.format {
            logger.notice("the camera now delivers \(frame.format): opening the encoder again")
            drainVideo(outputs, endOfInput: false)
        }
        if videoEncoder == nil {
            settings.input = frame.format
            do {
                let (encoder, reason) = try VideoEncoders.open(settings)
                videoEncoder = encoder
                videoEncodersOpened += 1
                let name = encoder.name
                shared.withLock { $0.encoderDescription = name }
                if videoEncodersOpened == 1 { logger.notice("video encoder: \(reason)") }
                for output in outputs { output.encoderOpened(.video, parameters: encoder.parameters) }
            } catch {
                shared.withLock { $0.keyframeRequests.removeAll() }
                for output in outputs where output.demand.contains(.video) { output.encoderFailed(.video, error) }
                return
            }
        }
        guard let encoder = videoEncoder else { return }
        let force = shared.withLock { shared -> Bool in
            guard shared.keyframeRequests.contains(where: { $0 <= frame.timestamp }) else { return false }
            shared.keyframeRequests.removeAll { $0 <= frame.timestamp }
            return true
        }
        do {
            if let overlay {
                let capturedAt = WallClock.unixSeconds(of: frame.timestamp, clock: clock)
                let shared = shared, clock = clock
                try encoder.encode(frame, forceKeyframe: force,
                                   drawing: { picture in
                                       let start = clock.now()
                                       overlay.draw(into: picture, unixSeconds: capturedAt, frame: frame.sequence)
                                       let took = clock.now().nanoseconds(since: start)
                                       shared.withLock {
                                           $0.overlayPictures += 1
                                           $0.overlayNanoseconds += took
                                       }
                                   },
                                   emit: { packet in distribute(packet, encoder.parameters, outputs) })
            } else {
                try encoder.encode(frame, forceKeyframe: force) { packet in distribute(packet, encoder.parameters, outputs) }
            }
        } catch {
            logger.error("video encoder \(encoder.name) failed: \(error)")
            videoEncoder = nil
            for output in outputs where output.demand.contains(.video) { output.encoderFailed(.video, error) }
        }
    }

    private mutating func encode(_ chunk: AudioChunk, demand: EncoderDemand, outputs: [any PacketOutput]) {
        audioEndSent = false
        let previous = levelMeter.levels
        levelMeter.process(chunk.buffer.bytes.bindMemory(to: Int16.self), channels: chunk.format.channels,
                           sampleRate: chunk.format.sampleRate, at: chunk.timestamp)
        if let current = levelMeter.levels, current != previous { shared.withLock { $0.levels = current } }
        guard demand.contains(.audio), var settings = audioSettings else { return }
        if let encoder = audioEncoder, encoder.settings.input != chunk.format {
            drainAudio(outputs, endOfInput: false)
        }
        if audioEncoder == nil {
            settings.input = chunk.format
            openAudio(settings, outputs)
        }
        guard let encoder = audioEncoder else { return }
        do {
            try encoder.encode(chunk) { packet in distribute(packet, encoder.parameters, outputs) }
        } catch {
            logger.error("audio encoder failed: \(error)")
            audioEncoder = nil
            for output in outputs where output.demand.contains(.audio) { output.encoderFailed(.audio, error) }
        }
    }

    /// Opens the AAC encoder (with the microphone's format) and tells the outputs its
    /// parameters, before any of its packets.
    private mutating func openAudio(_ settings: AudioTrackSettings, _ outputs: [any PacketOutput]) {
        do {
            let encoder = try AACPacketEncoder(settings: settings)
            audioEncoder = encoder
            for output in outputs { output.encoderOpened(.audio, parameters: encoder.parameters) }
        } catch {
            for output in outputs where output.demand.contains(.audio) { output.encoderFailed(.audio, error) }
        }
    }

    private func distribute(_ packet: EncodedPacket, _ parameters: StreamParameters, _ outputs: [any PacketOutput]) {
        let media: EncoderDemand = packet.media == .video ? .video : .audio
        for output in outputs where output.demand.contains(media) { output.receive(packet, parameters: parameters) }
    }

    /// An encoder nobody wanted for `idleCloseNanoseconds` is drained and closed.
    private mutating func closeIdleEncoders(now: MonotonicInstant, outputs: [any PacketOutput]) {
        if videoEncoder != nil, now.nanoseconds(since: lastDemand.video ?? now) >= EncodeBranch.idleCloseNanoseconds {
            drainVideo(outputs, endOfInput: false)
        }
        if audioEncoder != nil, now.nanoseconds(since: lastDemand.audio ?? now) >= EncodeBranch.idleCloseNanoseconds {
            drainAudio(outputs, endOfInput: false)
        }
    }

    /// Flushes the video encoder into the outputs and closes it.
    private mutating func drainVideo(_ outputs: [any PacketOutput], endOfInput: Bool) {
        if let encoder = videoEncoder {
            do {
                try encoder.flush { packet in distribute(packet, encoder.parameters, outputs) }
            } catch {
                logger.warning("draining the video encoder: \(error)")
            }
            videoEncoder = nil
        }
        for output in outputs { output.encoderDrained(.video, endOfInput: endOfInput) }
    }

    private mutating func drainAudio(_ outputs: [any PacketOutput], endOfInput: Bool) {
        if let encoder = audioEncoder {
            do {
                try encoder.flush { packet in distribute(packet, encoder.parameters, outputs) }
            } catch {
                logger.warning("draining the audio encoder: \(error)")
            }
            audioEncoder = nil
        }
        for output in outputs { output.encoderDrained(.audio, endOfInput: endOfInput) }
    }
}
