/// The scrubber under the player: maps a finger's x to a time and a time to the play
/// head's x, both clamped, so a drag past either end means the start or the end.
public struct PlaybackScrubber: Sendable, Equatable {
    /// The bar's rectangle on the screen (the touch area is the whole rectangle).
    public let track: ScreenRect
    /// The recording's length in seconds (0 when unknown: the bar does nothing).
    public let duration: Double

    public init(track: ScreenRect, duration: Double) {
        self.track = track
        self.duration = duration.isFinite && duration > 0 ? duration : 0
    }

    /// The time under x (clamped to 0…duration).
    public func seconds(atX x: Int) -> Double {
        guard track.width > 1, duration > 0 else { return 0 }
        let fraction = Double(min(max(x - track.x, 0), track.width - 1)) / Double(track.width - 1)
        return fraction * duration
    }

    /// The play head's x for `seconds` (clamped into the track).
    public func x(forSeconds seconds: Double) -> Int {
        guard track.width > 1, duration > 0, seconds.isFinite else { return track.x }
        let fraction = min(max(seconds / duration, 0), 1)
        return track.x + Int((fraction * Double(track.width - 1)).rounded())
    }

    /// The time a ±10 s button goes to from `seconds` (clamped to 0…duration).
    public func skip(from seconds: Double, by delta: Double) -> Double {
        let target = (seconds.isFinite ? seconds : 0) + delta
        return duration > 0 ? min(max(0, target), duration) : max(0, target)
    }
}
