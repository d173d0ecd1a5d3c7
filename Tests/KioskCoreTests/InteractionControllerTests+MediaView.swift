import KioskCore
import XCTest

/// The media view inside the screen's logic: opened from the live screen only, the
/// screensaver held off while it shows, recording still driven by the GPIO button.
extension InteractionControllerTests {
    func media(_ controller: InteractionController) -> MediaBrowser? { controller.screen?.model.media }

    func tapMedia(_ controller: inout InteractionController, _ rect: ScreenRect) -> [InteractionEffect] {
        let point = ScreenPoint(x: rect.x + rect.width / 2, y: rect.y + rect.height / 2)
        _ = controller.handle(.touch(touch(.press, point), recorder: idle), now: now)
        advance(0.05)
        return controller.handle(.touch(touch(.release, point), recorder: idle), now: now)
    }

    func testMediaView_TheLibraryButtonOpensTheDaysAndBackLeaves() {
        var controller = makeController()
        let effects = tap(&controller, .libraryButton)
        XCTAssertEqual(controller.page, .media)
        XCTAssertTrue(effects.contains(.media(.listDays)), "\(effects)")
        XCTAssertTrue(effects.contains(.pageShown(.media)), "\(effects)")
        XCTAssertEqual(effects.first.map { if case .draw = $0 { true } else { false } }, true, "drawn first")
        _ = controller.handle(.media(.days(["20261123", "20261124"])), now: now)
        XCTAssertEqual(media(controller)?.days, ["20261124", "20261123"])
        let back = tapMedia(&controller, media(controller)!.layout.backButton)
        XCTAssertEqual(controller.page, .live)
        XCTAssertNil(media(controller))
        XCTAssertTrue(back.contains(.pageShown(.live)), "\(back)")
    }

    func testMediaView_LockedScreensHaveNoLibrary() {
        var controller = makeController(locked: true)
        XCTAssertEqual(controller.page, .pin)
        // Where the Library pill is on the live screen is nothing (or a key) on the PIN pad.
        _ = tap(&controller, .libraryButton)
        XCTAssertNotEqual(controller.page, .media)
        XCTAssertNil(media(controller))
    }

    func testMediaView_TheScreensaverWaitsWhileTheMediaViewShows() {
        var controller = makeController(idleSeconds: 60)
        _ = tap(&controller, .libraryButton)
        advance(600)
        XCTAssertFalse(tick(&controller).contains(.pageShown(.pin)))
        XCTAssertEqual(controller.page, .media)
        // Left: the idle time starts from the last touch.
        _ = tapMedia(&controller, media(controller)!.layout.backButton)
        advance(59)
        _ = tick(&controller)
        XCTAssertEqual(controller.page, .live)
        advance(2)
        _ = tick(&controller)
        XCTAssertEqual(controller.page, .pin)
    }

    func testMediaView_PlaybackActiveHoldsTheLiveScreenToo() {
        var controller = makeController(idleSeconds: 60)
        var status = ScreenStatus()
        status.playbackActive = true
        _ = controller.handle(.status(status), now: now)
        advance(120)
        _ = tick(&controller)
        XCTAssertEqual(controller.page, .live)
    }

    func testMediaView_TheRecordButtonStillRecordsAndTheBadgeShows() {
        var controller = makeController()
        _ = tap(&controller, .libraryButton)
        let effects = controller.handle(.button(button(.recordToggle), recorder: idle), now: now)
        XCTAssertTrue(effects.contains(.sendRecorderCommand(.toggle(.video))), "\(effects)")
        _ = controller.handle(.recordingStateChanged(.recording), now: now)
        XCTAssertEqual(controller.screen?.model.recordingState, .recording, "the media view draws the REC badge from this")
        XCTAssertEqual(controller.page, .media)
    }

    func testMediaView_PlayingThenLockingStopsThePlayer() {
        var controller = makeController()
        _ = tap(&controller, .libraryButton)
        _ = controller.handle(.media(.days(["20261124"])), now: now)
        _ = tapMedia(&controller, media(controller)!.layout.dayRows[0])
        let item = MediaItem(kind: .video, path: "/m/video/20261124/101500.mp4", time: "10:15:00", seconds: 30, bytes: 1000)
        _ = controller.handle(.media(.day("20261124", [item])), now: now)
        let play = tapMedia(&controller, media(controller)!.layout.cells[0])
        XCTAssertTrue(play.contains(.media(.play(item))), "\(play)")
        let moved = controller.handle(.media(.playback(position: 3, duration: 30, paused: false)), now: now)
        XCTAssertEqual(moved.count, 1, "a redraw for the play head: \(moved)")
        let locked = controller.handle(.lockNow, now: now)
        XCTAssertTrue(locked.contains(.media(.stopPlayback)), "\(locked)")
        XCTAssertEqual(controller.page, .pin)
        // A late answer for the closed view changes nothing.
        XCTAssertEqual(controller.handle(.media(.playback(position: 4, duration: 30, paused: false)), now: now), [])
    }
}
