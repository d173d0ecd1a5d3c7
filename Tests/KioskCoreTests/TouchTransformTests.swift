import KioskCore
import XCTest

final class TouchTransformTests: XCTestCase {
    let range4k = AxisRange(minimum: 0, maximum: 4095)

    private func transform(_ rotation: ScreenRotation, screen: ScreenSize, swap: Bool = false, flipX: Bool = false,
                           flipY: Bool = false, calibration: TouchCalibration? = nil) -> TouchTransform {
        TouchTransform(xRange: range4k, yRange: range4k, screen: screen, rotation: rotation, swapAxes: swap,
                       flipX: flipX, flipY: flipY, calibration: calibration)
    }

    func testNoRotationScalesCornersAndCentre() {
        let t = transform(.none, screen: ScreenSize(width: 800, height: 480))
        XCTAssertEqual(t.point(x: 0, y: 0), ScreenPoint(x: 0, y: 0))
        XCTAssertEqual(t.point(x: 4095, y: 4095), ScreenPoint(x: 799, y: 479))
        XCTAssertEqual(t.point(x: 2048, y: 1024), ScreenPoint(x: 400, y: 120))   // 2048/4095*799 = 399.6
        XCTAssertEqual(t.panel, ScreenSize(width: 800, height: 480))
    }

    func testValuesOutsideTheRangeAreClamped() {
        let t = transform(.none, screen: ScreenSize(width: 100, height: 100))
        XCTAssertEqual(t.point(x: -50, y: 9999), ScreenPoint(x: 0, y: 99))
    }

    func testNonZeroMinimumAndAnEmptyRange() {
        let t = TouchTransform(xRange: AxisRange(minimum: 100, maximum: 300), yRange: AxisRange(minimum: 5, maximum: 5),
                               screen: ScreenSize(width: 201, height: 10))
        XCTAssertEqual(t.point(x: 200, y: 5), ScreenPoint(x: 100, y: 0))
    }

    /// An 800x480 panel; the panel's corners as the user sees them after each rotation.
    func testRotationsMoveThePanelCornersWhereTheUserSeesThem() {
        let topLeft: (Int32, Int32) = (0, 0), topRight: (Int32, Int32) = (4095, 0), bottomLeft: (Int32, Int32) = (0, 4095)

        // 90: portrait 480x800, the picture drawn turned a quarter clockwise on the panel
        // (as KioskScreen's PanelMapping draws it): the panel's top-left shows the
        // picture's bottom-left, its top-right the picture's top-left.
        let q = transform(.quarter, screen: ScreenSize(width: 480, height: 800))
        XCTAssertEqual(q.panel, ScreenSize(width: 800, height: 480))
        XCTAssertEqual(q.point(x: topLeft.0, y: topLeft.1), ScreenPoint(x: 0, y: 799))
        XCTAssertEqual(q.point(x: topRight.0, y: topRight.1), ScreenPoint(x: 0, y: 0))
        XCTAssertEqual(q.point(x: bottomLeft.0, y: bottomLeft.1), ScreenPoint(x: 479, y: 799))

        let h = transform(.half, screen: ScreenSize(width: 800, height: 480))
        XCTAssertEqual(h.point(x: topLeft.0, y: topLeft.1), ScreenPoint(x: 799, y: 479))
        XCTAssertEqual(h.point(x: topRight.0, y: topRight.1), ScreenPoint(x: 0, y: 479))

        let t = transform(.threeQuarters, screen: ScreenSize(width: 480, height: 800))
        XCTAssertEqual(t.point(x: topLeft.0, y: topLeft.1), ScreenPoint(x: 479, y: 0))
        XCTAssertEqual(t.point(x: topRight.0, y: topRight.1), ScreenPoint(x: 479, y: 799))
        XCTAssertEqual(t.point(x: bottomLeft.0, y: bottomLeft.1), ScreenPoint(x: 0, y: 0))
    }

    /// The screen's mapping, written out (KioskScreen's PanelMapping.logicalPoint): a touch
    /// on panel pixel p must land on the logical pixel that p shows.
    func testMatchesTheScreensPanelToLogicalMapping() {
        let panel = ScreenSize(width: 800, height: 480)
        for rotation in ScreenRotation.allCases {
            let logical = rotation.swapsAxes ? panel.swapped : panel
            let w = logical.width, h = logical.height
            let t = TouchTransform(xRange: AxisRange(minimum: 0, maximum: 799), yRange: AxisRange(minimum: 0, maximum: 479),
                                   screen: logical, rotation: rotation)
            for p in [ScreenPoint(x: 0, y: 0), ScreenPoint(x: 799, y: 0), ScreenPoint(x: 0, y: 479), ScreenPoint(x: 123, y: 321)] {
                let expected: ScreenPoint
                switch rotation {
                case .none: expected = p
                case .quarter: expected = ScreenPoint(x: p.y, y: h - 1 - p.x)
                case .half: expected = ScreenPoint(x: w - 1 - p.x, y: h - 1 - p.y)
                case .threeQuarters: expected = ScreenPoint(x: w - 1 - p.y, y: p.x)
                }
                XCTAssertEqual(t.point(x: Int32(p.x), y: Int32(p.y)), expected, "\(rotation) \(p)")
            }
        }
    }

    func testFourQuarterTurnsComposeToTheIdentity() {
        // Rotation r then the inverse mapping by hand: every rotation is a bijection of the corners.
        for rotation in ScreenRotation.allCases {
            let screen = rotation.swapsAxes ? ScreenSize(width: 480, height: 800) : ScreenSize(width: 800, height: 480)
            let t = transform(rotation, screen: screen)
            let corners = [(Int32(0), Int32(0)), (4095, 0), (0, 4095), (4095, 4095)].map { t.point(x: $0.0, y: $0.1) }
            XCTAssertEqual(Set(corners), [ScreenPoint(x: 0, y: 0), ScreenPoint(x: screen.width - 1, y: 0),
                                          ScreenPoint(x: 0, y: screen.height - 1), ScreenPoint(x: screen.width - 1, y: screen.height - 1)],
                           "\(rotation)")
        }
    }

    func testFlipsAndSwapApplyBeforeTheRotation() {
        let screen = ScreenSize(width: 800, height: 480)
        XCTAssertEqual(transform(.none, screen: screen, flipX: true).point(x: 0, y: 0), ScreenPoint(x: 799, y: 0))
        XCTAssertEqual(transform(.none, screen: screen, flipY: true).point(x: 0, y: 0), ScreenPoint(x: 0, y: 479))
        // A sensor wired with X and Y exchanged: device Y runs along the panel's width.
        XCTAssertEqual(transform(.none, screen: screen, swap: true).point(x: 4095, y: 0), ScreenPoint(x: 0, y: 479))
        // Swap, then flip X, then a quarter turn.
        let t = transform(.quarter, screen: ScreenSize(width: 480, height: 800), swap: true, flipX: true)
        // device (0, 4095) → swapped (1, 0) → flipped (0, 0) → rotated (0, 1)
        XCTAssertEqual(t.point(x: 0, y: 4095), ScreenPoint(x: 0, y: 799))
    }

    func testCalibrationReplacesTheDeviceRanges() {
        let calibration = TouchCalibration(x: AxisRange(minimum: 200, maximum: 3900), y: AxisRange(minimum: 3950, maximum: 150))
        let t = transform(.none, screen: ScreenSize(width: 371, height: 381), calibration: calibration)
        XCTAssertEqual(t.xRange, calibration.x)
        XCTAssertEqual(t.point(x: 200, y: 3950), ScreenPoint(x: 0, y: 0))   // minimum > maximum: Y runs upwards
        XCTAssertEqual(t.point(x: 3900, y: 150), ScreenPoint(x: 370, y: 380))
        XCTAssertEqual(t.point(x: 2050, y: 2050), ScreenPoint(x: 185, y: 190))
        XCTAssertEqual(t.point(x: 100, y: 4000), ScreenPoint(x: 0, y: 0), "outside the calibrated area clamps to the edge")
    }

    func testSettingsFollowTheScreenRotationUnlessSet() {
        var settings = Configuration.Touch()
        let screen = ScreenSize(width: 480, height: 800)
        XCTAssertEqual(TouchTransform(settings: settings, xRange: range4k, yRange: range4k, screen: screen, screenRotation: .quarter).rotation, .quarter)
        settings.rotation = ScreenRotation.none
        settings.flipY = true
        settings.calibration = TouchCalibration(x: AxisRange(minimum: 1, maximum: 2), y: AxisRange(minimum: 3, maximum: 4))
        let t = TouchTransform(settings: settings, xRange: range4k, yRange: range4k, screen: screen, screenRotation: .quarter)
        XCTAssertEqual(t.rotation, .none)
        XCTAssertTrue(t.flipY)
        XCTAssertEqual(t.yRange, AxisRange(minimum: 3, maximum: 4))
    }

    func testEventCarriesPhaseSlotTimeAndDevice() {
        let t = transform(.none, screen: ScreenSize(width: 800, height: 480))
        let change = ContactChange(phase: .press, slot: 2, x: 4095, y: 0, time: MonotonicInstant(nanoseconds: 42))
        let event = t.event(change, device: "/dev/input/event3")
        XCTAssertEqual(event, TouchEvent(phase: .press, point: ScreenPoint(x: 799, y: 0), slot: 2,
                                         time: MonotonicInstant(nanoseconds: 42), device: "/dev/input/event3"))
    }

    func testPrimaryFilterFollowsTheFirstFingerOnly() {
        func e(_ phase: TouchPhase, _ slot: Int, _ device: String = "a") -> TouchEvent {
            TouchEvent(phase: phase, point: ScreenPoint(x: slot, y: 0), slot: slot, time: MonotonicInstant(nanoseconds: 0), device: device)
        }
        var filter = PrimaryTouchFilter()
        let input = [e(.move, 0), e(.press, 1), e(.press, 0), e(.move, 0), e(.move, 1), e(.press, 0, "b"), e(.release, 1),
                     e(.release, 0), e(.press, 0)]
        let passed = input.compactMap { filter.filter($0) }
        XCTAssertEqual(passed, [e(.press, 1), e(.move, 1), e(.release, 1), e(.press, 0)])
    }
}
