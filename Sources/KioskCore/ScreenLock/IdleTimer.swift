/// Counts time since the last touch (every press and release resets it).
///
/// Deadline-based: the UI loop sleeps until `nextDeadline` instead of polling.
public struct IdleTimer: Sendable, Equatable {
    /// How long without a touch counts as idle, in nanoseconds.
    public let timeoutNanoseconds: Int64
    /// The last touch (or the last restart).
    public private(set) var lastActivity: MonotonicInstant

    /// - Parameters:
    ///   - timeoutSeconds: Idle time before `expire` reports true.
    ///   - start: When the count starts.
    public init(timeoutSeconds: Double, start: MonotonicInstant) {
        timeoutNanoseconds = Int64((max(0, timeoutSeconds) * 1e9).rounded())
        lastActivity = start
    }

    /// When the idle time runs out if nothing else happens.
    public var nextDeadline: MonotonicInstant { lastActivity.advanced(byNanoseconds: timeoutNanoseconds) }

    /// A touch: the count starts again from `now`.
    public mutating func reset(at now: MonotonicInstant) {
        lastActivity = now
    }

    /// Whether the idle time has run out at `now`.
    ///
    /// While `busy` (recording, taking a still, playing media) the screen must not
    /// lock; the timer simply starts again, so the full idle time follows the end of
    /// the busy period at the earliest.
    /// - Returns: true once, when the idle time ran out while not busy.
    public mutating func expire(at now: MonotonicInstant, busy: Bool) -> Bool {
        guard now >= nextDeadline else { return false }
        if busy {
            lastActivity = now
            return false
        }
        return true
    }
}
