import Foundation
import KioskCore
import KioskMedia
import Logging

/// The timelapse (`[timelapse]`): a branch of the capture hub that keeps one frame every
/// `interval_seconds` (no second capture) and encodes it into the day's movie,
/// `<media_root>/timelapse/YYYYMMDD.mp4`, one fragment a frame.
///
/// ```
/// hub ─▶ schedule (capture time) ─▶ copy to 4:2:0 + overlay ─▶ own encode branch ─▶ TimelapseOutput ─▶ day's movie
/// ```
/// Each kept frame is copied out of the camera's buffer at once (the driver's buffer is
/// never held for the encoder), the overlay drawn with its capture time, and retimed: the
/// movie's encoder sees frames 1/fps apart, as the movie plays them (its rate control
/// would otherwise spend an interval's worth of bits on every frame). The frame's day
/// travels beside it, so the output starts the next day's movie on the first frame
/// captured after midnight (a keyframe asked for then).
public final class TimelapseBranch: CaptureBranch, Sendable {
    public let encoder: EncodeBranch
    public let output: TimelapseOutput
    public let intervalSeconds: Int
    public let framesPerSecond: Int
    private struct State {
        var schedule: TimelapseSchedule
        /// The copy at the camera's size, the overlay drawn in.
        var scaler: PooledScaler
        var kept: Int64 = 0
        var firstCapture: MonotonicInstant?
        var lastDay: CalendarDate?
        var dropped = 0
    }
    // Used on the camera thread only, so its lock is never contended.
    private let state: Locked<State>
    private let dayOf: @Sendable (MonotonicInstant) -> CalendarDate
    private let clock: MonotonicClock
    private let logger: Logger

    /// - Parameters:
    ///   - settings: The main encode's settings: codec, preset and orientation are kept.
    ///   - directory: Where the movies go (`<media_root>/timelapse`).
    ///   - dayOf: The local date a frame was captured on (tests pin it).
    public init(settings: VideoTrackSettings, intervalSeconds: Int, framesPerSecond: Int, directory: String,
                overlay: OverlaySpec? = nil, clock: MonotonicClock, logger: Logger,
                dayOf: (@Sendable (MonotonicInstant) -> CalendarDate)? = nil) {
        self.intervalSeconds = max(1, intervalSeconds)
        self.framesPerSecond = max(1, min(60, framesPerSecond))
        self.clock = clock
        self.logger = logger
        self.dayOf = dayOf ?? { time in
            let seconds = WallClock.unixSeconds(of: time, clock: clock)
            return CalendarDate(LocalTimestamp(Date(timeIntervalSince1970: seconds)))
        }
        // The encoder's queue holds 8; at one frame an interval, 3 is plenty.
        state = Locked(State(schedule: TimelapseSchedule(intervalSeconds: intervalSeconds),
                             scaler: PooledScaler(size: nil, framesPerSecond: self.framesPerSecond, poolCount: 3,
                                                  overlay: overlay?.makeStamp())))
        var movie = settings
        movie.input = VideoFormat(size: settings.input.size, pixelFormat: .yuv420, framesPerSecond: self.framesPerSecond)
        // No lookahead: each frame's packet comes out as it goes in, so it is on the disk
        // before the next interval (a frame held in a lookahead is a frame a power cut takes).
        movie.tune = "zerolatency"
        movie.threads = 1
        movie.keyframeInterval = self.framesPerSecond
        let encoder = EncodeBranch(video: movie, audio: nil, overflow: .dropOldest, clock: clock, logger: logger,
                                   threadName: "kioskcam.encoder.timelapse")
        self.encoder = encoder
        output = TimelapseOutput(directory: directory, framesPerSecond: self.framesPerSecond, clock: clock, logger: logger,
                                 requestKeyframe: { [weak encoder] in encoder?.requestKeyframe(at: $0) })
        encoder.add(output)
    }

    /// Frames due but not kept: every copy buffer was still with the encoder, or the
    /// camera's layout cannot be converted.
    public var droppedFrames: Int { state.withLock { $0.dropped } }

    public func take(_ frame: VideoFrame) {
        let framesPerSecond = framesPerSecond
        let retimed = state.withLock { state -> (VideoFrame, dayChanged: Bool)? in
            guard state.schedule.takes(frame.timestamp) else { return nil }
            guard case .scaled(let copy) = state.scaler.scale(frame, capturedAt: WallClock.unixSeconds(of: frame.timestamp, clock: clock),
                                                               logger: logger, label: "timelapse") else {
                state.dropped += 1
                return nil
            }
            let first = state.firstCapture ?? frame.timestamp
            state.firstCapture = first
            let movieTime = first.advanced(byNanoseconds: state.kept * 1_000_000_000 / Int64(framesPerSecond))
            state.kept += 1
            let day = dayOf(frame.timestamp)
            let changed = state.lastDay != nil && state.lastDay != day
            state.lastDay = day
            output.expect(day, at: movieTime)
            return (VideoFrame(buffer: copy.buffer, format: copy.format, timestamp: movieTime, sequence: frame.sequence), changed)
        }
        guard let (movieFrame, dayChanged) = retimed else { return }
        frame.buffer.doneReading()
        if dayChanged { encoder.requestKeyframe(at: movieFrame.timestamp) }
        encoder.take(movieFrame)
    }

    /// Drains the encoder and closes the movie (after capture stopped).
    public func shutdown(timeout: Double = 30) {
        encoder.shutdown(timeout: timeout)
        output.close()
    }
}

/// Writes the timelapse's packets into the day's movie (`TimelapseFile`), on the
/// timelapse's encoder thread. A failure (a full disk) closes the movie and is logged;
/// the next keyframe, asked for a little later, opens it again where its last whole
/// frame ends.
public final class TimelapseOutput: PacketOutput, Sendable {
    private let directory: String
    private let framesPerSecond: Int
    private let clock: MonotonicClock
    private let logger: Logger
    private let requestKeyframe: @Sendable (MonotonicInstant) -> Void
    /// The day of each frame on its way through the encoder, by its movie time.
    private let days = Locked<[(time: MonotonicInstant, day: CalendarDate)]>([])
    private struct Writing {
        var file: TimelapseFile?
        var day: CalendarDate?
        var lastFailure: (time: MonotonicInstant, message: String)?
        var retryAfter: MonotonicInstant?
        var failures = 0
        var written = 0
    }
    // The encoder thread's alone (its lock is never contended); status reads `published`,
    // so a slow write or sync never holds up `kioskcam status`.
    private let writing = Locked(Writing())
    private let published = Locked(Status(path: nil, frames: 0, failure: nil, written: 0))

    /// A failed movie is opened again no sooner than this.
    static let retryNanoseconds: Int64 = 10_000_000_000

    init(directory: String, framesPerSecond: Int, clock: MonotonicClock, logger: Logger,
         requestKeyframe: @escaping @Sendable (MonotonicInstant) -> Void) {
        self.directory = directory
        self.framesPerSecond = framesPerSecond
        self.clock = clock
        self.logger = logger
        self.requestKeyframe = requestKeyframe
    }

    /// What `kioskcam status` shows.
    public struct Status: Sendable, Equatable {
        /// The movie being written, nil before the first frame (or after a failure).
        public var path: String?
        /// Frames in that movie (earlier runs' included).
        public var frames: UInt64
        /// The last failure, if the movie is not being written.
        public var failure: String?
        /// Frames this process wrote, into any movie.
        public var written: Int
    }

    public var status: Status { published.withLock { $0 } }

    private func publish(_ w: Writing) {
        let status = Status(path: w.file?.path, frames: w.file?.frames ?? 0, failure: w.file == nil ? w.lastFailure?.message : nil,
                            written: w.written)
        published.withLock { $0 = status }
    }

    /// Notes the day of the frame that will carry `time` (the camera thread, before encoding).
    func expect(_ day: CalendarDate, at time: MonotonicInstant) {
        days.withLock { days in
            if days.count >= 32 { days.removeFirst() }   // frames the encoder dropped
            days.append((time, day))
        }
    }

    private func day(of time: MonotonicInstant) -> CalendarDate? {
        days.withLock { days in
            var found: CalendarDate?
            while let first = days.first, first.time <= time {
                found = first.day
                days.removeFirst()
            }
            return found
        }
    }

    // MARK: PacketOutput (the timelapse encoder's thread)

    public var demand: EncoderDemand { .video }
    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {}

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        guard packet.media == .video else { return }
        let now = clock.now()
        let frameDay = day(of: packet.time)
        writing.withLock { w in
            defer { publish(w) }
            let day = frameDay ?? w.day ?? CalendarDate(daysSince1970: 0)
            w.day = day
            if let file = w.file, file.day != day || !file.parameters.sameSetup(as: parameters) {
                file.close()
                w.file = nil
            }
            if w.file == nil {
                let mayOpen = w.retryAfter.map { now.nanoseconds(since: $0) >= 0 } ?? true
                guard mayOpen, packet.isKeyframe else {
                    if mayOpen { requestKeyframe(packet.time) }
                    return
                }
                do throws(RecorderError) {
                    let (file, notes) = try TimelapseFile.open(directory: directory, day: day, parameters: parameters,
                                                               framesPerSecond: framesPerSecond, now: now)
                    for note in notes { logger.notice("timelapse: \(note)") }
                    logger.notice("timelapse: writing \(file.path)")
                    w.file = file
                    w.retryAfter = nil
                } catch {
                    fail(&w, error, now: now)
                    return
                }
            }
            do throws(RecorderError) {
                try w.file?.append(packet, now: now)
                w.written += 1
            } catch {
                w.file?.close()
                w.file = nil
                fail(&w, error, now: now)
            }
        }
    }

    private func fail(_ w: inout Writing, _ error: RecorderError, now: MonotonicInstant) {
        w.failures += 1
        // Logged when it changes or once a minute, not for every frame.
        if w.lastFailure?.message != error.message || w.lastFailure.map({ now.nanoseconds(since: $0.time) >= 60_000_000_000 }) ?? true {
            logger.error("timelapse: \(error.message)")
            w.lastFailure = (now, error.message)
        }
        w.retryAfter = now.advanced(byNanoseconds: Self.retryNanoseconds)
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}

    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {
        logger.error("timelapse: the encoder failed: \(error)")
    }

    /// Syncs and closes the movie (the encoder drained).
    func close() {
        writing.withLock { w in
            w.file?.close()
            w.file = nil
            publish(w)
        }
    }
}
