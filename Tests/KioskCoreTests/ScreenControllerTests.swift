import KioskCore
import XCTest

final class ScreenControllerTests: XCTestCase {
    let clock = ManualClock(MonotonicInstant(nanoseconds: 1_000_000_000))
    let layout = ScreenLayout(size: ScreenSize(width: 800, height: 480))

    func makeController(idle: Double = 60, blank: Double? = 120, locked: Bool = false) -> ScreenController {
        var settings = Configuration.Lock()
        settings.idleSeconds = idle
        settings.blankSeconds = blank
        return ScreenController(settings: settings, layout: layout, now: clock.now(), startLocked: locked)
    }

    func centre(_ rect: ScreenRect) -> ScreenPoint { ScreenPoint(x: rect.x + rect.width / 2, y: rect.y + rect.height / 2) }

    func point(of target: ScreenTarget, in layout: ScreenLayout? = nil) -> ScreenPoint {
        centre((layout ?? self.layout).rect(of: target)!)
    }

    func event(_ phase: TouchPhase, _ point: ScreenPoint, slot: Int = 0) -> TouchEvent {
        TouchEvent(phase: phase, point: point, slot: slot, time: clock.now())
    }

    /// Press and release at the same point; returns the release's effects.
    @discardableResult
    func tap(_ controller: inout ScreenController, _ point: ScreenPoint) -> [ScreenEffect] {
        controller.touch(event(.press, point))
        clock.advance(bySeconds: 0.05)
        return controller.touch(event(.release, point))
    }

    @discardableResult
    func type(_ digits: String, _ controller: inout ScreenController) -> [ScreenEffect] {
        var last: [ScreenEffect] = []
        for character in digits {
            last = tap(&controller, point(of: .pinKey(.digit(character.wholeNumberValue!))))
            clock.advance(bySeconds: 0.2)
        }
        return last
    }

    // MARK: Idle timer and screensaver

    func testStartsLockedByDefault() {
        let controller = ScreenController(settings: Configuration.Lock(), layout: layout, now: clock.now())
        XCTAssertEqual(controller.model.page, .pin, "a restart must not unlock the device")
    }

    func testLocksAfterTheIdleTime() {
        var controller = makeController()
        XCTAssertEqual(controller.model.page, .live)
        XCTAssertEqual(controller.nextDeadline, clock.now().advanced(byNanoseconds: 60_000_000_000))
        clock.advance(bySeconds: 59.9)
        XCTAssertEqual(controller.tick(now: clock.now()), [])
        XCTAssertEqual(controller.model.page, .live)
        clock.advance(bySeconds: 0.1)
        XCTAssertEqual(controller.tick(now: clock.now()), [.redraw])
        XCTAssertEqual(controller.model.page, .pin)
        XCTAssertEqual(controller.model.pinDigitsEntered, 0)
    }

    func testPressAndReleaseResetTheTimerButMovesDoNot() {
        var controller = makeController(idle: 3)
        let empty = ScreenPoint(x: 10, y: 10)  // on the preview: no target
        clock.advance(bySeconds: 2)
        controller.touch(event(.press, empty))
        clock.advance(bySeconds: 2)
        controller.touch(event(.release, empty))
        XCTAssertEqual(controller.nextDeadline, clock.now().advanced(byNanoseconds: 3_000_000_000), "release reset it")
        clock.advance(bySeconds: 1)
        controller.touch(event(.press, empty))
        for _ in 0..<3 {
            clock.advance(bySeconds: 1)
            controller.touch(event(.move, ScreenPoint(x: 20, y: 20)))
        }
        XCTAssertEqual(controller.model.page, .pin, "3 s of moves after the press: locked")
    }

    func testNoScreensaverWhileRecordingTakingAStillOrPlaying() {
        var controller = makeController(idle: 3)
        controller.recordingChanged(.recording)
        clock.advance(bySeconds: 10)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .live)
        XCTAssertEqual(controller.nextDeadline, clock.now().advanced(byNanoseconds: 3_000_000_000), "the timer started again")

        controller.recordingChanged(.idle)
        var status = ScreenStatus()
        status.stillInProgress = true
        controller.update(status: status)
        clock.advance(bySeconds: 3)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .live, "taking a still")

        status.stillInProgress = false
        status.playbackActive = true
        controller.update(status: status)
        clock.advance(bySeconds: 3)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .live, "playing media")

        status.playbackActive = false
        controller.update(status: status)
        clock.advance(bySeconds: 2.9)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .live, "the full idle time follows the busy period")
        clock.advance(bySeconds: 0.1)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .pin)
    }

    // MARK: PIN entry

    func testKeypadEntryDeleteAndCheck() {
        var controller = makeController(locked: true)
        controller.touch(event(.press, point(of: .pinKey(.digit(4)))))
        XCTAssertEqual(controller.model.pressedTarget, .pinKey(.digit(4)), "drawn pressed")
        XCTAssertEqual(controller.model.pinDigitsEntered, 0, "the digit counts on release")
        XCTAssertEqual(controller.touch(event(.release, point(of: .pinKey(.digit(4))))), [.redraw])
        XCTAssertEqual(controller.model.pinDigitsEntered, 1)
        XCTAssertNil(controller.model.pressedTarget)

        type("9", &controller)
        tap(&controller, point(of: .pinKey(.delete)))
        XCTAssertEqual(controller.model.pinDigitsEntered, 1)
        type("21", &controller)
        XCTAssertEqual(controller.model.pinDigitsEntered, 3)
        let effects = type("7", &controller)
        // The fourth dot is drawn first; the slow check runs after.
        XCTAssertEqual(effects, [.redraw, .verifyPIN("4217")])
        XCTAssertEqual(controller.model.pinDigitsEntered, 4)
        XCTAssertTrue(controller.isCheckingPIN)
        XCTAssertEqual(type("5", &controller), [], "keys do nothing while the PIN is checked")

        controller.pinChecked(.right, now: clock.now())
        XCTAssertEqual(controller.model.page, .live)
        XCTAssertEqual(controller.model.pinDigitsEntered, 0)
        XCTAssertNil(controller.model.pinMessage)
        XCTAssertEqual(controller.nextDeadline, clock.now().advanced(byNanoseconds: 60_000_000_000))
    }

    func testWrongPINShowsAMessageAndClearsTheEntry() {
        var controller = makeController(locked: true)
        XCTAssertEqual(type("1111", &controller).last, .verifyPIN("1111"))
        XCTAssertEqual(controller.pinChecked(.wrong(waitSeconds: 0), now: clock.now()), [.redraw])
        XCTAssertEqual(controller.model.page, .pin)
        XCTAssertEqual(controller.model.pinMessage, "Check your PIN")
        XCTAssertEqual(controller.model.pinDigitsEntered, 0)
        type("2", &controller)
        XCTAssertNil(controller.model.pinMessage, "typing again clears the message")
        XCTAssertEqual(controller.model.pinDigitsEntered, 1)
        tap(&controller, point(of: .pinKey(.delete)))
        XCTAssertEqual(controller.model.pinDigitsEntered, 0)

        controller.pinChecked(.unavailable(reason: "see the log"), now: clock.now())
        XCTAssertEqual(controller.model.pinMessage, "Cannot check the PIN: see the log")
    }

    func testThrottledWaitIsShownCountsDownAndBlocksKeys() throws {
        var controller = makeController(locked: true)
        type("1357", &controller)
        controller.pinChecked(.wrong(waitSeconds: 30), now: clock.now())
        XCTAssertEqual(controller.model.pinMessage, "Too many wrong PINs: try again in 30 s")
        XCTAssertEqual(type("2", &controller), [], "keys are off during the wait")
        XCTAssertEqual(controller.model.pinDigitsEntered, 0)
        XCTAssertNil(controller.model.pressedTarget)

        // The countdown wakes the loop once a second, no more.
        let before = clock.now()
        let next = try XCTUnwrap(controller.nextDeadline)
        XCTAssertLessThanOrEqual(next.seconds(since: before), 1.0)
        XCTAssertGreaterThan(next.seconds(since: before), 0)
        clock.advance(bySeconds: next.seconds(since: before))
        XCTAssertEqual(controller.tick(now: clock.now()), [.redraw])
        XCTAssertEqual(controller.model.pinMessage, "Too many wrong PINs: try again in 29 s")

        clock.advance(bySeconds: 29)
        controller.tick(now: clock.now())
        XCTAssertNil(controller.model.pinMessage, "the wait is over")
        type("2", &controller)
        XCTAssertEqual(controller.model.pinDigitsEntered, 1)

        controller.pinChecked(.throttled(waitSeconds: 150), now: clock.now())
        XCTAssertEqual(controller.model.pinMessage, "Too many wrong PINs: try again in 2 min 30 s")
    }

    // MARK: Blanking and waking

    func testBlanksAfterTheSecondIdleTimeAndWakesToThePINScreen() {
        var controller = makeController(locked: true)
        type("12", &controller)
        clock.advance(bySeconds: 120)
        XCTAssertEqual(controller.tick(now: clock.now()), [.setPanelBlank(true)])
        XCTAssertEqual(controller.model.page, .blank)
        XCTAssertNil(controller.nextDeadline, "nothing to do until a touch")
        XCTAssertEqual(controller.update(status: ScreenStatus()), [], "no drawing while dark")

        // The waking touch lands on a key: it must not type.
        let key = point(of: .pinKey(.digit(5)))
        clock.advance(bySeconds: 1000)
        XCTAssertEqual(controller.touch(event(.press, key)), [.redraw, .setPanelBlank(false)])
        XCTAssertEqual(controller.model.page, .pin)
        XCTAssertNil(controller.model.pressedTarget)
        controller.touch(event(.move, key))
        XCTAssertNil(controller.model.pressedTarget)
        XCTAssertEqual(controller.touch(event(.release, key)), [])
        XCTAssertEqual(controller.model.pinDigitsEntered, 0, "the typed digits were dropped and the wake typed none")
        type("5", &controller)
        XCTAssertEqual(controller.model.pinDigitsEntered, 1, "the next tap types")
    }

    func testNoBlankingWhenBlankSecondsIsNil() {
        var controller = makeController(blank: nil, locked: true)
        XCTAssertNil(controller.nextDeadline)
        clock.advance(bySeconds: 100_000)
        XCTAssertEqual(controller.tick(now: clock.now()), [])
        XCTAssertEqual(controller.model.page, .pin)
    }

    // MARK: Live screen buttons

    func testRecordButtonStartsStopsAndIgnoresTapsWhileBusy() {
        var controller = makeController()
        let record = point(of: .recordButton)
        XCTAssertEqual(tap(&controller, record), [.redraw, .startRecording])
        XCTAssertEqual(controller.model.recordingState, .starting, "disabled at once")
        XCTAssertFalse(controller.model.recordButtonEnabled)
        XCTAssertEqual(tap(&controller, record), [], "a tap while starting is ignored, not queued")
        controller.touch(event(.press, record))
        XCTAssertNil(controller.model.pressedTarget, "a disabled button is not drawn pressed")
        controller.touch(event(.release, record))

        controller.recordingChanged(.recording)
        XCTAssertEqual(tap(&controller, record), [.redraw, .stopRecording])
        XCTAssertEqual(controller.model.recordingState, .stopping)
        XCTAssertEqual(tap(&controller, record), [])
        controller.recordingChanged(.idle)
        XCTAssertEqual(tap(&controller, record).last, .startRecording)
    }

    /// A start the recorder refused without a word must not leave the button disabled.
    func testARefusedStartFreesTheButtonAfterFiveSeconds() {
        var controller = makeController()
        let record = point(of: .recordButton)
        XCTAssertEqual(tap(&controller, record).last, .startRecording)
        XCTAssertEqual(controller.nextDeadline, clock.now().advanced(byNanoseconds: 5_000_000_000))
        clock.advance(bySeconds: 4.9)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.recordingState, .starting)
        clock.advance(bySeconds: 0.1)
        XCTAssertEqual(controller.tick(now: clock.now()), [.redraw])
        XCTAssertEqual(controller.model.recordingState, .idle, "back to what the recorder last said")
        XCTAssertEqual(tap(&controller, record).last, .startRecording)
        // A recorder that answers keeps its state however long it takes.
        controller.recordingChanged(.starting)
        clock.advance(bySeconds: 30)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.recordingState, .starting)
    }

    func testSnapshotFiresOnReleaseOverTheSameButtonOnly() {
        var controller = makeController()
        let snapshot = point(of: .snapshotButton)
        XCTAssertEqual(controller.touch(event(.press, snapshot)), [.redraw])
        XCTAssertEqual(controller.model.pressedTarget, .snapshotButton)
        // Slide off: drawn released; release elsewhere: nothing.
        controller.touch(event(.move, ScreenPoint(x: 10, y: 10)))
        XCTAssertNil(controller.model.pressedTarget)
        controller.touch(event(.move, snapshot))
        XCTAssertEqual(controller.model.pressedTarget, .snapshotButton, "slid back on")
        XCTAssertEqual(controller.touch(event(.release, ScreenPoint(x: 10, y: 10))), [.redraw])
        XCTAssertEqual(tap(&controller, snapshot), [.redraw, .takeSnapshot])
    }

    func testOnlyTheFirstFingerOperatesTheScreen() {
        var controller = makeController()
        controller.touch(event(.press, ScreenPoint(x: 10, y: 10), slot: 0))
        controller.touch(event(.press, point(of: .snapshotButton), slot: 1))
        XCTAssertNil(controller.model.pressedTarget)
        XCTAssertEqual(controller.touch(event(.release, point(of: .snapshotButton), slot: 1)), [])
        controller.touch(event(.release, ScreenPoint(x: 10, y: 10), slot: 0))
        XCTAssertEqual(tap(&controller, point(of: .snapshotButton)).last, .takeSnapshot)
    }

    func testStatusReachesTheModel() {
        var controller = makeController()
        var status = ScreenStatus()
        status.defaultPinWarning = true
        status.freeBytes = 123_456
        status.cameraState = "test pattern"
        status.recordingSeconds = 12.5
        XCTAssertEqual(controller.update(status: status), [.redraw])
        XCTAssertTrue(controller.model.defaultPinWarning)
        XCTAssertEqual(controller.model.freeBytes, 123_456)
        XCTAssertEqual(controller.model.cameraState, "test pattern")
        XCTAssertEqual(controller.model.recordingSeconds, 12.5)
        XCTAssertEqual(controller.update(status: status), [], "nothing changed: no redraw")
        status.fleetProblem = "MQTT offline"
        XCTAssertEqual(controller.update(status: status), [.redraw], "the broker going away is drawn")
        XCTAssertEqual(controller.model.fleetProblem, "MQTT offline")
    }

    func testLockNowFromLiveAndFromBlank() {
        var controller = makeController()
        XCTAssertEqual(controller.lockNow(now: clock.now()), [.redraw])
        XCTAssertEqual(controller.model.page, .pin)
        clock.advance(bySeconds: 120)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.lockNow(now: clock.now()), [.redraw, .setPanelBlank(false)])
    }

    func testEffectsNeverShowThePIN() {
        XCTAssertEqual(ScreenEffect.verifyPIN("2580").description, "verifyPIN(****)")
    }

    // MARK: Hit testing under each rotation

    /// For each way the 800x480 panel can be mounted, the logical screen is 800x480 or
    /// 480x800; a tap at the centre of each key hits it, between keys hits nothing.
    func testHitTestingUnderEachRotation() {
        let panel = ScreenSize(width: 800, height: 480)
        for rotation in ScreenRotation.allCases {
            let size = rotation.swapsAxes ? panel.swapped : panel
            let layout = ScreenLayout(size: size)
            var settings = Configuration.Lock()
            settings.blankSeconds = nil
            var controller = ScreenController(settings: settings, layout: layout, now: clock.now(), startLocked: true)
            for (key, rect) in layout.pinKeys {
                XCTAssertEqual(layout.target(at: centre(rect), on: .pin), .pinKey(key), "\(rotation) \(size) \(key)")
                // Just right of and just below the key is the gap between keys.
                XCTAssertNil(layout.target(at: ScreenPoint(x: rect.maxX, y: rect.y + rect.height / 2), on: .pin), "\(rotation) right of \(key)")
                XCTAssertNil(layout.target(at: ScreenPoint(x: rect.x + rect.width / 2, y: rect.maxY), on: .pin), "\(rotation) below \(key)")
            }
            // Through the controller: a tap between two keys types nothing, on a key types.
            let one = layout.rect(of: .pinKey(.digit(1)))!, two = layout.rect(of: .pinKey(.digit(2)))!
            XCTAssertLessThan(one.maxX, two.x, "\(rotation): a gap between keys")
            tap(&controller, ScreenPoint(x: (one.maxX + two.x) / 2, y: one.y + one.height / 2))
            XCTAssertEqual(controller.model.pinDigitsEntered, 0, "\(rotation): between keys")
            for digit in [1, 9, 0] { tap(&controller, point(of: .pinKey(.digit(digit)), in: layout)) }
            XCTAssertEqual(controller.model.pinDigitsEntered, 3, "\(rotation)")
            tap(&controller, point(of: .pinKey(.delete), in: layout))
            XCTAssertEqual(controller.model.pinDigitsEntered, 2, "\(rotation)")
            XCTAssertEqual(tap(&controller, point(of: .pinKey(.digit(5)), in: layout)), [.redraw])
            XCTAssertEqual(tap(&controller, point(of: .pinKey(.digit(3)), in: layout)).last, .verifyPIN("1953"), "\(rotation)")

            controller.pinChecked(.right, now: clock.now())
            XCTAssertEqual(tap(&controller, point(of: .snapshotButton, in: layout)).last, .takeSnapshot, "\(rotation)")
            XCTAssertEqual(tap(&controller, point(of: .recordButton, in: layout)).last, .startRecording, "\(rotation)")
        }
    }

    // MARK: Latency

    /// A key release must be drawn within 16 ms; the controller's share must be tiny.
    func testTouchHandlingTakesFarLessThanAFrame() {
        var controller = makeController(locked: true)
        let key = point(of: .pinKey(.digit(3)))
        let start = ContinuousClock.now
        let rounds = 2000
        for index in 0..<rounds {
            clock.advance(bySeconds: 0.01)
            controller.touch(event(.press, key))
            clock.advance(bySeconds: 0.01)
            if controller.touch(event(.release, key)).contains(where: { if case .verifyPIN = $0 { true } else { false } }) {
                controller.pinChecked(.wrong(waitSeconds: 0), now: clock.now())
            }
            _ = index
        }
        let perEvent = (ContinuousClock.now - start) / (rounds * 2)
        XCTAssertLessThan(perEvent, .milliseconds(1), "per touch event: \(perEvent)")
    }
}
