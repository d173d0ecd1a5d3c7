import KioskCore
import XCTest

final class InteractionControllerTests: XCTestCase {
    let clock = ManualClock(MonotonicInstant(nanoseconds: 1_000_000_000))
    let layout = ScreenLayout(size: ScreenSize(width: 800, height: 480))
    var now: MonotonicInstant { clock.now() }

    let idle = RecordingActivity.idle
    let videoRecording = RecordingActivity(kind: .video, state: .recording)
    let soundRecording = RecordingActivity(kind: .audio, state: .recording)

    /// A controller with a screen (unlocked unless `locked`) and the GPIO lines open.
    func makeController(screen: Bool = true, locked: Bool = false, idleSeconds: Double = 60, blankSeconds: Double? = 120,
                        fps: Int = 10, buttons: Bool = true) -> InteractionController {
        var settings = Configuration.Lock()
        settings.idleSeconds = idleSeconds
        settings.blankSeconds = blankSeconds
        let logic = screen ? ScreenController(settings: settings, layout: layout, now: now, startLocked: locked) : nil
        var controller = InteractionController(screen: logic, previewFramesPerSecond: fps, now: now)
        if buttons { _ = controller.handle(.buttonsOpened(summary: "gpiochip0 [gpio-sim] record: line 0"), now: now) }
        return controller
    }

    func button(_ action: ButtonAction, _ kind: ButtonPressKind = .short, name: String = "record") -> ButtonEvent {
        ButtonEvent(button: name, action: action, kind: kind, time: now)
    }

    func point(of target: ScreenTarget) -> ScreenPoint {
        let rect = layout.rect(of: target)!
        return ScreenPoint(x: rect.x + rect.width / 2, y: rect.y + rect.height / 2)
    }

    func touch(_ phase: TouchPhase, _ point: ScreenPoint) -> TouchEvent {
        TouchEvent(phase: phase, point: point, time: now, device: "/dev/input/event2")
    }

    /// Press and release on `target`; returns the release's effects.
    @discardableResult
    func tap(_ controller: inout InteractionController, _ target: ScreenTarget,
             recorder: RecordingActivity = .idle) -> [InteractionEffect] {
        _ = controller.handle(.touch(touch(.press, point(of: target)), recorder: recorder), now: now)
        advance(0.05)
        return controller.handle(.touch(touch(.release, point(of: target)), recorder: recorder), now: now)
    }

    /// Types the digits on the PIN pad; returns the last release's effects.
    @discardableResult
    func type(_ digits: String, _ controller: inout InteractionController) -> [InteractionEffect] {
        var last: [InteractionEffect] = []
        for character in digits {
            last = tap(&controller, .pinKey(.digit(character.wholeNumberValue!)))
            advance(0.2)
        }
        return last
    }

    func tick(_ controller: inout InteractionController) -> [InteractionEffect] {
        controller.handle(.tick, now: now)
    }

    func sent(_ effects: [InteractionEffect]) -> [RecordingRequest] {
        effects.compactMap { if case .sendRecorderCommand(let request) = $0 { request } else { nil } }
    }

    func logs(_ effects: [InteractionEffect]) -> [String] {
        effects.compactMap { if case .log(_, let message) = $0 { message } else { nil } }
    }

    func leds(_ effects: [InteractionEffect]) -> [StatusLEDPattern] {
        effects.compactMap { if case .setLED(let pattern) = $0 { pattern } else { nil } }
    }

    func previews(_ effects: [InteractionEffect]) -> Int {
        effects.filter { if case .refreshPreview = $0 { true } else { false } }.count
    }

    func seconds(_ s: Double) -> Int64 { Int64((s * 1000).rounded()) * 1_000_000 }

    /// Moves the clock on by whole milliseconds, so sums of steps are exact.
    func advance(_ s: Double) { clock.advance(byNanoseconds: seconds(s)) }

    // MARK: Start

    func testStartDrawsTheFirstPictureOnlyWithAScreen() {
        var controller = makeController(locked: true)
        XCTAssertEqual(controller.handle(.started, now: now), [.draw(controller.screen!.model)])
        XCTAssertEqual(controller.page, .pin)
        var headless = makeController(screen: false)
        XCTAssertEqual(headless.handle(.started, now: now), [])
        XCTAssertNil(headless.page)
    }

    // MARK: Buttons: the command in flight

    func testAPressStartsVideoAndCountsAsStartingUntilTheRecorderAnswers() {
        var controller = makeController()
        let event = button(.recordToggle)
        let effects = controller.handle(.button(event, recorder: idle), now: now)
        XCTAssertEqual(effects, [.log(.info, "\(event)"), .sendRecorderCommand(.toggle(.video))])
        XCTAssertEqual(controller.commandInFlight, .starting)
        XCTAssertEqual(controller.activity(recorder: idle), RecordingActivity(kind: .video, state: .starting),
                       "the owner still says idle, but the start is on its way")
    }

    func testABroadcastButtonTogglesTheBroadcastWhateverRecords() {
        var controller = makeController()
        let event = button(.broadcast, name: "extra")
        let recording = RecordingActivity(kind: .video, state: .recording)
        XCTAssertEqual(controller.handle(.button(event, recorder: idle), now: now), [.log(.info, "\(event)"), .toggleBroadcast])
        XCTAssertEqual(controller.handle(.button(event, recorder: recording), now: now), [.log(.info, "\(event)"), .toggleBroadcast])
        XCTAssertNil(controller.commandInFlight, "the recording is not touched")
    }

    func testTwoQuickPressesNeverMakeADoubleToggle() {
        var controller = makeController()
        XCTAssertEqual(sent(controller.handle(.button(button(.recordToggle), recorder: idle), now: now)), [.toggle(.video)])
        // The recorder has not started yet (the owner still says idle): the second press
        // would be a second start, and once it runs, a stop. It is dropped.
        advance(0.2)
        let second = controller.handle(.button(button(.recordToggle), recorder: idle), now: now)
        XCTAssertEqual(sent(second), [])
        XCTAssertTrue(logs(second).contains { $0.hasPrefix("button record: ignored:") && $0.contains("still starting") }, "\(second)")
        // Nor does the audio button start a sound-only recording meanwhile.
        XCTAssertEqual(sent(controller.handle(.button(button(.audioToggle, name: "extra"), recorder: idle), now: now)), [])

        // The start is answered: the recorder runs; the next press stops it, once.
        _ = controller.handle(.recorderCommandDone(state: .recording), now: now)
        XCTAssertNil(controller.commandInFlight)
        XCTAssertEqual(sent(controller.handle(.button(button(.recordToggle), recorder: videoRecording), now: now)), [.toggle(.video)])
        XCTAssertEqual(controller.commandInFlight, .stopping)
        XCTAssertEqual(sent(controller.handle(.button(button(.recordToggle), recorder: videoRecording), now: now)), [],
                       "a press while the stop is on its way is dropped, not a new start")
        _ = controller.handle(.recorderCommandDone(state: .idle), now: now)
        XCTAssertEqual(sent(controller.handle(.button(button(.recordToggle), recorder: idle), now: now)), [.toggle(.video)])
    }

    func testAPressWhileTheOwnerSaysStartingIsIgnored() {
        var controller = makeController()
        let effects = controller.handle(.button(button(.recordToggle), recorder: RecordingActivity(kind: .audio, state: .starting)), now: now)
        XCTAssertEqual(sent(effects), [])
        XCTAssertNil(controller.commandInFlight)
        XCTAssertEqual(logs(effects).last, "button record: ignored: a sound-only recording is still starting; press again once it runs")
    }

    func testARecordButtonStopsWhateverRecords() {
        var controller = makeController()
        XCTAssertEqual(sent(controller.handle(.button(button(.recordToggle), recorder: soundRecording), now: now)), [.toggle(.video)])
        XCTAssertEqual(controller.commandInFlight, .stopping)
        XCTAssertEqual(controller.activity(recorder: soundRecording), RecordingActivity(kind: .audio, state: .stopping))
    }

    func testLongPressRunsItsOwnAction() {
        var controller = makeController()
        let long = button(.audioToggle, .long)
        let effects = controller.handle(.button(long, recorder: idle), now: now)
        XCTAssertEqual(effects, [.log(.info, "\(long)"), .sendRecorderCommand(.toggle(.audio))])
        XCTAssertEqual(controller.commandInFlight, .starting)

        let still = button(.snapshot, .long, name: "snapshot")
        XCTAssertEqual(controller.handle(.button(still, recorder: idle), now: now), [.log(.info, "\(still)"), .takeSnapshot],
                       "a still is independent of the command in flight")
        XCTAssertEqual(controller.commandInFlight, .starting, "a still is no recorder command")

        let nothing = button(.none, .long, name: "extra")
        XCTAssertEqual(controller.handle(.button(nothing, recorder: idle), now: now),
                       [.log(.info, "\(nothing)"), .log(.info, "button extra: no action is configured for this press")])
    }

    // MARK: Touch

    func testTheScreensRecordButtonDrawsFirstThenStartsAndIsMeasured() {
        var controller = makeController()
        _ = tick(&controller)
        let press = controller.handle(.touch(touch(.press, point(of: .recordButton)), recorder: idle), now: now)
        XCTAssertEqual(press, [.draw(controller.screen!.model), .pageShown(.live)], "drawn pressed; the first drawing announces the page")
        advance(0.05)
        let release = touch(.release, point(of: .recordButton))
        let effects = controller.handle(.touch(release, recorder: idle), now: now)
        var model = controller.screen!.model
        XCTAssertEqual(model.recordingState, .starting, "shown as starting at once")
        XCTAssertEqual(effects, [.draw(model), .sendRecorderCommand(.start(.video)), .measureTouchLatency(release)])
        XCTAssertEqual(controller.commandInFlight, .starting)

        // The start failed: the owner stays idle. The button comes back at once.
        let done = controller.handle(.recorderCommandDone(state: .idle), now: now)
        model = controller.screen!.model
        XCTAssertEqual(model.recordingState, .idle)
        XCTAssertEqual(done.first, .draw(model))
        XCTAssertNil(controller.commandInFlight)
    }

    func testTheScreensStopButtonStopsWhateverRecords() {
        var controller = makeController()
        _ = controller.handle(.recordingStateChanged(.recording), now: now)
        XCTAssertEqual(sent(tap(&controller, .recordButton, recorder: soundRecording)), [.stop])
        XCTAssertEqual(controller.commandInFlight, .stopping)
    }

    func testAScreenStartTheOwnerRefusesIsLoggedNotSent() {
        var controller = makeController()
        // The screen still shows idle (the news has not arrived), but sound records.
        let effects = tap(&controller, .recordButton, recorder: soundRecording)
        XCTAssertEqual(sent(effects), [])
        XCTAssertNil(controller.commandInFlight)
        XCTAssertEqual(logs(effects), ["start recording: already recording: a sound-only recording is running; stop it first (kioskcam stop)"])
    }

    func testTheScreensSnapshotButtonTakesAStill() {
        var controller = makeController()
        let effects = tap(&controller, .snapshotButton)
        XCTAssertTrue(effects.contains(.takeSnapshot), "\(effects)")
        XCTAssertNil(controller.commandInFlight)
    }

    func testWithoutAScreenTouchesDoNothing() {
        var controller = makeController(screen: false)
        XCTAssertEqual(controller.handle(.touch(touch(.press, ScreenPoint(x: 10, y: 10)), recorder: idle), now: now), [])
        XCTAssertEqual(controller.handle(.touch(touch(.release, ScreenPoint(x: 10, y: 10)), recorder: idle), now: now), [])
        XCTAssertEqual(controller.handle(.lockNow, now: now), [])
    }

    func testAReleaseThatDrawsNothingIsNotMeasured() {
        var controller = makeController()
        _ = tick(&controller)
        let empty = ScreenPoint(x: 10, y: 10)  // the picture: no target
        _ = controller.handle(.touch(touch(.press, empty), recorder: idle), now: now)
        XCTAssertEqual(controller.handle(.touch(touch(.release, empty), recorder: idle), now: now), [])
    }

    // MARK: PIN

    func testPINEntryIsCheckedOffTheLoopAndItsAnswerHandled() {
        var controller = makeController(locked: true)
        let typed = type("4217", &controller)
        XCTAssertEqual(typed.count, 3, "\(typed)")
        XCTAssertEqual(Array(typed.prefix(2)), [.draw(controller.screen!.model), .checkPIN("4217")], "the fourth dot is drawn first")
        guard case .measureTouchLatency(let release)? = typed.last else { return XCTFail("\(typed)") }
        XCTAssertEqual(release.phase, .release)
        XCTAssertEqual(InteractionEffect.checkPIN("4217").description, "checkPIN(****)", "digits never reach the log")

        let wrong = controller.handle(.pinChecked(.wrong(waitSeconds: 0)), now: now)
        XCTAssertEqual(wrong, [.pinRejected, .draw(controller.screen!.model)])
        XCTAssertEqual(controller.screen!.model.pinMessage, "Check your PIN")
        XCTAssertEqual(controller.page, .pin)

        type("1234", &controller)
        let right = controller.handle(.pinChecked(.right), now: now)
        XCTAssertEqual(right, [.draw(controller.screen!.model), .pageShown(.live)])
        XCTAssertEqual(controller.page, .live)
    }

    func testAnUnavailablePINStoreIsNoWrongPIN() {
        var controller = makeController(locked: true)
        type("4217", &controller)
        let effects = controller.handle(.pinChecked(.unavailable(reason: "see the log")), now: now)
        XCTAssertFalse(effects.contains(.pinRejected))
        XCTAssertEqual(controller.screen!.model.pinMessage, "Cannot check the PIN: see the log")
    }

    // MARK: Locking

    func testLockingWhileRecordingWaitsForTheRecordingToEnd() {
        var controller = makeController(idleSeconds: 60)
        _ = controller.handle(.recordingStateChanged(.recording), now: now)
        advance(61)
        let busy = tick(&controller)
        XCTAssertEqual(controller.page, .live, "no lock while recording")
        XCTAssertFalse(busy.contains(.pageShown(.pin)))
        _ = controller.handle(.recordingStateChanged(.idle), now: now)
        advance(59.9)
        _ = tick(&controller)
        XCTAssertEqual(controller.page, .live, "the full idle time follows the recording")
        advance(0.1)
        let locked = tick(&controller)
        XCTAssertEqual(controller.page, .pin)
        XCTAssertEqual(locked, [.draw(controller.screen!.model), .pageShown(.pin)])
    }

    func testLockNowLocksEvenWhileRecording() {
        var controller = makeController()
        _ = controller.handle(.recordingStateChanged(.recording), now: now)
        let effects = controller.handle(.lockNow, now: now)
        XCTAssertEqual(controller.page, .pin)
        XCTAssertEqual(effects, [.draw(controller.screen!.model), .pageShown(.pin)])
    }

    func testTheBlankPanelIsDrawnBlackAndAnnounced() {
        var controller = makeController(locked: true, blankSeconds: 5)
        advance(5)
        let effects = tick(&controller)
        XCTAssertEqual(controller.page, .blank)
        XCTAssertEqual(effects, [.draw(controller.screen!.model), .setPanelBlank(true), .pageShown(.blank)],
                       "drawn, so the panel's memory is black where the driver cannot switch it off")
        // A touch wakes it to the PIN screen.
        let wake = controller.handle(.touch(touch(.press, ScreenPoint(x: 10, y: 10)), recorder: idle), now: now)
        XCTAssertEqual(wake, [.draw(controller.screen!.model), .setPanelBlank(false), .pageShown(.pin)])
    }

    func testAPageIsAnnouncedOnceWhenItChanges() {
        var controller = makeController(locked: true)
        var status = ScreenStatus()
        status.defaultPinWarning = true
        XCTAssertEqual(controller.handle(.status(status), now: now), [.draw(controller.screen!.model), .pageShown(.pin)])
        status.freeBytes = 1_000_000
        XCTAssertEqual(controller.handle(.status(status), now: now), [.draw(controller.screen!.model)], "same page: drawn, not announced")
        XCTAssertEqual(controller.handle(.status(status), now: now), [], "nothing changed: nothing drawn")
    }

    // MARK: LED and errors

    func testTheLEDFollowsTheRecordingStateAndIsToldOnlyOfChanges() {
        var controller = makeController()
        XCTAssertEqual(leds(tick(&controller)), [], "told .off when the lines opened")
        XCTAssertEqual(leds(controller.handle(.recordingStateChanged(.starting), now: now)), [.slowBlink])
        XCTAssertEqual(leds(controller.handle(.recordingStateChanged(.recording), now: now)), [.on])
        XCTAssertEqual(leds(tick(&controller)), [])
        XCTAssertEqual(leds(controller.handle(.recordingStateChanged(.recording), now: now)), [])
        XCTAssertEqual(leds(controller.handle(.recordingStateChanged(.idle), now: now)), [.off])
        XCTAssertEqual(controller.recordingState, .idle)
    }

    func testTheLEDIsToldAgainWhenTheLinesAreReopened() {
        var controller = makeController()
        _ = controller.handle(.recordingStateChanged(.recording), now: now)
        _ = controller.handle(.buttonsFailed("line 2: busy"), now: now)
        XCTAssertEqual(leds(controller.handle(.recordingStateChanged(.recording), now: now)), [], "no lines: nothing to tell")
        let reopened = controller.handle(.buttonsOpened(summary: "gpiochip0"), now: now)
        XCTAssertEqual(reopened, [.log(.notice, "buttons: gpiochip0"), .setLED(.on)])
    }

    func testAnErrorShowsForTenSecondsAndWakesTheLoopWhenItEnds() {
        var controller = makeController(screen: false)
        _ = controller.handle(.recordingStateChanged(.recording), now: now)
        let failedAt = now
        XCTAssertEqual(leds(controller.handle(.recorderFailed, now: now)), [.errorFlashes], "an error wins over recording")
        XCTAssertTrue(controller.isErrorShown(at: now))
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: InteractionController.longestSleepNanoseconds))
        advance(9.5)
        XCTAssertEqual(controller.nextDeadline(now: now), failedAt.advanced(byNanoseconds: seconds(10)), "woken when the error ends")
        XCTAssertEqual(leds(tick(&controller)), [])
        advance(0.5)
        XCTAssertFalse(controller.isErrorShown(at: now))
        XCTAssertEqual(leds(tick(&controller)), [.on], "back to what records")
        XCTAssertNil(controller.errorShownUntil)
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(1)))
    }

    func testASecondErrorShowsTenSecondsFromItself() {
        var controller = makeController(screen: false)
        _ = controller.handle(.recorderFailed, now: now)
        advance(8)
        XCTAssertEqual(leds(controller.handle(.recorderFailed, now: now)), [], "already showing an error")
        XCTAssertEqual(controller.errorShownUntil, now.advanced(byNanoseconds: seconds(10)))
    }

    // MARK: Preview

    func testThePreviewRefreshesAtItsFrameRateWhileTheLivePageShows() {
        var controller = makeController(fps: 10)
        let start = now
        XCTAssertEqual(tick(&controller).last, .refreshPreview(controller.screen!.model), "the first frame is due at once")
        XCTAssertEqual(controller.nextPreview, start.advanced(byNanoseconds: 100_000_000))
        XCTAssertEqual(controller.nextDeadline(now: now), start.advanced(byNanoseconds: 100_000_000))
        advance(0.05)
        XCTAssertEqual(previews(tick(&controller)), 0)
        advance(0.05)
        XCTAssertEqual(previews(tick(&controller)), 1)
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: 100_000_000))
    }

    func testNoPreviewOnThePINPageOrWithoutAScreen() {
        var locked = makeController(locked: true, blankSeconds: nil)
        XCTAssertEqual(previews(tick(&locked)), 0)
        XCTAssertEqual(locked.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(1)), "nothing else to wake for")
        var headless = makeController(screen: false)
        XCTAssertEqual(previews(tick(&headless)), 0)
        XCTAssertEqual(headless.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(1)))
    }

    func testUnlockingShowsAFrameAtOnce() {
        var controller = makeController(locked: true, fps: 1)
        advance(30)
        type("1234", &controller)
        _ = controller.handle(.pinChecked(.right), now: now)
        XCTAssertLessThanOrEqual(controller.nextDeadline(now: now), now, "the preview frame is overdue")
        XCTAssertEqual(previews(tick(&controller)), 1)
    }

    // MARK: Deadlines

    func testTheDeadlineIsTheEarliestOfEverythingAndAtMostASecondAway() {
        let controller = makeController(screen: false)
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(1)))
        let debounce = now.advanced(byNanoseconds: 30_000_000)
        XCTAssertEqual(controller.nextDeadline(now: now, devices: [nil, debounce, now.advanced(byNanoseconds: seconds(0.5))]), debounce)
        XCTAssertEqual(controller.nextDeadline(now: now, devices: [now.advanced(byNanoseconds: seconds(5))]),
                       now.advanced(byNanoseconds: seconds(1)), "the heartbeat moves at least once a second")
    }

    func testTheScreensIdleTimerIsADeadline() {
        var controller = makeController(idleSeconds: 0.5, fps: 1)
        _ = tick(&controller)   // the first preview frame; the next is 1 s away
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(0.5)))
    }

    // MARK: Devices

    func testMissingButtonsAreRetriedEvery30SecondsAndEachFailureLoggedOnce() {
        var controller = makeController(screen: false, buttons: false)
        let failed = now
        XCTAssertEqual(controller.handle(.buttonsFailed("gpiochip0: no such chip"), now: now),
                       [.log(.error, "buttons: gpiochip0: no such chip; retrying every 30 s")])
        XCTAssertEqual(controller.buttonRetryAt, failed.advanced(byNanoseconds: seconds(30)))
        advance(29.9)
        XCTAssertFalse(tick(&controller).contains(.openButtons))
        XCTAssertEqual(controller.nextDeadline(now: now), failed.advanced(byNanoseconds: seconds(30)))
        advance(0.1)
        XCTAssertEqual(tick(&controller), [.openButtons])
        XCTAssertNil(controller.buttonRetryAt)
        XCTAssertFalse(tick(&controller).contains(.openButtons), "asked once")

        XCTAssertEqual(controller.handle(.buttonsFailed("gpiochip0: no such chip"), now: now), [], "the same failure is not logged again")
        XCTAssertEqual(controller.buttonRetryAt, now.advanced(byNanoseconds: seconds(30)))
        XCTAssertEqual(logs(controller.handle(.buttonsFailed("line 17: busy"), now: now)), ["buttons: line 17: busy; retrying every 30 s"])

        XCTAssertEqual(controller.handle(.buttonsOpened(summary: "gpiochip0 [gpio-sim]"), now: now),
                       [.log(.notice, "buttons: gpiochip0 [gpio-sim]"), .setLED(.off)])
        XCTAssertNil(controller.buttonRetryAt)
        XCTAssertEqual(logs(controller.handle(.buttonsFailed("line 17: busy"), now: now)), ["buttons: line 17: busy; retrying every 30 s"],
                       "after a success the same failure is news again")
    }

    func testNoGPIOConfiguredIsNeverRetried() {
        var controller = makeController(screen: false, buttons: false)
        XCTAssertEqual(controller.handle(.buttonsNotConfigured, now: now), [])
        advance(60)
        XCTAssertEqual(tick(&controller), [])
        XCTAssertNil(controller.buttonRetryAt)
        XCTAssertEqual(leds(controller.handle(.recordingStateChanged(.recording), now: now)), [], "no LED to tell")
    }

    func testTouchDevicesAreLookedForEveryFiveSecondsWhileInotifyCannotWatch() {
        var controller = makeController(screen: false)
        _ = controller.handle(.touchNeedsRescan(true), now: now)
        XCTAssertEqual(tick(&controller), [.rescanTouch], "the first look is at the first tick")
        XCTAssertEqual(controller.touchRescanAt, now.advanced(byNanoseconds: seconds(5)))
        _ = controller.handle(.touchNeedsRescan(true), now: now)
        XCTAssertEqual(controller.touchRescanAt, now.advanced(byNanoseconds: seconds(5)), "still needed: the schedule stands")
        advance(4.9)
        XCTAssertEqual(tick(&controller), [])
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(0.1)))
        advance(0.1)
        XCTAssertEqual(tick(&controller), [.rescanTouch])
    }

    func testOnceInotifyWatchesNoRescanDeadlineIsLeftBehind() {
        // /dev/input appeared: the watcher runs. A stale deadline in the past would
        // make every poll return at once (a busy loop).
        var controller = makeController(screen: false)
        _ = controller.handle(.touchNeedsRescan(true), now: now)
        _ = tick(&controller)
        _ = controller.handle(.touchNeedsRescan(false), now: now)
        XCTAssertNil(controller.touchRescanAt)
        advance(60)
        XCTAssertEqual(tick(&controller), [])
        XCTAssertEqual(controller.nextDeadline(now: now), now.advanced(byNanoseconds: seconds(1)))
    }
}
