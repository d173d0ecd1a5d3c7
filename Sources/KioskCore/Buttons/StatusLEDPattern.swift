/// How the status LED shows the recorder's state: on while recording, off when idle,
/// a slow blink while a recording starts or stops, and three short flashes every two
/// seconds on error — distinct from everything else even at a glance.
public enum StatusLEDPattern: Sendable, Equatable, CaseIterable, CustomStringConvertible {
    case off
    case on
    /// 0.5 s on, 0.5 s off.
    case slowBlink
    /// Three 0.1 s flashes 0.25 s apart, then dark until the 2 s period ends.
    case errorFlashes

    /// The pattern for a state. An error wins over every state, so it is never missed.
    /// - Parameters:
    ///   - state: The recorder's state.
    ///   - error: Whether an error is being shown (the last recording failed, a device is lost …).
    public init(state: RecordingState, error: Bool) {
        if error {
            self = .errorFlashes
            return
        }
        switch state {
        case .idle: self = .off
        case .recording: self = .on
        case .starting, .stopping: self = .slowBlink
        }
    }

    /// (milliseconds, on) steps of one period; a steady pattern has one step.
    private var steps: [(milliseconds: Int64, on: Bool)] {
        switch self {
        case .off: [(1000, false)]
        case .on: [(1000, true)]
        case .slowBlink: [(500, true), (500, false)]
        case .errorFlashes: [(100, true), (150, false), (100, true), (150, false), (100, true), (1400, false)]
        }
    }

    /// Whether the LED is lit `elapsedNanoseconds` after the pattern began (each pattern
    /// begins lit, except `off`, so a change of state shows at once).
    public func isOn(elapsedNanoseconds: Int64) -> Bool {
        step(at: elapsedNanoseconds).on
    }

    /// Nanoseconds from the pattern's start to its next change after `elapsedNanoseconds`,
    /// or nil for a steady pattern.
    public func nextChange(afterElapsedNanoseconds elapsed: Int64) -> Int64? {
        guard self == .slowBlink || self == .errorFlashes else { return nil }
        return step(at: elapsed).end
    }

    private func step(at elapsed: Int64) -> (on: Bool, end: Int64) {
        let steps = steps
        let period = steps.reduce(0) { $0 + $1.milliseconds } * 1_000_000
        let elapsed = max(0, elapsed)
        let periodStart = elapsed - elapsed % period
        var end = periodStart
        for step in steps {
            end += step.milliseconds * 1_000_000
            if elapsed < end { return (step.on, end) }
        }
        return (steps[0].on, end)  // not reached: the steps fill the period
    }

    public var description: String {
        switch self {
        case .off: "off"
        case .on: "on"
        case .slowBlink: "slow blink"
        case .errorFlashes: "error flashes"
        }
    }
}

/// Tracks which pattern the status LED shows and since when, so the owner of the LED
/// line sets it only when it changes and sleeps until `nextChange` in between.
public struct StatusLEDController: Sendable, Equatable {
    public private(set) var pattern: StatusLEDPattern = .off
    private var patternStart = MonotonicInstant(nanoseconds: 0)

    public init() {}

    /// Shows the state; a different pattern starts from its beginning.
    /// - Returns: Whether the LED should be lit at `now`.
    public mutating func update(state: RecordingState, error: Bool, now: MonotonicInstant) -> Bool {
        update(pattern: StatusLEDPattern(state: state, error: error), now: now)
    }

    /// Shows a pattern; a different pattern starts from its beginning.
    /// - Returns: Whether the LED should be lit at `now`.
    public mutating func update(pattern next: StatusLEDPattern, now: MonotonicInstant) -> Bool {
        if next != pattern {
            pattern = next
            patternStart = now
        }
        return isOn(at: now)
    }

    /// Whether the LED should be lit at `time`.
    public func isOn(at time: MonotonicInstant) -> Bool {
        pattern.isOn(elapsedNanoseconds: time.nanoseconds(since: patternStart))
    }

    /// When the LED next changes after `time`, or nil while it is steady.
    public func nextChange(after time: MonotonicInstant) -> MonotonicInstant? {
        pattern.nextChange(afterElapsedNanoseconds: time.nanoseconds(since: patternStart))
            .map { patternStart.advanced(byNanoseconds: $0) }
    }
}
