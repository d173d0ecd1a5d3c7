/// Keeps every frame of a camera that runs faster than the configured rate and cannot be
/// told to slow down (a libcamera pipeline without FrameDurationLimits, such as vimc,
/// runs at its own pace): frames are let through at most once per frame interval, by
/// their timestamps, so the encoder does the configured rate's work and no more.
///
/// A frame is admitted when it is at most a quarter interval early for its slot; the
/// next slot is one interval later, or — after a gap longer than an interval — one
/// interval after this frame (no burst to catch up).
public struct FramePacer: Sendable {
    public let intervalNanoseconds: Int64
    private var nextDue: MonotonicInstant?

    /// - Parameter framesPerSecond: The configured rate (1 or more; less counts as 1).
    public init(framesPerSecond: Int) {
        intervalNanoseconds = 1_000_000_000 / Int64(max(framesPerSecond, 1))
    }

    /// Whether the frame stamped `timestamp` is kept.
    public mutating func admits(_ timestamp: MonotonicInstant) -> Bool {
        let slack = intervalNanoseconds / 4
        guard let due = nextDue else {
            nextDue = timestamp.advanced(byNanoseconds: intervalNanoseconds)
            return true
        }
        let offset = timestamp.nanoseconds(since: due)
        // Far before the slot (more than two intervals back): the clock restarted, so
        // start again rather than drop frames until it catches up.
        let restarted = offset < -intervalNanoseconds * 2
        if offset < -slack, !restarted { return false }
        // Late by more than an interval (a gap), or restarted: the next slot follows this
        // frame, so there is no burst to catch up.
        nextDue = offset > intervalNanoseconds || restarted
            ? timestamp.advanced(byNanoseconds: intervalNanoseconds)
            : due.advanced(byNanoseconds: intervalNanoseconds)
        return true
    }
}
