import KioskCore
import XCTest

/// Pinch to zoom and double tap on the preview, from raw touch events of two slots.
final class PinchZoomRecognizerTests: XCTestCase {
    let preview = ScreenRect(x: 0, y: 0, width: 600, height: 480)
    /// A script of touches 16 ms apart unless told, on a recogniser of the 600x480 preview.
    struct Script {
        var recognizer: PinchZoomRecognizer
        var milliseconds: Int64 = 0
        init(maximum: Double = 4) {
            recognizer = PinchZoomRecognizer(maximum: maximum, area: ScreenRect(x: 0, y: 0, width: 600, height: 480))
        }
        mutating func touch(_ phase: TouchPhase, _ slot: Int, _ x: Int, _ y: Int, after: Int64 = 16) -> Double? {
            milliseconds += after
            return recognizer.handle(TouchEvent(phase: phase, point: ScreenPoint(x: x, y: y), slot: slot,
                                                time: MonotonicInstant(nanoseconds: milliseconds * 1_000_000)))
        }
    }

    func testSpreadingTwoFingersZoomsInByTheirRatioAndPinchingZoomsOut() {
        var s = Script()
        XCTAssertNil(s.touch(.press, 0, 200, 240))
        XCTAssertNil(s.touch(.press, 1, 300, 240), "100 px apart: the pinch starts at 1×")
        XCTAssertEqual(s.touch(.move, 1, 400, 240), 2, "200 px apart: 2×")
        XCTAssertEqual(s.touch(.move, 0, 150, 240), 2.5)
        XCTAssertNil(s.touch(.move, 0, 150, 241), "a pixel of jitter asks nothing")
        XCTAssertEqual(s.touch(.move, 1, 600, 240), 4, "clamped to the maximum")
        XCTAssertNil(s.touch(.move, 1, 700, 240), "stays at the maximum")
        XCTAssertNil(s.touch(.release, 1, 700, 240))
        XCTAssertNil(s.touch(.release, 0, 150, 240), "lifting after a pinch is no tap")
        XCTAssertEqual(s.recognizer.zoom, 4)
        // The next pinch starts from 4×: halving the distance gives 2×, and further 1× at least.
        XCTAssertNil(s.touch(.press, 3, 100, 100, after: 500))
        XCTAssertNil(s.touch(.press, 4, 300, 100))
        XCTAssertEqual(s.touch(.move, 4, 200, 100), 2)
        XCTAssertEqual(s.touch(.move, 4, 110, 100), 1, "clamped to 1×")
    }

    func testDoubleTapGoesBackToOne() {
        var s = Script()
        _ = s.touch(.press, 0, 200, 240)
        _ = s.touch(.press, 1, 300, 240)
        XCTAssertEqual(s.touch(.move, 1, 500, 240), 3)
        _ = s.touch(.release, 1, 500, 240)
        _ = s.touch(.release, 0, 200, 240)
        XCTAssertNil(s.touch(.press, 0, 320, 200, after: 400))
        XCTAssertNil(s.touch(.release, 0, 322, 201, after: 80), "one tap")
        XCTAssertNil(s.touch(.press, 0, 330, 210, after: 120))
        XCTAssertEqual(s.touch(.release, 0, 330, 210, after: 80), 1, "the second tap: back to 1×")
        XCTAssertEqual(s.recognizer.zoom, 1)
        // At 1× a double tap asks nothing.
        _ = s.touch(.press, 0, 320, 200, after: 400)
        _ = s.touch(.release, 0, 320, 200, after: 50)
        _ = s.touch(.press, 0, 320, 200, after: 50)
        XCTAssertNil(s.touch(.release, 0, 320, 200, after: 50))
    }

    func testWhatIsNotADoubleTap() {
        var s = Script()
        s.recognizer.zoomChanged(to: 3)
        // Too slow between taps, too long a press, too far apart, a drag: none resets.
        _ = s.touch(.press, 0, 320, 200); _ = s.touch(.release, 0, 320, 200, after: 50)
        _ = s.touch(.press, 0, 320, 200, after: 500); XCTAssertNil(s.touch(.release, 0, 320, 200, after: 50))
        _ = s.touch(.press, 0, 320, 200, after: 100); XCTAssertNil(s.touch(.release, 0, 320, 200, after: 400))
        _ = s.touch(.press, 0, 320, 200, after: 100); _ = s.touch(.release, 0, 320, 200, after: 50)
        _ = s.touch(.press, 0, 420, 200, after: 100); XCTAssertNil(s.touch(.release, 0, 420, 200, after: 50))
        _ = s.touch(.press, 0, 100, 100, after: 100); _ = s.touch(.release, 0, 100, 100, after: 50)
        _ = s.touch(.press, 0, 100, 100, after: 100); _ = s.touch(.move, 0, 160, 100)
        XCTAssertNil(s.touch(.release, 0, 160, 100, after: 50))
        // Taps off the preview (the buttons) never count.
        _ = s.touch(.press, 0, 700, 200, after: 500); _ = s.touch(.release, 0, 700, 200, after: 50)
        _ = s.touch(.press, 0, 700, 200, after: 50); XCTAssertNil(s.touch(.release, 0, 700, 200, after: 50))
        XCTAssertEqual(s.recognizer.zoom, 3)
    }

    func testFingersOffThePreviewAndThirdFingersDoNotPinch() {
        var s = Script()
        _ = s.touch(.press, 0, 700, 240)   // on the buttons
        _ = s.touch(.press, 1, 300, 240)
        XCTAssertNil(s.touch(.move, 1, 100, 240), "one finger on the preview is not a pinch")
        _ = s.touch(.release, 1, 100, 240)
        _ = s.touch(.release, 0, 700, 240)
        // A pinch that began on the preview may spread beyond it; a third finger is ignored.
        _ = s.touch(.press, 0, 500, 240, after: 400)
        _ = s.touch(.press, 1, 550, 240)
        _ = s.touch(.press, 2, 10, 10)
        XCTAssertNil(s.touch(.move, 2, 20, 20))
        XCTAssertEqual(s.touch(.move, 1, 600, 240), 2)
        // Two fingers on the same spot: no division by zero, no pinch until they part.
        var same = Script()
        _ = same.touch(.press, 0, 100, 100)
        _ = same.touch(.press, 1, 100, 100)
        XCTAssertNil(same.touch(.move, 1, 300, 100))
        XCTAssertEqual(PinchZoomRecognizer(maximum: .nan, area: preview).maximum, 1)
        XCTAssertEqual(PinchZoomRecognizer(maximum: 0.5, area: preview).maximum, 1)
    }
}
