import XCTest
@testable import KioskCore

final class ButtonConfigurationTests: XCTestCase {
    private func parse(_ text: String) throws(ConfigurationError) -> Configuration.Buttons {
        try Configuration(toml: text, file: "test.toml").buttons
    }

    func testDefaultsMatchTheDocumentedRaspberryPiWiring() {
        let b = Configuration().buttons
        XCTAssertEqual(b.chip, .automatic)
        XCTAssertEqual(b.record, .init(line: .offset(17), shortPress: .recordToggle, longPress: .none))
        XCTAssertEqual(b.snapshot, .init(line: .offset(27), shortPress: .snapshot, longPress: .none))
        XCTAssertEqual(b.extra.line, nil)
        XCTAssertTrue(b.activeLow)
        XCTAssertEqual(b.bias, .pullUp)
        XCTAssertEqual(b.debounceMilliseconds, 30)
        XCTAssertEqual(b.longPressMilliseconds, 1000)
        XCTAssertEqual(b.statusLED, .offset(22))
        XCTAssertFalse(b.statusLEDActiveLow)
        XCTAssertEqual(b.fittedButtons.map(\.name), ["record", "snapshot"])
    }

    func testEveryKeyApplies() throws {
        let b = try parse("""
            [buttons]
            chip = "/dev/gpiochip4"
            record_line = "GPIO5"
            record_short = "audio"
            record_long = "record"
            snapshot_line = "none"
            snapshot_short = "none"
            snapshot_long = "snapshot"
            extra_line = 0
            extra_short = "snapshot"
            extra_long = "audio"
            active_low = false
            bias = "as-is"
            debounce_ms = 0
            long_press_ms = 2500
            led_line = "none"
            led_active_low = true
            """)
        XCTAssertEqual(b.chip, .named("/dev/gpiochip4"))
        XCTAssertEqual(b.record, .init(line: .name("GPIO5"), shortPress: .audioToggle, longPress: .recordToggle))
        XCTAssertEqual(b.snapshot, .init(line: nil, shortPress: .none, longPress: .snapshot))
        XCTAssertEqual(b.extra, .init(line: .offset(0), shortPress: .snapshot, longPress: .audioToggle))
        XCTAssertFalse(b.activeLow)
        XCTAssertEqual(b.bias, .asIs)
        XCTAssertEqual(b.debounceMilliseconds, 0)
        XCTAssertEqual(b.longPressMilliseconds, 2500)
        XCTAssertNil(b.statusLED)
        XCTAssertTrue(b.statusLEDActiveLow)
        XCTAssertEqual(b.fittedButtons.map(\.name), ["record", "extra"])
        XCTAssertEqual(try parse("[buttons]\nchip = \"none\"\n").chip, .disabled)
        XCTAssertEqual(try parse("[buttons]\nchip = \"pinctrl-bcm2711\"\n").chip, .named("pinctrl-bcm2711"))
        // Every key of the section is covered above.
        XCTAssertEqual(Configuration.knownKeys.filter { $0.hasPrefix("buttons.") }.count, 16)
    }

    func testBadValuesNameTheKeyAndWhatIsAllowed() {
        let cases: [(String, String, String)] = [
            ("record_line = -1", "buttons.record_line", "line offset from 0 to 1023"),
            ("record_line = 2.5", "buttons.record_line", "\"GPIO17\""),
            ("led_line = true", "buttons.led_line", "\"none\""),
            ("record_short = \"toggle\"", "buttons.record_short", "\"record\", \"snapshot\", \"audio\", \"broadcast\", \"none\""),
            ("bias = \"up\"", "buttons.bias", "\"pull-up\", \"pull-down\", \"disable\", \"as-is\""),
            ("debounce_ms = 5000", "buttons.debounce_ms", "0 to 1000"),
            ("long_press_ms = 50", "buttons.long_press_ms", "100 to 10000"),
            ("active_low = \"yes\"", "buttons.active_low", "true or false"),
            ("chip = \"\"", "buttons.chip", "\"auto\""),
        ]
        for (line, key, fragment) in cases {
            do throws(ConfigurationError) {
                _ = try parse("[buttons]\n" + line + "\n")
                XCTFail("\(line) must be rejected")
            } catch {
                XCTAssertEqual(error.key, key)
                XCTAssertEqual(error.line, 2)
                XCTAssertTrue(error.message.contains(fragment), "'\(error.message)' lacks '\(fragment)'")
            }
        }
    }

    func testAutomaticChipPrefersTheRaspberryPiHeader() {
        typealias Chip = (name: String, label: String)
        let pi4: [Chip] = [("gpiochip0", "pinctrl-bcm2711"), ("gpiochip1", "raspberrypi-exp-gpio")]
        XCTAssertEqual(GPIOChipSelector.automaticChoice(from: pi4), "gpiochip0")
        let pi5: [Chip] = [("gpiochip0", "gpio-brcmstb@107d508500"), ("gpiochip1", "gpio-brcmstb@107d517c00"),
                           ("gpiochip4", "pinctrl-rp1")]
        XCTAssertEqual(GPIOChipSelector.automaticChoice(from: pi5), "gpiochip4")
        XCTAssertEqual(GPIOChipSelector.automaticChoice(from: [("gpiochip3", "gpio-sim.0-node0")]), "gpiochip3")
        XCTAssertNil(GPIOChipSelector.automaticChoice(from: []))
    }
}
