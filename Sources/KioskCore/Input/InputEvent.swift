/// What a finger did, already decoded from the kernel's event stream and mapped to the
/// logical screen. Press and release reset the idle timer; moves do not.
public enum TouchPhase: String, Sendable, Equatable {
    case press, move, release
}

/// One touch event in logical screen pixels.
public struct TouchEvent: Sendable, Equatable, CustomStringConvertible {
    public var phase: TouchPhase
    public var point: ScreenPoint
    /// The contact's slot (multi-touch) or 0 for single-touch devices.
    public var slot: Int
    /// The kernel's event time, on the monotonic clock.
    public var time: MonotonicInstant
    /// The device node the event came from, e.g. `/dev/input/event2`.
    public var device: String

    public init(phase: TouchPhase, point: ScreenPoint, slot: Int = 0, time: MonotonicInstant, device: String = "") {
        self.phase = phase
        self.point = point
        self.slot = slot
        self.time = time
        self.device = device
    }

    public var description: String { "touch \(phase.rawValue) \(point.x) \(point.y) slot \(slot)" }
}
