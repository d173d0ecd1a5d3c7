import KioskCore
import XCTest

/// Pinch and double tap through the whole UI logic: `.setZoom` on the live page only,
/// and the preview's own touches still reach the screen (the record button stays a button).
final class InteractionControllerPinchTests: XCTestCase {
    let layout = ScreenLayout(size: ScreenSize(width: 800, height: 480))
    var milliseconds: Int64 = 1_000

    func controller(locked: Bool) -> InteractionController {
        let now = MonotonicInstant(nanoseconds: milliseconds * 1_000_000)
        let screen = ScreenController(settings: Configuration.Lock(), layout: layout, now: now, startLocked: locked)
        return InteractionController(screen: screen, previewFramesPerSecond: 10, now: now,
                                     pinch: PinchZoomRecognizer(maximum: 4, area: layout.preview))
    }

    func send(_ controller: inout InteractionController, _ phase: TouchPhase, slot: Int, _ x: Int, _ y: Int) -> [Double] {
        milliseconds += 20
        let now = MonotonicInstant(nanoseconds: milliseconds * 1_000_000)
        let event = TouchEvent(phase: phase, point: ScreenPoint(x: x, y: y), slot: slot, time: now, device: "/dev/input/event2")
        return controller.handle(.touch(event, recorder: .idle), now: now).compactMap {
            if case .setZoom(let factor) = $0 { factor } else { nil }
        }
    }

    func pinchOut(_ controller: inout InteractionController) -> [Double] {
        let y = layout.preview.y + layout.preview.height / 2, x = layout.preview.x + layout.preview.width / 2
        var zooms: [Double] = []
        zooms += send(&controller, .press, slot: 0, x - 50, y)
        zooms += send(&controller, .press, slot: 1, x + 50, y)
        zooms += send(&controller, .move, slot: 1, x + 100, y)
        zooms += send(&controller, .move, slot: 0, x - 100, y)
        zooms += send(&controller, .release, slot: 1, x + 100, y)
        zooms += send(&controller, .release, slot: 0, x - 100, y)
        return zooms
    }

    func testAPinchOnTheLivePreviewZoomsAndADoubleTapGoesBack() {
        var live = controller(locked: false)
        XCTAssertEqual(live.page, .live)
        XCTAssertEqual(pinchOut(&live), [1.5, 2])
        let centre = (x: layout.preview.x + 100, y: layout.preview.y + 100)
        milliseconds += 500
        var zooms = send(&live, .press, slot: 0, centre.x, centre.y) + send(&live, .release, slot: 0, centre.x, centre.y)
        zooms += send(&live, .press, slot: 0, centre.x, centre.y) + send(&live, .release, slot: 0, centre.x, centre.y)
        XCTAssertEqual(zooms, [1])
    }

    func testNoZoomWhileThePINScreenShows() {
        var locked = controller(locked: true)
        XCTAssertEqual(locked.page, .pin)
        XCTAssertEqual(pinchOut(&locked), [])
    }

    func testAZoomSetElsewhereIsWhereTheNextPinchStarts() {
        var live = controller(locked: false)
        XCTAssertEqual(live.handle(.zoomChanged(2), now: MonotonicInstant(nanoseconds: milliseconds * 1_000_000)), [],
                       "being told changes nothing on the screen")
        XCTAssertEqual(live.pinch?.zoom, 2)
        XCTAssertEqual(pinchOut(&live), [3, 4], "1.5× and 2× the fingers' distance, from 2×, clamped at 4×")
        _ = live.handle(.zoomChanged(1), now: MonotonicInstant(nanoseconds: milliseconds * 1_000_000))
        XCTAssertEqual(pinchOut(&live), [1.5, 2], "back from 1× once the socket zoomed out")
    }

    func testAZoomSetWhileLockedStillCountsAndIsClamped() {
        var locked = controller(locked: true)
        _ = locked.handle(.zoomChanged(9), now: MonotonicInstant(nanoseconds: milliseconds * 1_000_000))
        XCTAssertEqual(locked.pinch?.zoom, 4, "clamped to the largest zoom")
        _ = locked.handle(.zoomChanged(.nan), now: MonotonicInstant(nanoseconds: milliseconds * 1_000_000))
        XCTAssertEqual(locked.pinch?.zoom, 4, "a number that is none is ignored")
    }
}
