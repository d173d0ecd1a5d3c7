/// One recognised press of a debounced button.
public struct ButtonPress: Sendable, Equatable {
    public var kind: ButtonPressKind
    /// When it was recognised: the settled release for a short press, the threshold for a long one.
    public var time: MonotonicInstant

    public init(kind: ButtonPressKind, time: MonotonicInstant) {
        self.kind = kind
        self.time = time
    }
}

/// Debounces one input line's raw edges and classifies presses as short or long.
///
/// Fed with every edge the kernel reports (the line's level right after it, and the
/// kernel's timestamp), it emits exactly one `ButtonPress` per physical press:
/// a level counts only once it has held still for the debounce time, so contact
/// bounce — several flips within a few milliseconds — is one change. A short press is
/// reported on release; a long press when the threshold passes while the button is
/// still held (the release after it reports nothing). Timers are not polled: the
/// owner sleeps until `nextDeadline` and then calls `advance(to:)`.
///
/// An edge whose level equals the previous one means the line flipped and flipped
/// back before the kernel read it (a glitch); it restarts the debounce timer.
public struct ButtonPressDetector: Sendable, Equatable {
    /// A level must hold this long to count.
    public let debounceNanoseconds: Int64
    /// Held this long is a long press; nil: every press is short, reported on release.
    public let longPressNanoseconds: Int64?

    /// The debounced level: true while the button counts as held.
    public private(set) var isPressed: Bool
    /// The level of the latest raw edge.
    private var rawActive: Bool
    /// The latest raw edge while the level has not yet settled; nil once settled.
    private var lastEdge: MonotonicInstant?
    /// The first edge of the current burst of bounces.
    private var burstStart: MonotonicInstant?
    /// When the current press began (the first edge of its burst).
    private var pressStart: MonotonicInstant?
    /// The current press has been reported already (long press, or held since start-up).
    private var reported = false
    /// Time never runs backwards here, even if edges are handed in late.
    private var cursor: MonotonicInstant

    /// - Parameters:
    ///   - debounceMilliseconds: How long a level must hold to count (0 counts every edge at once).
    ///   - longPressMilliseconds: Held this long is a long press; nil disables long presses.
    ///   - initiallyPressed: The line's level when watching began. A button already held
    ///     then (stuck, or held through start-up) reports nothing until it is released.
    ///   - start: When watching began.
    public init(debounceMilliseconds: Int, longPressMilliseconds: Int?, initiallyPressed: Bool = false,
                at start: MonotonicInstant = MonotonicInstant(nanoseconds: 0)) {
        debounceNanoseconds = Int64(max(0, debounceMilliseconds)) * 1_000_000
        longPressNanoseconds = longPressMilliseconds.map { Int64(max(1, $0)) * 1_000_000 }
        isPressed = initiallyPressed
        rawActive = initiallyPressed
        pressStart = initiallyPressed ? start : nil
        reported = initiallyPressed
        cursor = start
    }

    /// The next instant at which `advance(to:)` may have something to do, or nil when
    /// nothing can happen before the next edge.
    public var nextDeadline: MonotonicInstant? {
        let settle = lastEdge.map { $0.advanced(byNanoseconds: debounceNanoseconds) }
        return [settle, longDeadline].compactMap { $0 }.min()
    }

    private var longDeadline: MonotonicInstant? {
        guard let longPressNanoseconds, isPressed, rawActive, !reported, let pressStart else { return nil }
        return max(pressStart.advanced(byNanoseconds: longPressNanoseconds), cursor)
    }

    /// Handles one raw edge.
    /// - Parameters:
    ///   - isActive: The line's (active-low corrected) level right after the edge.
    ///   - time: The kernel's timestamp of the edge.
    /// - Returns: Presses completed by timers that ran out before this edge.
    public mutating func edge(isActive: Bool, at time: MonotonicInstant) -> [ButtonPress] {
        let time = max(time, cursor)
        let presses = advance(to: time)
        if lastEdge == nil { burstStart = time }
        rawActive = isActive
        lastEdge = time
        return presses
    }

    /// Runs the debounce and long-press timers up to `time`.
    /// - Returns: The presses recognised on the way, oldest first.
    public mutating func advance(to time: MonotonicInstant) -> [ButtonPress] {
        var presses: [ButtonPress] = []
        while let deadline = nextDeadline, deadline <= time {
            cursor = max(cursor, deadline)
            if let longDeadline, longDeadline <= deadline {
                reported = true
                presses.append(ButtonPress(kind: .long, time: cursor))
            } else {
                settle(&presses)
            }
        }
        cursor = max(cursor, time)
        return presses
    }

    /// The raw level held still for the debounce time: it is the level now.
    private mutating func settle(_ presses: inout [ButtonPress]) {
        let start = burstStart ?? cursor
        lastEdge = nil
        burstStart = nil
        guard rawActive != isPressed else { return }
        isPressed = rawActive
        if isPressed {
            pressStart = start
            reported = false
        } else {
            if !reported { presses.append(ButtonPress(kind: .short, time: cursor)) }
            pressStart = nil
            reported = false
        }
    }
}

/// One configured button: its debounced line and the actions of its short and long press.
public struct DebouncedButton: Sendable, Equatable {
    /// The button's name in the configuration and in events ("record", "snapshot", "extra").
    public let name: String
    public let shortPressAction: ButtonAction
    public let longPressAction: ButtonAction
    public private(set) var detector: ButtonPressDetector

    /// - Parameters:
    ///   - name: The button's name, carried by its events.
    ///   - shortPress: What a short press does.
    ///   - longPress: What a long press does; `.none` turns long presses off, so every
    ///     press — however long — is a short one.
    ///   - debounceMilliseconds: How long a level must hold to count.
    ///   - longPressMilliseconds: The long-press threshold.
    ///   - initiallyPressed: The line's level when watching began.
    ///   - start: When watching began.
    public init(name: String, shortPress: ButtonAction, longPress: ButtonAction,
                debounceMilliseconds: Int, longPressMilliseconds: Int,
                initiallyPressed: Bool = false, at start: MonotonicInstant = MonotonicInstant(nanoseconds: 0)) {
        self.name = name
        shortPressAction = shortPress
        longPressAction = longPress
        detector = ButtonPressDetector(
            debounceMilliseconds: debounceMilliseconds,
            longPressMilliseconds: longPress == .none ? nil : longPressMilliseconds,
            initiallyPressed: initiallyPressed, at: start)
    }

    public var nextDeadline: MonotonicInstant? { detector.nextDeadline }
    public var isPressed: Bool { detector.isPressed }

    /// Handles one raw edge; see `ButtonPressDetector.edge(isActive:at:)`.
    public mutating func edge(isActive: Bool, at time: MonotonicInstant) -> [ButtonEvent] {
        events(detector.edge(isActive: isActive, at: time))
    }

    /// Runs the timers up to `time`; see `ButtonPressDetector.advance(to:)`.
    public mutating func advance(to time: MonotonicInstant) -> [ButtonEvent] {
        events(detector.advance(to: time))
    }

    private func events(_ presses: [ButtonPress]) -> [ButtonEvent] {
        presses.map { press in
            ButtonEvent(button: name, action: press.kind == .long ? longPressAction : shortPressAction,
                        kind: press.kind, time: press.time)
        }
    }
}
