/// What to do with a decoded video frame, given where the sound is: the audio clock is
/// the master, so the picture follows it (frames dropped or held), never the other way.
public enum FrameDecision: Sendable, Equatable {
    /// On time: show it now.
    case show
    /// Too late to be worth showing (or before a seek's target): throw it away and take
    /// the next one, so the picture catches up with the sound.
    case drop
    /// Early: wait this many seconds (at most `AVSyncPolicy.longestHold`), then ask again.
    case hold(seconds: Double)
}

/// The A/V sync rule of the player, as a pure function of a frame's time and the clock.
public struct AVSyncPolicy: Sendable, Equatable {
    /// A frame this much behind the clock or more is dropped (a frame shown this late
    /// would put the lips visibly after the voice).
    public var lateSeconds: Double
    /// A frame up to this much ahead is shown now: waiting less than this is not worth a sleep.
    public var earlySeconds: Double
    /// The longest single wait: the decode thread checks pause, seek and stop between waits.
    public static let longestHold = 0.05

    /// - Parameter frameSeconds: One frame's duration (1 / fps); the late limit is 40 ms
    ///   (issue 14's bound between picture and sound), or one frame where a frame lasts
    ///   longer; the early tolerance half a frame but at most 10 ms.
    public init(frameSeconds: Double) {
        let frame = frameSeconds.isFinite && frameSeconds > 0 ? min(frameSeconds, 1) : 1.0 / 30
        lateSeconds = max(0.04, frame)
        earlySeconds = min(0.01, frame / 2)
    }

    /// Decides one frame.
    /// - Parameters:
    ///   - frameTime: The frame's presentation time, seconds from the file's start.
    ///   - clock: Where playback is now (the sound being heard), seconds from the file's start.
    ///   - seekTarget: After a seek, frames before this are decoded only to reach it.
    public func decide(frameTime: Double, clock: Double, seekTarget: Double? = nil) -> FrameDecision {
        guard frameTime.isFinite, clock.isFinite else { return .drop }
        // The last frame before the target is kept so a seek to a still scene shows something;
        // a frame earlier than that by a whole late limit is only decoded through.
        if let seekTarget, frameTime < seekTarget - lateSeconds { return .drop }
        let ahead = frameTime - clock
        if ahead > earlySeconds { return .hold(seconds: min(ahead, Self.longestHold)) }
        if -ahead >= lateSeconds { return .drop }
        return .show
    }
}

/// Where playback is, in seconds from the file's start: from the sound card's count of
/// frames played when there is sound (the master clock), else from the monotonic clock.
public struct PlaybackClock: Sendable, Equatable {
    /// The file time playback (re)started from: 0, or the last seek's target.
    public private(set) var origin: Double = 0
    /// Monotonic time of the (re)start, for recordings without sound.
    private var startedAt: MonotonicInstant?
    /// Wall time played before the current run (paused time is not counted).
    private var playedBeforePause: Double = 0
    public private(set) var isPaused = false

    public init() {}

    /// Playback (re)starts at `seconds` at `now`: after opening, after a seek.
    public mutating func restart(at seconds: Double, now: MonotonicInstant) {
        origin = seconds.isFinite ? max(0, seconds) : 0
        playedBeforePause = 0
        startedAt = isPaused ? nil : now
    }

    public mutating func pause(now: MonotonicInstant) {
        guard !isPaused else { return }
        if let startedAt { playedBeforePause += max(0, now.seconds(since: startedAt)) }
        startedAt = nil
        isPaused = true
    }

    public mutating func resume(now: MonotonicInstant) {
        guard isPaused else { return }
        isPaused = false
        startedAt = now
    }

    /// The time without sound: the monotonic clock since the (re)start, pauses left out.
    public func wallTime(now: MonotonicInstant) -> Double {
        let running = startedAt.map { max(0, now.seconds(since: $0)) } ?? 0
        return origin + playedBeforePause + running
    }

    /// The time with sound: the frames the card has played since the (re)start.
    /// - Parameters:
    ///   - playedFrames: Frames played since the (re)start (what the ALSA player reports).
    ///   - sampleRate: The stream's rate; a rate of 0 or less falls back to `origin`.
    public func audioTime(playedFrames: Int, sampleRate: Int) -> Double {
        guard sampleRate > 0, playedFrames > 0 else { return origin }
        return origin + Double(playedFrames) / Double(sampleRate)
    }
}
