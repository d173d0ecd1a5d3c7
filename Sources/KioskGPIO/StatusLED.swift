import KioskCore

/// The status LED: an output line showing `StatusLEDPattern` for the recorder's state.
/// The line is written only when the LED changes; `nextChange` says when to come back.
public final class StatusLED {
    public let line: GPIOOutputLine
    private var controller = StatusLEDController()

    /// - Parameter line: The LED's output line (it starts off).
    public init(line: GPIOOutputLine) {
        self.line = line
    }

    public var pattern: StatusLEDPattern { controller.pattern }
    public var isLit: Bool { line.isOn }

    /// Shows a state: on while recording, off when idle, slow blink while starting or
    /// stopping, three short flashes every 2 s while `error`.
    /// - Throws: `GPIOError` with `.setValue`.
    public func show(_ state: RecordingState, error: Bool, now: MonotonicInstant) throws(GPIOError) {
        try show(StatusLEDPattern(state: state, error: error), now: now)
    }

    /// Shows a pattern; a different one starts from its beginning.
    /// - Throws: `GPIOError` with `.setValue`.
    public func show(_ pattern: StatusLEDPattern, now: MonotonicInstant) throws(GPIOError) {
        try apply(controller.update(pattern: pattern, now: now))
    }

    /// Moves a blinking pattern on to `now`.
    /// - Throws: `GPIOError` with `.setValue`.
    public func refresh(now: MonotonicInstant) throws(GPIOError) {
        try apply(controller.isOn(at: now))
    }

    /// When the LED next changes after `time`, or nil while it is steady.
    public func nextChange(after time: MonotonicInstant) -> MonotonicInstant? {
        controller.nextChange(after: time)
    }

    private func apply(_ on: Bool) throws(GPIOError) {
        if on != line.isOn { try line.set(on) }
    }
}
