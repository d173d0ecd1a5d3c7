import KioskCore
import XCTest

/// The live screen's sound, broadcast and torch buttons reach the same owners as the
/// GPIO buttons and the socket.
extension InteractionControllerTests {
    func testTheSoundButtonAsksTheOwnerForASoundOnlyRecording() {
        var controller = makeController()
        _ = tick(&controller)
        var status = ScreenStatus()
        status.audioLevels = AudioLevels(rmsDBFS: [-20], peakHoldDBFS: [-10], updatedAt: now)
        _ = controller.handle(.status(status), now: now)
        _ = controller.handle(.touch(touch(.press, point(of: .soundButton)), recorder: idle), now: now)
        advance(0.05)
        let release = touch(.release, point(of: .soundButton))
        let effects = controller.handle(.touch(release, recorder: idle), now: now)
        XCTAssertEqual(effects, [.draw(controller.screen!.model), .sendRecorderCommand(.start(.audio)), .measureTouchLatency(release)])
        XCTAssertEqual(controller.commandInFlight, .starting, "a GPIO press meanwhile is dropped, not queued")
    }

    func testTheSoundButtonIsRefusedWhileAVideoRecordingRuns() {
        var controller = makeController()
        _ = tick(&controller)
        var status = ScreenStatus()
        status.audioLevels = AudioLevels(rmsDBFS: [-20], peakHoldDBFS: [-10], updatedAt: now)
        _ = controller.handle(.status(status), now: now)
        // The screen has not heard of the recording yet; the owner's word decides.
        let video = RecordingActivity(kind: .video, state: .recording)
        _ = controller.handle(.touch(touch(.press, point(of: .soundButton)), recorder: video), now: now)
        let effects = controller.handle(.touch(touch(.release, point(of: .soundButton)), recorder: video), now: now)
        XCTAssertFalse(effects.contains(.sendRecorderCommand(.start(.audio))), "\(effects)")
        XCTAssertTrue(effects.contains { if case .log(.info, let line) = $0 { line.contains("a video recording") } else { false } }, "\(effects)")
    }

    func testBroadcastAndTorchButtonsGiveTheLoopsEffects() {
        var controller = makeController()
        _ = tick(&controller)
        var status = ScreenStatus()
        status.broadcastAvailable = true
        status.torch = false
        _ = controller.handle(.status(status), now: now)
        _ = controller.handle(.touch(touch(.press, point(of: .broadcastButton)), recorder: idle), now: now)
        XCTAssertTrue(controller.handle(.touch(touch(.release, point(of: .broadcastButton)), recorder: idle), now: now).contains(.toggleBroadcast))
        _ = controller.handle(.touch(touch(.press, point(of: .torchButton)), recorder: idle), now: now)
        XCTAssertTrue(controller.handle(.touch(touch(.release, point(of: .torchButton)), recorder: idle), now: now).contains(.setTorch(true)))
    }
}
