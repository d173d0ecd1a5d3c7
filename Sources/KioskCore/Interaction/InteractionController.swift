/// Every decision of the UI loop, as a pure state machine: what a button press or a
/// touch does, the recording state as the buttons and the LED see it, how long an error
/// shows, which page is drawn and when, the preview's cadence, when to try missing
/// devices again, and when the loop must wake up next.
///
/// Inputs are values (`InteractionInput`) with the monotonic time they are handled at;
/// outputs are effects (`InteractionEffect`) for the loop to carry out, in order, and
/// `nextDeadline(now:devices:)` for its `poll`. Nothing here reads a clock, a device or
/// another thread: the loop around it (KioskAppliance's `InteractionLoop`) polls the
/// descriptors, decodes events with the device wrappers, feeds them in and performs
/// what comes out.
///
/// The screen's own logic (idle timer, PIN entry, blanking, its buttons) is
/// `ScreenController`, held here; without a screen there is none, and touches do nothing.
public struct InteractionController: Sendable {
    /// How long the LED shows an error after `.recorderFailed`.
    public static let errorShownNanoseconds: Int64 = 10_000_000_000
    /// How long after a GPIO failure the lines are tried again.
    public static let buttonRetryNanoseconds: Int64 = 30_000_000_000
    /// How often touch devices are looked for while inotify cannot watch for them.
    public static let touchRescanNanoseconds: Int64 = 5_000_000_000
    /// The loop wakes at least this often, so its heartbeat moves for the watchdog.
    public static let longestSleepNanoseconds: Int64 = 1_000_000_000

    /// The screen's logic; nil without a screen.
    public private(set) var screen: ScreenController?
    /// The recorder's state as the LED shows it: the last one reported.
    public private(set) var recordingState: RecordingState = .idle
    /// A start or stop sent to the recorder and not yet answered: buttons count it as
    /// starting/stopping, so two quick presses never make a double toggle.
    public private(set) var commandInFlight: RecordingState?
    /// Until when the LED shows an error.
    public private(set) var errorShownUntil: MonotonicInstant?
    /// When the next preview frame is due (while the live page shows).
    public private(set) var nextPreview: MonotonicInstant
    public let previewIntervalNanoseconds: Int64
    /// When to try the GPIO lines again; nil while they are open (or not configured).
    public private(set) var buttonRetryAt: MonotonicInstant?
    /// When to look for touch devices again; nil while inotify watches for them.
    public private(set) var touchRescanAt: MonotonicInstant?

    private var buttonsOpen = false
    /// The last GPIO failure logged, so a failure that repeats is logged once.
    private var lastButtonError: String?
    /// The pattern last handed to the LED; nil: it must be told again (new lines).
    private var ledShown: StatusLEDPattern?
    /// The page last announced with `.pageShown`.
    private var lastPage: ScreenPage?
    /// Pinch to zoom and double tap on the live preview; nil without a screen.
    public private(set) var pinch: PinchZoomRecognizer?

    /// - Parameters:
    ///   - screen: The screen's logic, or nil without a screen.
    ///   - previewFramesPerSecond: `screen.preview_fps`; the first frame is due at `now`.
    ///   - now: The monotonic time at start-up.
    ///   - pinch: Pinch to zoom on the preview (its area and the largest zoom); nil for none.
    public init(screen: ScreenController?, previewFramesPerSecond: Int, now: MonotonicInstant, pinch: PinchZoomRecognizer? = nil) {
        self.screen = screen
        self.pinch = screen == nil ? nil : pinch
        nextPreview = now
        previewIntervalNanoseconds = 1_000_000_000 / Int64(max(1, previewFramesPerSecond))
    }

    /// The page showing; nil without a screen.
    public var page: ScreenPage? { screen?.model.page }

    /// What is recording, counting a command sent and not yet answered as starting or
    /// stopping: a second press meanwhile is dropped, not queued.
    /// - Parameter recorder: What the owner of the recordings says is recording.
    public func activity(recorder: RecordingActivity) -> RecordingActivity {
        guard let commandInFlight else { return recorder }
        return RecordingActivity(kind: recorder.kind ?? .video, state: commandInFlight)
    }

    /// Whether the LED shows an error at `now`.
    public func isErrorShown(at now: MonotonicInstant) -> Bool {
        errorShownUntil.map { now < $0 } ?? false
    }

    /// The LED's pattern at `now`.
    public func ledPattern(at now: MonotonicInstant) -> StatusLEDPattern {
        StatusLEDPattern(state: recordingState, error: isErrorShown(at: now))
    }

    /// When the loop must wake up next: the earliest of the devices' own deadlines, the
    /// screen's timers, a device retry, the end of an error, the next preview frame —
    /// and never more than a second away.
    /// - Parameters:
    ///   - now: The time the loop goes to sleep.
    ///   - devices: The device wrappers' deadlines (debounce, long press, LED blink, a
    ///     touch's missing release); nil entries are ignored.
    public func nextDeadline(now: MonotonicInstant, devices: [MonotonicInstant?] = []) -> MonotonicInstant {
        var deadline = now.advanced(byNanoseconds: Self.longestSleepNanoseconds)
        let timers = devices + [screen?.nextDeadline, page == .live ? pinch?.singleTapDue : nil, buttonRetryAt, touchRescanAt, errorShownUntil,
                                page == .live ? nextPreview : nil]
        for case let time? in timers where time < deadline { deadline = time }
        return deadline
    }

    // MARK: Inputs

    /// Handles one input.
    /// - Parameters:
    ///   - input: What happened.
    ///   - now: The monotonic time now. A touch's screen logic runs at the touch's own
    ///     time; everything else at `now`.
    /// - Returns: What the loop must do, in order.
    public mutating func handle(_ input: InteractionInput, now: MonotonicInstant) -> [InteractionEffect] {
        var effects: [InteractionEffect] = []
        switch input {
        case .started:
            if let model = screen?.model { effects.append(.draw(model)) }
        case .tick:
            tick(now: now, effects: &effects)
        case .button(let event, let recorder):
            press(event, recorder: recorder, effects: &effects)
        case .touch(let event, let recorder):
            // Two fingers or a double tap on the live preview zoom; on any other page only
            // lifting fingers reach the recogniser, so it never keeps a stale contact.
            if page == .live || event.phase == .release, let factor = pinch?.handle(event), page == .live {
                effects.append(.setZoom(factor))
            }
            guard let screenEffects = screen?.touch(event) else { break }
            apply(screenEffects, recorder: recorder, effects: &effects)
            if event.phase == .release, screenEffects.contains(.redraw) {
                effects.append(.measureTouchLatency(event))
            }
        case .zoomChanged(let factor):
            pinch?.zoomChanged(to: factor)
        case .recordingStateChanged(let state):
            recordingState = state
            apply(screen?.recordingChanged(state), effects: &effects)
            showLED(now: now, effects: &effects)
        case .status(let status):
            apply(screen?.update(status: status), effects: &effects)
        case .pinChecked(let result):
            if case .wrong = result { effects.append(.pinRejected) }
            apply(screen?.pinChecked(result, now: now), effects: &effects)
        case .recorderFailed:
            errorShownUntil = now.advanced(byNanoseconds: Self.errorShownNanoseconds)
            showLED(now: now, effects: &effects)
        case .lockNow:
            apply(screen?.lockNow(now: now), effects: &effects)
        case .media(let answer):
            apply(screen?.updateMedia { answer.apply(to: &$0) }, effects: &effects)
        case .recorderCommandDone(let state):
            commandInFlight = nil
            // A start that failed never changes state: tell the screen, so its record
            // button does not wait out its fallback.
            recordingState = state
            apply(screen?.recordingChanged(state), effects: &effects)
            showLED(now: now, effects: &effects)
        case .buttonsOpened(let summary):
            buttonsOpen = true
            buttonRetryAt = nil
            lastButtonError = nil
            ledShown = nil
            effects.append(.log(.notice, "buttons: \(summary)"))
            showLED(now: now, effects: &effects)
        case .buttonsNotConfigured:
            buttonsOpen = false
            buttonRetryAt = nil
            ledShown = nil
        case .buttonsFailed(let message):
            if message != lastButtonError {
                effects.append(.log(.error, "buttons: \(message); retrying every \(Self.buttonRetryNanoseconds / 1_000_000_000) s"))
            }
            lastButtonError = message
            buttonsOpen = false
            ledShown = nil
            buttonRetryAt = now.advanced(byNanoseconds: Self.buttonRetryNanoseconds)
        case .touchNeedsRescan(let needed):
            // The first rescan is due at the next tick; after that every few seconds.
            touchRescanAt = needed ? (touchRescanAt ?? now) : nil
        }
        return effects
    }

    // MARK: Decisions

    private mutating func tick(now: MonotonicInstant, effects: inout [InteractionEffect]) {
        if !buttonsOpen, let retry = buttonRetryAt, now >= retry {
            buttonRetryAt = nil
            effects.append(.openButtons)
        }
        if let rescan = touchRescanAt, now >= rescan {
            touchRescanAt = now.advanced(byNanoseconds: Self.touchRescanNanoseconds)
            effects.append(.rescanTouch)
        }
        apply(screen?.tick(now: now), effects: &effects)
        focusOnSingleTap(now: now, effects: &effects)
        if let until = errorShownUntil, now >= until { errorShownUntil = nil }
        showLED(now: now, effects: &effects)
        if let model = screen?.model, model.page == .live, now >= nextPreview {
            nextPreview = now.advanced(byNanoseconds: previewIntervalNanoseconds)
            effects.append(.refreshPreview(model))
        }
    }

    /// A single tap on the live picture (its double-tap window passed), not on a button
    /// drawn over it: focus there, and show the square.
    private mutating func focusOnSingleTap(now: MonotonicInstant, effects: inout [InteractionEffect]) {
        guard let point = pinch?.singleTap(at: now), let model = screen?.model, model.page == .live,
              screen?.layout.target(at: point, on: .live, shown: model.liveTargets) == nil else { return }
        effects.append(.focus(point))
        apply(screen?.showFocusMark(at: point, now: now), effects: &effects)
    }

    private mutating func press(_ event: ButtonEvent, recorder: RecordingActivity, effects: inout [InteractionEffect]) {
        effects.append(.log(.info, "\(event)"))
        switch ButtonGate.decide(event.action, activity: activity(recorder: recorder)) {
        case .ignored(let reason):
            effects.append(.log(.info, "button \(event.button): \(reason)"))
        case .run(let command):
            run(command, recorder: recorder, effects: &effects)
        }
    }

    /// Decides a recorder command against what is recording (the in-flight command
    /// included) and hands it to the loop.
    private mutating func run(_ command: ButtonCommand, recorder: RecordingActivity, effects: inout [InteractionEffect]) {
        switch command {
        case .record(let request):
            switch RecordingArbiter.decide(request, activity: activity(recorder: recorder)) {
            case .start: commandInFlight = .starting
            case .stop: commandInFlight = .stopping
            case .refuse(let refusal):
                effects.append(.log(.info, "\(request): \(refusal.message)"))
                return
            }
            effects.append(.sendRecorderCommand(request))
        case .takeSnapshot:
            effects.append(.takeSnapshot)
        case .toggleBroadcast:
            effects.append(.toggleBroadcast)
        }
    }

    /// Turns the screen logic's effects into the loop's; drawing first, so the screen
    /// answers at once.
    /// - Parameter recorder: What is recording, for the screen's record button; only a
    ///   touch fires it, the other inputs go by the state last reported.
    private mutating func apply(_ screenEffects: [ScreenEffect]?, recorder: RecordingActivity? = nil,
                                effects: inout [InteractionEffect]) {
        guard let screenEffects, !screenEffects.isEmpty, let model = screen?.model else { return }
        // Blanking changes the page too: draw it, so the panel's memory (and a screenshot)
        // is black even where the driver cannot switch the panel off.
        let changesPanel = screenEffects.contains { if case .setPanelBlank = $0 { true } else { false } }
        if screenEffects.contains(.redraw) || changesPanel { effects.append(.draw(model)) }
        let recorder = recorder ?? RecordingActivity(kind: nil, state: recordingState)
        for effect in screenEffects {
            switch effect {
            case .redraw: break
            case .startRecording: run(.record(.start(.video)), recorder: recorder, effects: &effects)
            case .stopRecording: run(.record(.stop), recorder: recorder, effects: &effects)
            case .startSoundRecording: run(.record(.start(.audio)), recorder: recorder, effects: &effects)
            case .toggleBroadcast: run(.toggleBroadcast, recorder: recorder, effects: &effects)
            case .setTorch(let on): effects.append(.setTorch(on))
            case .takeSnapshot: run(.takeSnapshot, recorder: recorder, effects: &effects)
            case .setPanelBlank(let blank): effects.append(.setPanelBlank(blank))
            case .verifyPIN(let pin): effects.append(.checkPIN(pin))
            case .media(let effect): effects.append(.media(effect))
            }
        }
        if model.page != lastPage {
            lastPage = model.page
            effects.append(.pageShown(model.page))
        }
    }

    /// Hands the LED its pattern when it changed (or the LED's lines are new).
    private mutating func showLED(now: MonotonicInstant, effects: inout [InteractionEffect]) {
        guard buttonsOpen else { return }
        let pattern = ledPattern(at: now)
        guard pattern != ledShown else { return }
        ledShown = pattern
        effects.append(.setLED(pattern))
    }
}
