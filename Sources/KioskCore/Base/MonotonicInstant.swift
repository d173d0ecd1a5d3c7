/// A point on the system's monotonic clock (CLOCK_MONOTONIC), in nanoseconds.
///
/// Every capture source stamps its data with this clock — V4L2 and ALSA can both
/// report it — so audio and video timestamps share one time line.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public func advanced(byNanoseconds delta: Int64) -> Self { Self(nanoseconds: nanoseconds &+ delta) }

    /// Nanoseconds from `earlier` to `self` (negative if `earlier` is later).
    public func nanoseconds(since earlier: Self) -> Int64 { nanoseconds &- earlier.nanoseconds }

    public func seconds(since earlier: Self) -> Double { Double(nanoseconds(since: earlier)) / 1e9 }

    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

/// A source of monotonic time; injected so that tests can drive time by hand.
public protocol MonotonicClock: Sendable {
    func now() -> MonotonicInstant
}

/// A clock the test drives by hand.
public final class ManualClock: MonotonicClock, Sendable {
    private let current: Locked<MonotonicInstant>

    public init(_ start: MonotonicInstant = MonotonicInstant(nanoseconds: 0)) { current = Locked(start) }

    public func now() -> MonotonicInstant { current.withLock { $0 } }

    public func advance(byNanoseconds delta: Int64) { current.withLock { $0 = $0.advanced(byNanoseconds: delta) } }

    public func advance(bySeconds seconds: Double) { advance(byNanoseconds: Int64(seconds * 1e9)) }
}
