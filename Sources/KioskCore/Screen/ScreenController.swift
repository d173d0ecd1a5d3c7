/// The screen's behaviour as a pure state machine: idle timer, screensaver,
/// PIN entry, blanking, and the live screen's buttons.
///
/// Inputs are touches (logical pixels), the passing of time (`tick`), the recorder's
/// state, status values and PIN check results; outputs are `model` (what to draw) and
/// the effects each input returns. Nothing here sleeps or reads a clock: the UI loop
/// sleeps until `nextDeadline` or the next event, whichever comes first.
///
/// Touch rules: press and release reset the idle timer, moves do not. A press shows
/// its target pressed; the action fires on release over the same target. Only the
/// first finger down operates the screen. A touch that wakes the blank panel does
/// nothing else.
///
/// Over 400 lines as one thing: one touch can wake the panel, end the screensaver, enter
/// a PIN digit or fire a button, so the lock and the pages it guards are one state that
/// changes together. Its parts live beside it: the timers (`IdleTimer`), the PIN
/// (`PinEntry`, `PinThrottle`) in ScreenLock/, the media view's state (`MediaBrowser`),
/// and what it is told and asks (`ScreenStatus`, `ScreenEffect`) in ScreenEffect.swift.
public struct ScreenController: Sendable {
    /// What the renderer draws.
    /// Until when the focus square shows.
    private var focusMarkUntil: MonotonicInstant?
    public private(set) var model = ScreenModel()
    public let layout: ScreenLayout
    public let settings: Configuration.Lock
    /// The last status given to `update(status:)`.
    public private(set) var status = ScreenStatus()

    private var lockTimer: IdleTimer
    private var blankTimer: IdleTimer?
    private var entry = PinEntry()
    /// A PIN was handed out in `.verifyPIN` and its answer has not come back.
    public private(set) var isCheckingPIN = false
    /// Monotonic time when the throttling wait ends.
    private var lockedUntil: MonotonicInstant?
    private var message: PinMessage = .none
    private var tracked: TrackedTouch?
    /// The slot whose press woke the panel; its release is swallowed.
    private var wakingSlot: Int?
    /// The time of the latest input, for the countdown's next step.
    private var lastInput: MonotonicInstant
    /// The recorder's state as last reported; the model shows starting/stopping ahead of it.
    private var reportedRecordingState: RecordingState = .idle
    /// A start or stop was asked for and the recorder has not answered: if it stays silent
    /// this long, the button goes back to what the recorder last said, so that a refused
    /// command cannot leave it disabled for good.
    private var recordCommandDeadline: MonotonicInstant?
    static let recordCommandTimeoutNanoseconds: Int64 = 5_000_000_000

    private struct TrackedTouch: Sendable {
        var slot: Int
        var page: ScreenPage
        /// nil: the press landed on nothing (or something disabled); the slot is still owned.
        var target: ScreenTarget?
    }

    private enum PinMessage: Sendable, Equatable {
        case none
        case wrong
        case unavailable(String)
    }

    /// - Parameters:
    ///   - settings: The `[lock]` section (idle and blank times).
    ///   - layout: Where the buttons and keys are, for hit testing.
    ///   - now: The monotonic time at start-up.
    ///   - startLocked: Begin on the PIN screen (a restart must not unlock the device);
    ///     nil: as `settings.startLocked` says.
    public init(settings: Configuration.Lock, layout: ScreenLayout, now: MonotonicInstant, startLocked: Bool? = nil) {
        self.settings = settings
        self.layout = layout
        lastInput = now
        lockTimer = IdleTimer(timeoutSeconds: settings.idleSeconds, start: now)
        blankTimer = settings.blankSeconds.map { IdleTimer(timeoutSeconds: $0, start: now) }
        model.page = (startLocked ?? settings.startLocked) ? .pin : .live
    }

    /// Whether the screensaver must stay away.
    public var isBusy: Bool {
        model.recordingState != .idle || status.stillInProgress || status.playbackActive || model.page == .media
    }

    /// When `tick` next has something to do; nil: nothing until the next input.
    public var nextDeadline: MonotonicInstant? {
        switch model.page {
        case .live:
            let live = recordCommandDeadline.map { min($0, lockTimer.nextDeadline) } ?? lockTimer.nextDeadline
            return focusMarkUntil.map { min($0, live) } ?? live
        case .pin:
            let blank = isCheckingPIN ? nil : blankTimer?.nextDeadline
            let countdown = lockedUntil.map(nextCountdownStep)
            switch (blank, countdown) {
            case (let a?, let b?): return min(a, b)
            case (let a?, nil): return a
            case (nil, let b?): return b
            case (nil, nil): return nil
            }
        case .blank, .media:
            return recordCommandDeadline
        }
    }

    // MARK: Inputs

    /// Time passed: lock the screen, blank the panel, count down the throttling wait.
    @discardableResult
    public mutating func tick(now: MonotonicInstant) -> [ScreenEffect] {
        let before = model
        var effects: [ScreenEffect] = []
        advance(to: now, effects: &effects)
        return finish(before, effects)
    }

    /// How long the focus square shows after a tap on the preview.
    public static let focusMarkNanoseconds: Int64 = 1_000_000_000

    /// A tap on the live preview asked the camera to focus there: the square shows for
    /// `focusMarkNanoseconds` (a new tap moves it). Only on the live page.
    @discardableResult
    public mutating func showFocusMark(at point: ScreenPoint, now: MonotonicInstant) -> [ScreenEffect] {
        let before = model
        guard model.page == .live else { return [] }
        model.focusMark = point
        focusMarkUntil = now.advanced(byNanoseconds: Self.focusMarkNanoseconds)
        return finish(before, [])
    }

    /// A touch, in logical screen pixels.
    @discardableResult
    public mutating func touch(_ event: TouchEvent) -> [ScreenEffect] {
        let before = model
        let now = event.time
        var effects: [ScreenEffect] = []
        advance(to: now, effects: &effects)
        switch event.phase {
        case .press: press(event, now: now, effects: &effects)
        case .move: move(event)
        case .release: release(event, now: now, effects: &effects)
        }
        refreshPinMessage(now: now)
        return finish(before, effects)
    }

    /// The recorder's state changed. Report it also when a start or stop asked for through
    /// an effect was refused (the button otherwise stays disabled for 5 s).
    @discardableResult
    public mutating func recordingChanged(_ state: RecordingState) -> [ScreenEffect] {
        let before = model
        reportedRecordingState = state
        recordCommandDeadline = nil
        model.recordingState = state
        if state == .idle { updateSoundRecorder(kind: nil) }
        return finish(before, [])
    }

    /// New status values for the live screen and the busy flags.
    @discardableResult
    public mutating func update(status newStatus: ScreenStatus) -> [ScreenEffect] {
        let before = model
        status = newStatus
        model.recordingSeconds = newStatus.recordingSeconds
        model.recordingBytes = newStatus.recordingBytes
        model.audioLevels = newStatus.audioLevels
        model.freeBytes = newStatus.freeBytes
        model.cameraState = newStatus.cameraState
        model.deviceName = newStatus.deviceName
        model.notice = newStatus.notice
        model.defaultPinWarning = newStatus.defaultPinWarning
        model.motion = newStatus.motion
        model.eventClip = newStatus.eventClip
        model.fleetProblem = newStatus.fleetProblem
        model.broadcast = newStatus.broadcast
        model.broadcastAvailable = newStatus.broadcastAvailable
        model.torch = newStatus.torch
        model.web = newStatus.web
        updateSoundRecorder(kind: newStatus.recordingKind)
        return finish(before, [])
    }

    /// An answer for the media view (a listing, the player's position, a failure); nothing
    /// once the media view has closed.
    @discardableResult
    public mutating func updateMedia(_ change: (inout MediaBrowser) -> [MediaViewEffect]) -> [ScreenEffect] {
        guard model.page == .media, var media = model.media else { return [] }
        let before = model
        let effects = change(&media)
        model.media = media
        return finish(before, mediaEffects(effects))
    }

    /// The answer to the last `.verifyPIN`.
    /// - Parameters:
    ///   - result: From `PinStore.verify`; map a thrown error to `.unavailable`.
    ///   - now: When the answer arrived (starts the throttling countdown).
    @discardableResult
    public mutating func pinChecked(_ result: PinCheckResult, now: MonotonicInstant) -> [ScreenEffect] {
        let before = model
        var effects: [ScreenEffect] = []
        lastInput = max(lastInput, now)
        isCheckingPIN = false
        entry.clear()
        model.pinDigitsEntered = 0
        switch result {
        case .right:
            if model.page == .blank { effects.append(.setPanelBlank(false)) }
            unlock(now: now)
        case .wrong(let wait):
            message = .wrong
            lockedUntil = wait > 0 ? now.advanced(byNanoseconds: Int64(wait) * 1_000_000_000) : nil
        case .throttled(let wait):
            message = .wrong
            lockedUntil = now.advanced(byNanoseconds: Int64(max(1, wait)) * 1_000_000_000)
        case .unavailable(let reason):
            message = .unavailable(reason)
        }
        refreshPinMessage(now: now)
        return finish(before, effects)
    }

    /// Shows the PIN screen at once (a control-socket command, or the lock button).
    @discardableResult
    public mutating func lockNow(now: MonotonicInstant) -> [ScreenEffect] {
        let before = model
        var effects: [ScreenEffect] = []
        if model.page == .media { effects += closeMedia() }
        if model.page == .live { lock(now: now) }
        if model.page == .blank {
            model.page = .pin
            effects.append(.setPanelBlank(false))
        }
        blankTimer?.reset(at: now)
        return finish(before, effects)
    }

    /// Follows what records: a new sound-only recording starts an empty waveform, each
    /// level update while it records adds a column, and the waveform goes with it.
    private mutating func updateSoundRecorder(kind: RecordingKind?) {
        let wasSound = model.recordingKind == .audio
        if let kind { model.recordingKind = kind } else if model.recordingState == .idle { model.recordingKind = nil }
        guard model.recordingKind == .audio, model.recordingState != .idle else {
            if !model.soundWaveform.isEmpty { model.soundWaveform = LiveWaveform() }
            return
        }
        if !wasSound { model.soundWaveform = LiveWaveform() }
        if model.recordingState == .recording, let levels = model.audioLevels { model.soundWaveform.add(levels) }
    }

    // MARK: Transitions

    private mutating func advance(to now: MonotonicInstant, effects: inout [ScreenEffect]) {
        lastInput = max(lastInput, now)
        if let until = focusMarkUntil, now >= until || model.page != .live {
            focusMarkUntil = nil
            model.focusMark = nil
        }
        if let deadline = recordCommandDeadline, now >= deadline {
            recordCommandDeadline = nil
            model.recordingState = reportedRecordingState
        }
        switch model.page {
        case .live:
            if lockTimer.expire(at: now, busy: isBusy) { lock(now: now) }
        case .pin:
            if var timer = blankTimer {
                if timer.expire(at: now, busy: isCheckingPIN) {
                    model.page = .blank
                    entry.clear()
                    model.pinDigitsEntered = 0
                    model.pressedTarget = nil
                    tracked = nil
                    effects.append(.setPanelBlank(true))
                }
                blankTimer = timer
            }
        case .blank, .media:
            // The media view holds the screensaver off: its idle time starts when it closes.
            break
        }
        refreshPinMessage(now: now)
    }

    private mutating func lock(now: MonotonicInstant) {
        model.page = .pin
        entry.clear()
        model.pinDigitsEntered = 0
        model.pressedTarget = nil
        tracked = nil
        if message != .none && lockedUntil == nil { message = .none }
        blankTimer?.reset(at: now)
    }

    private mutating func unlock(now: MonotonicInstant) {
        model.page = .live
        message = .none
        lockedUntil = nil
        model.pinMessage = nil
        model.pressedTarget = nil
        tracked = nil
        lockTimer.reset(at: now)
    }

    private mutating func press(_ event: TouchEvent, now: MonotonicInstant, effects: inout [ScreenEffect]) {
        resetTimers(at: now)
        if model.page == .blank {
            model.page = .pin
            wakingSlot = event.slot
            effects.append(.setPanelBlank(false))
            return
        }
        if model.page == .media {
            effects += mediaTouch(event)
            return
        }
        if let tracked, tracked.slot != event.slot { return }  // a second finger
        let target = layout.target(at: event.point, on: model.page, shown: model.liveTargets).flatMap { isEnabled($0, now: now) ? $0 : nil }
        tracked = TrackedTouch(slot: event.slot, page: model.page, target: target)
        model.pressedTarget = target
    }

    private mutating func move(_ event: TouchEvent) {
        if model.page == .media {
            _ = mediaTouch(event)
            return
        }
        guard let tracked, tracked.slot == event.slot, let target = tracked.target else { return }
        // Sliding off a button releases it visually; sliding back presses it again.
        let over = tracked.page == model.page && layout.target(at: event.point, on: model.page, shown: model.liveTargets) == target
        model.pressedTarget = over ? target : nil
    }

    private mutating func release(_ event: TouchEvent, now: MonotonicInstant, effects: inout [ScreenEffect]) {
        resetTimers(at: now)
        if wakingSlot == event.slot {
            wakingSlot = nil
            return
        }
        if model.page == .media {
            effects += mediaTouch(event)
            return
        }
        guard let touch = tracked, touch.slot == event.slot else { return }
        tracked = nil
        model.pressedTarget = nil
        guard let target = touch.target, touch.page == model.page,
              layout.target(at: event.point, on: model.page, shown: model.liveTargets) == target, isEnabled(target, now: now) else { return }
        fire(target, now: now, effects: &effects)
    }

    private func isEnabled(_ target: ScreenTarget, now: MonotonicInstant) -> Bool {
        switch target {
        case .recordButton: model.page == .live && model.recordButtonEnabled
        case .snapshotButton: model.page == .live && !status.stillInProgress
        case .libraryButton: model.page == .live
        case .soundButton: model.page == .live && model.soundButtonShown && model.soundButtonEnabled
        case .broadcastButton: model.page == .live && model.broadcastAvailable
        case .torchButton: model.page == .live && model.torch != nil
        case .pinKey: model.page == .pin && !isCheckingPIN && !isLockedOut(now: now)
        }
    }

    private mutating func fire(_ target: ScreenTarget, now: MonotonicInstant, effects: inout [ScreenEffect]) {
        switch target {
        case .recordButton:
            // Shown as starting/stopping at once, so a second tap before the recorder
            // answers is ignored rather than queued.
            switch model.recordingState {
            case .idle:
                model.recordingState = .starting
                recordCommandDeadline = now.advanced(byNanoseconds: Self.recordCommandTimeoutNanoseconds)
                effects.append(.startRecording)
            case .recording:
                model.recordingState = .stopping
                recordCommandDeadline = now.advanced(byNanoseconds: Self.recordCommandTimeoutNanoseconds)
                effects.append(.stopRecording)
            case .starting, .stopping:
                break
            }
        case .snapshotButton:
            effects.append(.takeSnapshot)
        case .soundButton:
            // Like the record button: shown as starting/stopping at once.
            switch model.recordingState {
            case .idle:
                model.recordingState = .starting
                model.recordingKind = .audio
                model.soundWaveform = LiveWaveform()
                recordCommandDeadline = now.advanced(byNanoseconds: Self.recordCommandTimeoutNanoseconds)
                effects.append(.startSoundRecording)
            case .recording where model.recordingKind == .audio:
                model.recordingState = .stopping
                recordCommandDeadline = now.advanced(byNanoseconds: Self.recordCommandTimeoutNanoseconds)
                effects.append(.stopRecording)
            default:
                break
            }
        case .broadcastButton:
            effects.append(.toggleBroadcast)
        case .torchButton:
            effects.append(.setTorch(!(model.torch ?? false)))
        case .libraryButton:
            var media = MediaBrowser(layout: MediaViewLayout(size: layout.size))
            let opened = media.open()
            model.page = .media
            model.media = media
            effects += mediaEffects(opened)
        case .pinKey(let key):
            if case .digit = key, message != .none { message = .none }
            if let pin = entry.press(key) {
                model.pinDigitsEntered = PinEntry.length
                isCheckingPIN = true
                effects.append(.verifyPIN(pin))
            } else {
                model.pinDigitsEntered = entry.count
            }
        }
    }

    // MARK: Media view

    /// Hands a touch to the media view; its `.leave` goes back to the live screen.
    private mutating func mediaTouch(_ event: TouchEvent) -> [ScreenEffect] {
        guard var media = model.media else { return [] }
        let effects = media.touch(event)
        model.media = media
        return mediaEffects(effects)
    }

    /// The media view's effects for the owner; `.redraw` is the model changing (see
    /// `finish`), `.leave` closes the view here.
    private mutating func mediaEffects(_ effects: [MediaViewEffect]) -> [ScreenEffect] {
        var out: [ScreenEffect] = []
        for effect in effects {
            switch effect {
            case .redraw: break
            case .leave: out += closeMedia()
            default: out.append(.media(effect))
            }
        }
        return out
    }

    /// Back to the live screen, stopping whatever plays.
    private mutating func closeMedia() -> [ScreenEffect] {
        let playing = model.media?.page == .player
        model.page = .live
        model.media = nil
        model.pressedTarget = nil
        tracked = nil
        return playing ? [.media(.stopPlayback)] : []
    }

    private mutating func resetTimers(at now: MonotonicInstant) {
        lockTimer.reset(at: now)
        blankTimer?.reset(at: now)
    }

    // MARK: Throttling countdown

    private func isLockedOut(now: MonotonicInstant) -> Bool {
        lockedUntil.map { now < $0 } ?? false
    }

    private mutating func refreshPinMessage(now: MonotonicInstant) {
        if let until = lockedUntil, now >= until {
            lockedUntil = nil
            message = .none
        }
        if let until = lockedUntil {
            let seconds = Int((until.nanoseconds(since: now) + 999_999_999) / 1_000_000_000)
            model.pinMessage = "Too many wrong PINs: try again in \(Self.waitText(seconds))"
            return
        }
        switch message {
        case .none: model.pinMessage = nil
        case .wrong: model.pinMessage = "Check your PIN"
        case .unavailable(let reason): model.pinMessage = "Cannot check the PIN: \(reason)"
        }
    }

    /// The next instant after `lastInput` at which the whole-second countdown to `until`
    /// shows a new number: it shows ceil(remaining), which drops at until − k s.
    private func nextCountdownStep(_ until: MonotonicInstant) -> MonotonicInstant {
        let remaining = until.nanoseconds(since: lastInput)
        guard remaining > 0 else { return lastInput }
        let shown = (remaining + 999_999_999) / 1_000_000_000
        return until.advanced(byNanoseconds: -(shown - 1) * 1_000_000_000)
    }

    /// "30 s", "2 min", "1 min 30 s".
    public static func waitText(_ seconds: Int) -> String {
        guard seconds >= 60 else { return "\(max(0, seconds)) s" }
        let minutes = seconds / 60, rest = seconds % 60
        return rest == 0 ? "\(minutes) min" : "\(minutes) min \(rest) s"
    }

    /// Adds `.redraw` in front when the drawn picture changed.
    private func finish(_ before: ScreenModel, _ effects: [ScreenEffect]) -> [ScreenEffect] {
        guard model != before, model.page != .blank else { return effects }
        return [.redraw] + effects
    }
}
