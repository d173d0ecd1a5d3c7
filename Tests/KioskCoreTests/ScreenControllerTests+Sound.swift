import KioskCore
import XCTest

/// The live screen's sound recorder, broadcast and torch buttons.
extension ScreenControllerTests {
    func microphoneStatus(_ dBFS: Double, at seconds: Double, kind: RecordingKind? = nil) -> ScreenStatus {
        var status = ScreenStatus()
        status.audioLevels = AudioLevels(rmsDBFS: [dBFS], peakHoldDBFS: [dBFS], updatedAt: MonotonicInstant(nanoseconds: Int64(seconds * 1e9)))
        status.recordingKind = kind
        return status
    }

    func testSoundButtonStartsASoundRecordingShowsItsWaveformAndStopsIt() {
        var controller = makeController()
        XCTAssertEqual(tap(&controller, point(of: .soundButton)), [], "no microphone: no sound button")
        controller.update(status: microphoneStatus(-30, at: 1))
        XCTAssertTrue(controller.model.soundButtonShown)
        XCTAssertEqual(tap(&controller, point(of: .soundButton)), [.redraw, .startSoundRecording])
        XCTAssertEqual(controller.model.recordingState, .starting)
        XCTAssertTrue(controller.model.soundRecorderShown)
        XCTAssertEqual(tap(&controller, point(of: .soundButton)), [], "a second tap while it starts is ignored")
        controller.recordingChanged(.recording)
        controller.update(status: microphoneStatus(-20, at: 2, kind: .audio))
        controller.update(status: microphoneStatus(-20, at: 2, kind: .audio))
        controller.update(status: microphoneStatus(-40, at: 3, kind: .audio))
        XCTAssertEqual(controller.model.soundWaveform.amplitudes.count, 2, "one column per new level update")
        XCTAssertEqual(controller.model.soundWaveform.loudest, 0.1, accuracy: 1e-4)
        XCTAssertEqual(tap(&controller, point(of: .soundButton)), [.redraw, .stopRecording])
        XCTAssertEqual(controller.model.recordingState, .stopping)
        controller.recordingChanged(.idle)
        controller.update(status: microphoneStatus(-20, at: 4))
        XCTAssertFalse(controller.model.soundRecorderShown)
        XCTAssertNil(controller.model.recordingKind)
        XCTAssertTrue(controller.model.soundWaveform.isEmpty, "the waveform goes with the recording")
    }

    func testASoundRecordingStartedElsewhereShowsTheRecorderAndAVideoOneDoesNot() {
        var controller = makeController()
        controller.recordingChanged(.recording)
        controller.update(status: microphoneStatus(-20, at: 1, kind: .video))
        XCTAssertFalse(controller.model.soundRecorderShown)
        XCTAssertFalse(controller.model.soundButtonEnabled, "one recording at a time: the sound button waits")
        XCTAssertEqual(tap(&controller, point(of: .soundButton)), [])
        controller.recordingChanged(.idle)
        controller.update(status: microphoneStatus(-20, at: 2))
        controller.recordingChanged(.recording)
        controller.update(status: microphoneStatus(-20, at: 3, kind: .audio))
        XCTAssertTrue(controller.model.soundRecorderShown, "record.start {\"audio_only\": true} from the socket shows it too")
        XCTAssertEqual(controller.model.soundWaveform.amplitudes.count, 1)
    }

    func testNoScreensaverWhileTheSoundRecorderRecords() {
        var controller = makeController(idle: 60)
        controller.update(status: microphoneStatus(-30, at: 1))
        tap(&controller, point(of: .soundButton))
        controller.recordingChanged(.recording)
        clock.advance(bySeconds: 600)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .live, "the lock waits out the recording")
        controller.recordingChanged(.idle)
        clock.advance(bySeconds: 60)
        controller.tick(now: clock.now())
        XCTAssertEqual(controller.model.page, .pin, "and locks a full idle time after it ends")
    }

    func testBroadcastAndTorchButtonsShowOnlyWhereTheyWork() {
        var controller = makeController()
        XCTAssertEqual(tap(&controller, point(of: .broadcastButton)), [])
        XCTAssertEqual(tap(&controller, point(of: .torchButton)), [])
        var status = ScreenStatus()
        status.broadcastAvailable = true
        status.torch = false
        controller.update(status: status)
        XCTAssertEqual(tap(&controller, point(of: .broadcastButton)), [.redraw, .toggleBroadcast])
        XCTAssertEqual(tap(&controller, point(of: .torchButton)), [.redraw, .setTorch(true)])
        status.torch = true
        controller.update(status: status)
        XCTAssertEqual(tap(&controller, point(of: .torchButton)), [.redraw, .setTorch(false)])
    }

    func testNewButtonsAreNotOnThePINScreen() {
        var controller = makeController(locked: true)
        var status = microphoneStatus(-20, at: 1)
        status.broadcastAvailable = true
        status.torch = false
        controller.update(status: status)
        for target in [ScreenTarget.soundButton, .broadcastButton, .torchButton] {
            let effects = tap(&controller, point(of: target))
            XCTAssertFalse(effects.contains(.startSoundRecording) || effects.contains(.toggleBroadcast)
                           || effects.contains(.setTorch(true)), "\(target) on the PIN screen: \(effects)")
        }
        XCTAssertEqual(controller.model.page, .pin)
    }

    func testNewButtonsSitOverThePreviewApartFromEachOtherUnderBothOrientations() {
        for size in [ScreenSize(width: 800, height: 480), ScreenSize(width: 480, height: 800), ScreenSize(width: 320, height: 240)] {
            let layout = ScreenLayout(size: size)
            let rects = [layout.soundButton, layout.libraryButton, layout.broadcastButton, layout.torchButton]
            for (index, rect) in rects.enumerated() {
                XCTAssertFalse(rect.isEmpty, "\(size)")
                XCTAssertEqual(rect.intersection(layout.preview), rect, "\(size) \(rect) inside the preview")
                for other in rects[(index + 1)...] {
                    XCTAssertTrue(rect.intersection(other).isEmpty, "\(size) \(rect) overlaps \(other)")
                }
                XCTAssertTrue(rect.intersection(layout.recordingBadge).isEmpty, "\(size) clear of the REC badge")
            }
            XCTAssertEqual(layout.soundPanel.intersection(layout.preview), layout.soundPanel)
            XCTAssertTrue(layout.soundPanel.intersection(layout.soundButton).isEmpty, "\(size): the stop button stays free")
            XCTAssertEqual(layout.soundWaveform.intersection(layout.soundPanel), layout.soundWaveform)
            XCTAssertGreaterThan(layout.soundWaveform.height, 20, "\(size)")
        }
    }
}
