import KioskCore
import XCTest
@testable import KioskV4L2

/// Clamping to a device's control range, and the smooth zoom ramp.
final class ControlRampTests: XCTestCase {
    func testClampAndSnap() {
        let zoom = ControlRange(minimum: 100, maximum: 500, step: 1, defaultValue: 100)
        XCTAssertEqual(zoom.clamp(50), 100)
        XCTAssertEqual(zoom.clamp(600), 500)
        XCTAssertEqual(zoom.clamp(250), 250)
        let coarse = ControlRange(minimum: 100, maximum: 500, step: 10)
        XCTAssertEqual(coarse.clamp(154), 150)
        XCTAssertEqual(coarse.clamp(155), 160)   // a tie goes up
        XCTAssertEqual(coarse.clamp(-1_000_000), 100)
        // A range that is not a whole number of steps never passes its maximum.
        let odd = ControlRange(minimum: 0, maximum: 255, step: 2)
        XCTAssertEqual(odd.clamp(255), 254)
        XCTAssertEqual(odd.clamp(1000), 254)
        XCTAssertFalse(odd.contains(255))
        XCTAssertTrue(odd.contains(128))
        // Nonsense from a driver (step 0, min > max) is tamed rather than trapping.
        let broken = ControlRange(minimum: 10, maximum: 0, step: 0)
        XCTAssertEqual(broken.minimum, 0)
        XCTAssertEqual(broken.maximum, 10)
        XCTAssertEqual(broken.clamp(5), 5)
        let negative = ControlRange(minimum: -64, maximum: 64, step: 8)
        XCTAssertEqual(negative.clamp(-3), 0)
        XCTAssertEqual(negative.clamp(-5), -8)
    }

    func testRampGlidesOverHalfASecond() {
        let ramp = ControlRamp(from: 100, to: 400, range: ControlRange(minimum: 100, maximum: 500), duration: 0.5, stepsPerSecond: 30)
        XCTAssertEqual(ramp.steps.count, 15)
        XCTAssertEqual(ramp.values.last, 400)
        XCTAssertEqual(ramp.values.first, 120)
        XCTAssertEqual(ramp.values, ramp.values.sorted())
        XCTAssertEqual(Set(ramp.values).count, ramp.values.count, "no repeated values")
        XCTAssertEqual(ramp.steps.first?.offset ?? 0, 1.0 / 30, accuracy: 1e-9)
        XCTAssertEqual(ramp.steps.last?.offset ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertEqual(ramp.interval, 1.0 / 30, accuracy: 1e-12)
        // Evenly spread: equal increments.
        let increments = zip(ramp.values, ramp.values.dropFirst()).map { $1 - $0 }
        XCTAssertEqual(Set(increments), [20])
        XCTAssertEqual(ramp.value(at: 0), 100)
        XCTAssertEqual(ramp.value(at: 0.25), 240)  // 7 of 15 ticks done
        XCTAssertEqual(ramp.value(at: 0.5), 400)
        XCTAssertEqual(ramp.value(at: 10), 400)
        XCTAssertEqual(ramp.value(at: -1), 100)
    }

    func testRampDownwardsAndClamped() {
        let range = ControlRange(minimum: 100, maximum: 500)
        let down = ControlRamp(from: 500, to: -20, range: range, duration: 0.2, stepsPerSecond: 20)
        XCTAssertEqual(down.target, 100)
        XCTAssertEqual(down.values, [400, 300, 200, 100])
        // A start outside the range (a stale reading) is pulled in.
        XCTAssertEqual(ControlRamp(from: 9999, to: 400, range: range, duration: 0.1, stepsPerSecond: 10).start, 500)
    }

    func testCoarseStepsMoveLessOftenAtTheRightTimes() {
        let range = ControlRange(minimum: 100, maximum: 400, step: 100)
        let ramp = ControlRamp(from: 100, to: 400, range: range, duration: 0.5, stepsPerSecond: 30)
        XCTAssertEqual(ramp.values, [200, 300, 400])
        // Each value comes when the linear ramp passes it (the first at 160 → 200, 0.1 s in).
        XCTAssertEqual(ramp.steps[0].offset, 0.1, accuracy: 1e-9)
        XCTAssertLessThanOrEqual(ramp.steps.last?.offset ?? 1, 0.5)
        XCTAssertEqual(ramp.value(at: 0.05), 100)
        XCTAssertEqual(ramp.value(at: 0.3), 300)
    }

    func testNoRampWhenAlreadyThereAndJumpWithoutDuration() {
        let range = ControlRange(minimum: 0, maximum: 10)
        let none = ControlRamp(from: 5, to: 5, range: range)
        XCTAssertTrue(none.steps.isEmpty)
        XCTAssertEqual(none.value(at: 0), 5)
        let jump = ControlRamp(from: 0, to: 10, range: range, duration: 0)
        XCTAssertEqual(jump.values, [10])
        XCTAssertEqual(jump.steps[0].offset, 0)
        XCTAssertEqual(jump.value(at: 0), 10)
        // A tiny range over a long time: each value once.
        XCTAssertEqual(ControlRamp(from: 0, to: 3, range: range, duration: 1, stepsPerSecond: 30).values, [1, 2, 3])
    }

    func testControlNamesMapToV4L2() {
        XCTAssertEqual(CameraControlName(rawValue: "white_balance"), .whiteBalance)
        XCTAssertEqual(CameraControlName.whiteBalance.description, "white balance")
        XCTAssertEqual(Set(CameraControlName.allCases.map(\.controlID)).count, CameraControlName.allCases.count)
        XCTAssertEqual(CameraControlName.brightness.controlID, 0x0098_0900)       // V4L2_CID_BRIGHTNESS
        XCTAssertEqual(CameraControlName.zoom.controlID, 0x009A_090D)             // V4L2_CID_ZOOM_ABSOLUTE
        XCTAssertEqual(CameraControlName.focus.automaticControlID, 0x009A_090C)   // V4L2_CID_FOCUS_AUTO
        XCTAssertEqual(CameraControlName.exposure.automaticControlID, 0x009A_0901) // V4L2_CID_EXPOSURE_AUTO
        XCTAssertEqual(CameraControlName.whiteBalance.automaticControlID, 0x0098_090C) // V4L2_CID_AUTO_WHITE_BALANCE
        XCTAssertNil(CameraControlName.zoom.automaticControlID)
        XCTAssertNil(CameraControlName.brightness.automaticControlID)
    }
}
