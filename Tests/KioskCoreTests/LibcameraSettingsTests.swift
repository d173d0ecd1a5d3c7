import KioskCore
import XCTest

/// `camera.get` and `status` for a libcamera camera, from a stand-in control list (the
/// host has no libcamera camera; the guest's vimc one is checked in the HIL run).
final class LibcameraSettingsTests: XCTestCase {
    /// What vimc-like and Raspberry Pi cameras offer, in libcamera's units.
    let controls: [String: LibcameraControlLimits] = [
        "ExposureTime": LibcameraControlLimits(minimum: 100, maximum: 1_000_000, defaultValue: 20_000),
        "Brightness": LibcameraControlLimits(minimum: -1, maximum: 1, defaultValue: 0),
        "Contrast": LibcameraControlLimits(minimum: 0, maximum: 32, defaultValue: 1),
        "LensPosition": LibcameraControlLimits(minimum: 0, maximum: 15, defaultValue: 1),
    ]

    func testEachSettingShowsItsControlRangeInOurUnitsAndWhatWasAsked() throws {
        let exposure = try XCTUnwrap(LibcameraControlPlan.describe(.exposure, asked: .value(150), controls: controls))
        XCTAssertEqual(exposure["how"], .string("libcamera"))
        XCTAssertEqual(exposure["control"], .string("ExposureTime"))
        XCTAssertEqual(exposure["value"], .integer(150))
        XCTAssertEqual(exposure["minimum"], .integer(1), "100 µs is 1 in exposure's 100 µs unit")
        XCTAssertEqual(exposure["maximum"], .integer(10_000))
        XCTAssertEqual(exposure["default"], .integer(200))

        let brightness = try XCTUnwrap(LibcameraControlPlan.describe(.brightness, asked: nil, controls: controls))
        XCTAssertEqual(brightness["value"], .string("unchanged"))
        XCTAssertEqual(brightness["minimum"], .integer(-100))
        XCTAssertEqual(brightness["maximum"], .integer(100))
        XCTAssertEqual(brightness["unit"], .string("%"))

        let focus = try XCTUnwrap(LibcameraControlPlan.describe(.focus, asked: .automatic, controls: controls))
        XCTAssertEqual(focus["value"], .string("auto"))
        XCTAssertEqual(focus["maximum"], .integer(1500), "15 dioptres in hundredths")
    }

    func testAMissingControlIsNamedAndZoomAndTorchAreLeftToTheCaller() {
        XCTAssertEqual(LibcameraControlPlan.describe(.whiteBalance, asked: .value(5000), controls: controls),
                       ["how": .string("none"), "message": .string("the camera has no ColourTemperature control")])
        XCTAssertNil(LibcameraControlPlan.describe(.zoom, asked: nil, controls: controls))
        XCTAssertNil(LibcameraControlPlan.describe(.torch, asked: nil, controls: controls))
    }

    func testABrokenLimitDoesNotTrap() throws {
        let broken = ["Contrast": LibcameraControlLimits(minimum: -.infinity, maximum: .nan, defaultValue: 1e300)]
        let contrast = try XCTUnwrap(LibcameraControlPlan.describe(.contrast, asked: .value(1e300), controls: broken))
        XCTAssertEqual(contrast["minimum"], .null)
        XCTAssertEqual(contrast["maximum"], .null)
        XCTAssertEqual(contrast["default"], .null)
        XCTAssertEqual(contrast["value"], .integer(1_000_000_000_000_000))
    }

    func testFrameCountersInStatusAndMetrics() throws {
        let frames = CameraFrameCounters(delivered: 900, leased: 850, copied: 50, paced: 12, dropped: 2, corrupt: 1)
        var report = StatusReport(state: .idle)
        report.camera = "libcamera /base/vimc: running"
        report.cameraFrames = frames
        XCTAssertTrue(report.lines.contains(
            "frames:       900 delivered (850 in the camera's buffers, 50 copied), 12 paced out, 2 dropped for want of a buffer, 1 corrupt"),
            report.lines.joined(separator: "\n"))
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        XCTAssertTrue(json.contains("\"camera_frames\":{"), json)
        XCTAssertEqual(try JSONDecoder().decode(StatusReport.self, from: Data(json.utf8)).cameraFrames, frames)

        var snapshot = MetricsSnapshot()
        XCTAssertFalse(MetricsFormatter.text(snapshot).contains("camera_frames_total"), "no camera, no counters")
        snapshot.cameraFrames = frames
        let text = MetricsFormatter.text(snapshot)
        for (outcome, count) in [("delivered", 900), ("leased", 850), ("copied", 50), ("paced", 12), ("dropped", 2), ("corrupt", 1)] {
            XCTAssertTrue(text.contains("kioskcam_camera_frames_total{outcome=\"\(outcome)\"} \(count)\n"), text)
        }
        XCTAssertTrue(text.contains("# TYPE kioskcam_camera_frames_total counter\n"))
    }
}

/// What `kioskcam camera get` prints for each kind of entry.
final class CameraGetLineTests: XCTestCase {
    func testLibcameraV4L2DigitalAndMissingSettingsReadAsSentences() throws {
        let controls = ["ExposureTime": LibcameraControlLimits(minimum: 100, maximum: 1_000_000, defaultValue: 20_000)]
        let exposure = try XCTUnwrap(LibcameraControlPlan.describe(.exposure, asked: .value(150), controls: controls))
        XCTAssertEqual(CameraSettingName.exposure.getLine(exposure),
                       "exposure: 150 (range 1…10000 × 100 µs, default 200), libcamera ExposureTime")
        let balance = try XCTUnwrap(LibcameraControlPlan.describe(.whiteBalance, asked: nil, controls: controls))
        XCTAssertEqual(CameraSettingName.whiteBalance.getLine(balance), "white_balance: the camera has no ColourTemperature control")
        XCTAssertEqual(CameraSettingName.focus.getLine(["how": .string("camera"), "value": .integer(30),
                                                        "minimum": .integer(0), "maximum": .integer(255)]),
                       "focus: 30 (range 0…255), the camera's")
        XCTAssertEqual(CameraSettingName.zoom.getLine(["how": .string("digital"), "value": .number(2), "maximum": .number(4)]),
                       "zoom: 2.00 (up to 4.0×), digital")
        XCTAssertEqual(CameraSettingName.torch.getLine(["how": .string("none")]), "torch: the camera has no torch control")
    }

    func testNumbersFromTheSocketThatFitNoIntegerDoNotTrap() {
        XCTAssertEqual(CameraSettingName.contrast.getLine(["how": .string("camera"), "value": .number(1e300),
                                                           "minimum": .number(-.infinity), "maximum": .number(.nan)]),
                       "contrast: ? (range ?…?), the camera's")
    }
}
