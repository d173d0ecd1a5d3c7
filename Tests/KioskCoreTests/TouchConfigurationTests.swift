import KioskCore
import XCTest

final class TouchConfigurationTests: XCTestCase {
    func testDefaults() {
        let touch = Configuration().touch
        XCTAssertEqual(touch.device, .automatic)
        XCTAssertNil(touch.rotation, "follows the screen")
        XCTAssertFalse(touch.swapAxes || touch.flipX || touch.flipY)
        XCTAssertNil(touch.calibration)
        XCTAssertEqual(touch.releaseAfterSeconds, 10)
        for key in ["device", "rotation", "swap_axes", "flip_x", "flip_y", "calibration", "release_after_seconds"] {
            XCTAssertTrue(Configuration.knownKeys.contains("touch." + key), key)
        }
    }

    func testEveryKeyParses() throws {
        let c = try Configuration(toml: """
            [touch]
            device = "/dev/input/by-path/platform-ft5x06-event"
            rotation = 270
            swap_axes = true
            flip_x = true
            flip_y = false
            calibration = [200, 3900, 3950, 150]
            release_after_seconds = 2.5
            """)
        XCTAssertEqual(c.touch.device, .path("/dev/input/by-path/platform-ft5x06-event"))
        XCTAssertEqual(c.touch.rotation, .threeQuarters)
        XCTAssertTrue(c.touch.swapAxes)
        XCTAssertTrue(c.touch.flipX)
        XCTAssertFalse(c.touch.flipY)
        XCTAssertEqual(c.touch.calibration, TouchCalibration(x: AxisRange(minimum: 200, maximum: 3900),
                                                             y: AxisRange(minimum: 3950, maximum: 150)))
        XCTAssertEqual(c.touch.releaseAfterSeconds, 2.5)

        let auto = try Configuration(toml: "[touch]\ndevice = \"none\"\nrotation = \"auto\"\ncalibration = \"auto\"\n")
        XCTAssertEqual(auto.touch.device, .none)
        XCTAssertNil(auto.touch.rotation)
        XCTAssertNil(auto.touch.calibration)
        XCTAssertEqual(Configuration.TouchDeviceSetting.path("/dev/input/event1").description, "/dev/input/event1")
    }

    func testBadValuesNameTheKeyAndWhatIsAllowed() {
        let cases: [(String, String)] = [
            ("device = \"event2\"", "\"auto\", \"none\" or a device"),
            ("rotation = 45", "0, 90, 180 or 270"),
            ("rotation = \"90\"", "0, 90, 180 or 270"),
            ("flip_x = 1", "true or false"),
            ("calibration = [1, 2, 3]", "[min_x, max_x, min_y, max_y]"),
            ("calibration = [5, 5, 0, 10]", "[min_x, max_x, min_y, max_y]"),
            ("calibration = [0, 1.5, 0, 10]", "[min_x, max_x, min_y, max_y]"),
            ("release_after_seconds = 0", "from 1 to 3600"),
        ]
        for (line, allowed) in cases {
            do {
                _ = try Configuration(toml: "[touch]\n" + line, file: "k.toml")
                XCTFail("\(line) was accepted")
            } catch {
                XCTAssertEqual(error.line, 2, line)
                XCTAssertTrue(error.description.contains(allowed), "\(line): \(error)")
                XCTAssertTrue(error.description.contains("touch."), "\(line): \(error)")
            }
        }
    }

    func testCapabilitiesChooseTheProtocolAndTheVerdict() {
        typealias C = EvdevCode
        let r = AxisRange(minimum: 0, maximum: 1023)
        let mtB = InputDeviceCapabilities(name: "ft5x06", properties: [C.INPUT_PROP_DIRECT], keys: [C.BTN_TOUCH],
                                          absoluteAxes: [C.ABS_X: r, C.ABS_Y: r, C.ABS_MT_SLOT: AxisRange(minimum: 0, maximum: 4),
                                                         C.ABS_MT_POSITION_X: AxisRange(minimum: 0, maximum: 799),
                                                         C.ABS_MT_POSITION_Y: AxisRange(minimum: 0, maximum: 479),
                                                         C.ABS_MT_TRACKING_ID: AxisRange(minimum: 0, maximum: 65535)])
        XCTAssertEqual(mtB.touchProtocol, .multiTouchSlots)
        XCTAssertEqual(mtB.slotCount, 5)
        XCTAssertEqual(mtB.positionRanges?.x, AxisRange(minimum: 0, maximum: 799), "the MT axes, not ABS_X")
        XCTAssertEqual(TouchscreenVerdict(mtB), .touchscreen(.multiTouchSlots, score: 140))

        var mtA = mtB
        mtA.absoluteAxes[C.ABS_MT_SLOT] = nil
        XCTAssertEqual(mtA.touchProtocol, .multiTouchAnonymous)
        XCTAssertEqual(mtA.slotCount, 1)

        let single = InputDeviceCapabilities(name: "ads7846", properties: [C.INPUT_PROP_DIRECT], keys: [C.BTN_TOUCH],
                                             absoluteAxes: [C.ABS_X: r, C.ABS_Y: r, C.ABS_PRESSURE: r])
        XCTAssertEqual(single.touchProtocol, .singleTouch)
        XCTAssertEqual(TouchscreenVerdict(single).score, 120)

        // An old resistive driver without INPUT_PROP_DIRECT: accepted, but below any direct device.
        let pressure = InputDeviceCapabilities(name: "old", absoluteAxes: [C.ABS_X: r, C.ABS_Y: r, C.ABS_PRESSURE: r])
        XCTAssertEqual(pressure.touchProtocol, .pressureOnly)
        XCTAssertEqual(TouchscreenVerdict(pressure), .touchscreen(.pressureOnly, score: 10))
        XCTAssertTrue(TouchscreenVerdict(pressure).explanation(pressure).contains("no INPUT_PROP_DIRECT"))
        XCTAssertTrue(TouchscreenVerdict(mtB).explanation(mtB).contains("multi-touch B, 5 slots, direct input"))

        func rejected(_ caps: InputDeviceCapabilities, _ words: String, file: StaticString = #filePath, line: UInt = #line) {
            guard case .rejected(let reason) = TouchscreenVerdict(caps) else {
                return XCTFail("\(caps.name) accepted", file: file, line: line)
            }
            XCTAssertTrue(reason.contains(words), reason, file: file, line: line)
        }
        rejected(InputDeviceCapabilities(name: "kbd", keys: [30, 31]), "keyboard")
        rejected(InputDeviceCapabilities(name: "mouse", keys: [C.BTN_LEFT], hasRelativeAxes: true), "mouse")
        var touchpad = mtB
        touchpad.properties = [C.INPUT_PROP_POINTER]
        rejected(touchpad, "touchpad")
        rejected(InputDeviceCapabilities(name: "QEMU tablet", keys: [C.BTN_LEFT], absoluteAxes: [C.ABS_X: r, C.ABS_Y: r]),
                 "no absolute X/Y position with BTN_TOUCH")
        rejected(InputDeviceCapabilities(name: "vm tablet", keys: [C.BTN_LEFT, C.BTN_TOUCH], absoluteAxes: [C.ABS_X: r, C.ABS_Y: r]),
                 "pointer device")
        rejected(InputDeviceCapabilities(name: "pen", keys: [C.BTN_TOUCH, C.BTN_TOOL_PEN], absoluteAxes: [C.ABS_X: r, C.ABS_Y: r]),
                 "tablet")
        rejected(InputDeviceCapabilities(name: "accel", absoluteAxes: [0x02: r]), "no absolute X/Y")
        rejected(InputDeviceCapabilities(name: "flat", properties: [C.INPUT_PROP_DIRECT], keys: [C.BTN_TOUCH],
                                         absoluteAxes: [C.ABS_X: AxisRange(minimum: 0, maximum: 0), C.ABS_Y: r]), "empty range")
    }
}
