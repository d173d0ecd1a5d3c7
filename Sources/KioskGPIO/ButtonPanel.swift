import CGPIOD
import Glibc
import KioskCore

/// Every configured button and the status LED on one GPIO chip: the one owner of the
/// chip and its lines, for the daemon's poll loop.
///
/// The loop polls `fileDescriptors` for POLLIN with a timeout up to `nextDeadline`,
/// calls `handleReadable(fd:)` for a readable descriptor and `tick(now:)` when the
/// deadline passes; both return the presses recognised. Nothing is polled busily:
/// between edges the panel only needs waking for a debounce or long-press timer or
/// the LED's next blink. Dropping the panel releases every line and closes the chip.
/// Use it from one thread.
public final class ButtonPanel {
    public let chip: GPIOChip
    private var inputs: [(line: GPIOInputLine, button: DebouncedButton)]
    public let statusLED: StatusLED?
    /// Raw edges read so far, bounces included (diagnostics, tests).
    public private(set) var rawEdgeCount = 0

    /// Opens the chip `configuration.chip` names and requests every fitted button and the LED.
    /// - Parameters:
    ///   - configuration: The `[buttons]` section.
    ///   - now: The current time on the monotonic clock (kernel timestamps use the same).
    /// - Returns: nil when GPIO is off (`chip = "none"`), or `"auto"` finds no chip.
    /// - Throws: `GPIOError`: a missing chip, a line out of range or missing, a busy line,
    ///   permission denied, or one line configured twice.
    public static func open(_ configuration: Configuration.Buttons, now: MonotonicInstant) throws(GPIOError) -> ButtonPanel? {
        guard let chip = try GPIOChip.open(configuration.chip) else { return nil }
        return try ButtonPanel(chip: chip, configuration: configuration, now: now)
    }

    /// Requests every fitted button and the LED on an open chip.
    /// - Throws: `GPIOError` as `open(_:now:)`.
    public init(chip: GPIOChip, configuration: Configuration.Buttons, now: MonotonicInstant) throws(GPIOError) {
        self.chip = chip
        let fitted = configuration.fittedButtons
        var used: [GPIOLineSelector: String] = [:]
        for (name, button) in fitted {
            try Self.claim(button.line, by: "buttons.\(name)_line", in: &used, chip: chip.name)
        }
        try Self.claim(configuration.statusLED, by: "buttons.led_line", in: &used, chip: chip.name)

        var inputs: [(line: GPIOInputLine, button: DebouncedButton)] = []
        for (name, button) in fitted {
            guard let selector = button.line else { continue }
            let line = try chip.requestInput(selector, activeLow: configuration.activeLow, bias: configuration.bias,
                                             setting: "buttons.\(name)_line")
            let debounced = DebouncedButton(
                name: name, shortPress: button.shortPress, longPress: button.longPress,
                debounceMilliseconds: configuration.debounceMilliseconds,
                longPressMilliseconds: configuration.longPressMilliseconds,
                initiallyPressed: try line.isActive(), at: now)
            inputs.append((line, debounced))
        }
        self.inputs = inputs
        statusLED = try configuration.statusLED.map { selector throws(GPIOError) in
            StatusLED(line: try chip.requestOutput(selector, activeLow: configuration.statusLEDActiveLow,
                                                   setting: "buttons.led_line"))
        }
    }

    /// Two settings naming one line would fail as "busy, held by kioskcam"; say what is wrong instead.
    private static func claim(_ selector: GPIOLineSelector?, by setting: String,
                              in used: inout [GPIOLineSelector: String], chip: String) throws(GPIOError) {
        guard let selector else { return }
        if let other = used[selector] {
            throw GPIOError(chip: chip, line: selector.description, operation: .configure, errno: nil,
                            code: .configuration,
                            context: .init(detail: "\(other) and \(setting) both name this line; give each its own line."))
        }
        used[selector] = setting
    }

    deinit {
        // The LED goes dark with kioskcam rather than keep claiming "recording".
        try? statusLED?.line.set(false)
    }

    /// The event descriptors to poll for POLLIN, one per button.
    public var fileDescriptors: [Int32] { inputs.map(\.line.fileDescriptor) }

    /// The fitted buttons' names and lines, e.g. "record: line 17 (GPIO17)".
    public var summary: String {
        var parts = inputs.map { "\($0.button.name): \($0.line.lineDescription)" }
        if let statusLED { parts.append("LED: \(statusLED.line.lineDescription)") }
        return "\(chip.name) [\(chip.label)] " + parts.joined(separator: ", ")
    }

    /// Whether a button counts as held right now (debounced).
    public func isPressed(_ button: String) -> Bool {
        inputs.first { $0.button.name == button }?.button.isPressed ?? false
    }

    /// Reads the edges queued on `fd` and feeds them to its button.
    /// - Returns: Presses completed by these edges (a timer that ran out before an edge).
    /// - Throws: `GPIOError` with `.readEvents`.
    public func handleReadable(fd: Int32) throws(GPIOError) -> [ButtonEvent] {
        guard let index = inputs.firstIndex(where: { $0.line.fileDescriptor == fd }) else { return [] }
        return try drain(index)
    }

    /// Drains every line (so no edge queued before `now` is missed), then runs the
    /// debounce and long-press timers up to `now` and moves the LED's pattern on.
    /// - Returns: The presses recognised, oldest first.
    /// - Throws: `GPIOError` with `.readEvents` or `.setValue`.
    public func tick(now: MonotonicInstant) throws(GPIOError) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        for index in inputs.indices {
            events += try drain(index)
            events += inputs[index].button.advance(to: now)
        }
        try statusLED?.refresh(now: now)
        return events.sorted { $0.time < $1.time }
    }

    private func drain(_ index: Int) throws(GPIOError) -> [ButtonEvent] {
        let edges = try inputs[index].line.readEvents()
        rawEdgeCount += edges.count
        var events: [ButtonEvent] = []
        for edge in edges {
            events += inputs[index].button.edge(isActive: edge.isActive, at: edge.time)
        }
        // The kernel queues at most 16 edges per line and drops the rest: after a burst
        // that long the last edge seen may not be the level now, so read the level.
        if edges.count >= GPIOInputLine.kernelQueueLength, let last = edges.last {
            let level = try inputs[index].line.isActive()
            if level != last.isActive {
                events += inputs[index].button.edge(isActive: level, at: last.time)
            }
        }
        return events
    }

    /// The earliest instant `tick(now:)` has work: a debounce or long-press timer, or the
    /// LED's next blink after `now`; nil when only an edge can change anything.
    public func nextDeadline(after now: MonotonicInstant) -> MonotonicInstant? {
        let buttons = inputs.compactMap(\.button.nextDeadline)
        let led = statusLED?.nextChange(after: now)
        return (buttons + [led].compactMap { $0 }).min()
    }

    /// Turns the LED on or off directly (no pattern); no LED configured: nothing happens.
    /// - Throws: `GPIOError` with `.setValue`.
    public func setLED(_ on: Bool) throws(GPIOError) {
        try statusLED?.line.set(on)
    }

    /// Shows the recorder's state on the LED (see `StatusLEDPattern`).
    /// - Throws: `GPIOError` with `.setValue`.
    public func showStatus(_ state: RecordingState, error: Bool, now: MonotonicInstant) throws(GPIOError) {
        try statusLED?.show(state, error: error, now: now)
    }

    /// Shows a pattern on the LED (`InteractionController` decides which).
    /// - Throws: `GPIOError` with `.setValue`.
    public func showStatus(_ pattern: StatusLEDPattern, now: MonotonicInstant) throws(GPIOError) {
        try statusLED?.show(pattern, now: now)
    }

    /// Blocks until a press is recognised or `seconds` pass, sleeping in `poll` between
    /// edges and timers. For a debug command or tests; the daemon uses the descriptors.
    /// - Parameters:
    ///   - clock: The monotonic clock (the kernel's timestamps use CLOCK_MONOTONIC).
    ///   - seconds: The longest wait.
    /// - Returns: The presses recognised (empty after a time-out).
    /// - Throws: `GPIOError` with `.wait` or `.readEvents`.
    public func waitForEvents(clock: any MonotonicClock, seconds: Double) throws(GPIOError) -> [ButtonEvent] {
        let end = clock.now().advanced(byNanoseconds: Int64(seconds * 1e9))
        while true {
            let now = clock.now()
            let events = try tick(now: now)
            if !events.isEmpty || now >= end { return events }
            let wake = min(nextDeadline(after: now) ?? end, end)
            let timeout = Int32(clamping: (wake.nanoseconds(since: now) + 999_999) / 1_000_000)
            var fds = inputs.map { pollfd(fd: $0.line.fileDescriptor, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), max(0, timeout))
            if ready < 0, Glibc.errno != EINTR {
                throw GPIOError(chip: chip.name, operation: .wait, errno: Glibc.errno)
            }
        }
    }
}
