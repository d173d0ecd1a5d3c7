/// A camera control's range as the device reports it (V4L2 QUERYCTRL): values are
/// `minimum + k × step` up to `maximum`.
public struct ControlRange: Hashable, Sendable, Codable {
    public var minimum: Int
    public var maximum: Int
    public var step: Int
    public var defaultValue: Int

    public init(minimum: Int, maximum: Int, step: Int = 1, defaultValue: Int? = nil) {
        self.minimum = min(minimum, maximum)
        self.maximum = max(minimum, maximum)
        self.step = max(step, 1)
        self.defaultValue = defaultValue ?? minimum
    }

    /// `value` clamped into the range and snapped to the nearest step (upwards on a tie),
    /// never past `maximum` even when the range is not a whole number of steps.
    public func clamp(_ value: Int) -> Int {
        let bounded = Swift.min(Swift.max(value, minimum), maximum)
        let offset = bounded - minimum
        var steps = offset / step
        if (offset % step) * 2 >= step { steps += 1 }
        var snapped = minimum + steps * step
        if snapped > maximum { snapped -= step }
        return Swift.max(snapped, minimum)
    }

    /// Whether `value` had to change to fit.
    public func contains(_ value: Int) -> Bool { clamp(value) == value }
}

/// The values a control passes through on its way to a new setting, so a zoom glides
/// instead of jumping ("changed smoothly"). A plain linear ramp, one value
/// every `1/stepsPerSecond` seconds over `duration`, each snapped to the device's step,
/// ending exactly on the target; a tick whose snapped value repeats the previous one is
/// left out (a coarse control then moves less often, at the right moments).
public struct ControlRamp: Hashable, Sendable {
    /// One value and when to apply it.
    public struct Step: Hashable, Sendable {
        /// Seconds after the ramp began.
        public var offset: Double
        public var value: Int
    }

    public let start: Int
    public let target: Int
    /// Seconds from the start to the last value.
    public let duration: Double
    public let stepsPerSecond: Double
    /// In time order, the first one tick after the start, the last one `target` at
    /// `duration`; empty when the control is already at the target.
    public let steps: [Step]

    /// - Parameters:
    ///   - start: The control's current value.
    ///   - target: The wanted value (clamped and snapped to `range`).
    ///   - range: The device's range; the ramp never leaves it.
    ///   - duration: Seconds the whole change takes (0: one jump).
    ///   - stepsPerSecond: How often a new value may be applied (at least 1).
    public init(from start: Int, to target: Int, range: ControlRange, duration: Double = 0.5, stepsPerSecond: Double = 30) {
        let target = range.clamp(target)
        let start = Swift.min(Swift.max(start, range.minimum), range.maximum)
        self.start = start
        self.target = target
        self.duration = Swift.max(duration, 0)
        self.stepsPerSecond = Swift.max(stepsPerSecond, 1)
        guard start != target else {
            steps = []
            return
        }
        let count = Swift.max(1, Int((self.duration * self.stepsPerSecond).rounded()))
        var steps: [Step] = []
        steps.reserveCapacity(count)
        var previous = start
        for index in 1...count {
            let exact = Double(start) + Double(target - start) * Double(index) / Double(count)
            let value = index == count ? target : range.clamp(Int(exact.rounded()))
            if value != previous {
                steps.append(Step(offset: self.duration * Double(index) / Double(count), value: value))
            }
            previous = value
        }
        self.steps = steps
    }

    /// The values in order.
    public var values: [Int] { steps.map(\.value) }

    /// Seconds between two ticks.
    public var interval: Double { 1 / stepsPerSecond }

    /// The value that should be in effect `elapsed` seconds after the ramp began.
    public func value(at elapsed: Double) -> Int {
        var current = start
        for step in steps {
            guard step.offset <= elapsed + 1e-9 else { break }
            current = step.value
        }
        return current
    }
}
