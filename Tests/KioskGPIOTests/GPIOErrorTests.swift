import Glibc
import KioskCore
import XCTest
@testable import KioskGPIO

/// The messages a user sees, built from the errno values the kernel gives; the same
/// messages are checked against the real gpio-sim driver in `GPIOHILTests`.
final class GPIOErrorTests: XCTestCase {
    func testMissingChipListsTheChipsThereAre() {
        let error = GPIOError(chip: "gpiochip9", operation: .openChip, errno: ENOENT,
                              context: .init(availableChips: ["gpiochip0 [pinctrl-bcm2711] (58 lines)",
                                                              "gpiochip1 [raspberrypi-exp-gpio] (8 lines)"]))
        XCTAssertEqual(error.reason, .chipMissing)
        XCTAssertEqual(error.description,
                       "gpiochip9: open the chip failed: No such file or directory (errno 2). The chips here are: "
                       + "gpiochip0 [pinctrl-bcm2711] (58 lines); gpiochip1 [raspberrypi-exp-gpio] (8 lines). "
                       + "Set buttons.chip to one of their names, labels or paths, or \"auto\".")
        let none = GPIOError(chip: "gpiochip0", operation: .openChip, errno: ENOENT, context: .init(availableChips: []))
        XCTAssertTrue(none.description.contains("no GPIO chips"), none.description)
        XCTAssertTrue(none.description.contains("buttons.chip = \"none\""), none.description)
    }

    func testOffsetOutOfRangeSaysHowManyLines() {
        let error = GPIOError(chip: "gpiochip0", line: "line 8", operation: .findLine, errno: EINVAL,
                              reason: .offsetOutOfRange, context: .init(lineCount: 8, setting: "buttons.record_line"))
        XCTAssertEqual(error.description,
                       "gpiochip0 line 8: find the line failed: no such line. gpiochip0 has 8 lines (offsets 0–7); "
                       + "choose one of those for buttons.record_line, or another chip with buttons.chip.")
    }

    func testBusyLineNamesTheConsumer() {
        let error = GPIOError(chip: "gpiochip0", line: "line 17 (GPIO17)", operation: .requestInput, errno: EBUSY,
                              context: .init(consumer: "gpiomon", setting: "buttons.record_line"))
        XCTAssertEqual(error.reason, .busy)
        XCTAssertEqual(error.description,
                       "gpiochip0 line 17 (GPIO17): request as a button input (both edges) failed: Device or resource busy (errno 16). "
                       + "The line is held by \"gpiomon\": stop that program (or the other kioskcam), or choose another line for buttons.record_line.")
    }

    func testPermissionDeniedNamesTheGroupAndTheUdevRule() {
        for code in [EACCES, EPERM] {
            let error = GPIOError(chip: "gpiochip0", operation: .openChip, errno: code)
            XCTAssertEqual(error.reason, .permissionDenied)
            XCTAssertTrue(error.description.contains("`gpio` group"), error.description)
            XCTAssertTrue(error.description.contains("usermod -aG gpio"), error.description)
            XCTAssertTrue(error.description.contains("/usr/lib/udev/rules.d/70-kioskcam.rules"), error.description)
        }
    }

    func testTheUdevRuleNamedInTheMessageIsInTheRootfsAndCoversGPIO() throws {
        let rule = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("rootfs" + GPIOError.udevRule)
        guard FileManager.default.fileExists(atPath: rule.path) else {
            throw XCTSkip("\(rule.path) is not in this checkout yet")
        }
        let text = try String(contentsOf: rule, encoding: .utf8)
        XCTAssertTrue(text.contains("gpiochip"), "the rule must cover /dev/gpiochip*")
        XCTAssertTrue(text.contains("GROUP=\"\(GPIOError.group)\""), "the rule must give the group the message names")
    }

    func testMissingLineNameListsNamedLines() {
        let error = GPIOError(chip: "gpiochip0", line: "line \"GPIO99\"", operation: .findLine, errno: ENOENT,
                              context: .init(lineNames: ["ID_SDA", "ID_SCL", "GPIO2"], setting: "buttons.led_line"))
        XCTAssertEqual(error.reason, .lineMissing)
        XCTAssertTrue(error.description.contains("named lines include ID_SDA, ID_SCL, GPIO2"), error.description)
        XCTAssertTrue(error.description.contains("gpioinfo gpiochip0"), error.description)
    }

    func testOnAHostWithoutGPIOChips() throws {
        guard GPIOChip.available().isEmpty else { throw XCTSkip("this machine has GPIO chips") }
        XCTAssertThrowsError(try GPIOChip(opening: "gpiochip0")) { error in
            guard let error = error as? GPIOError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.reason, .chipMissing)
            XCTAssertTrue(error.description.contains("no GPIO chips"), error.description)
        }
        XCTAssertThrowsError(try GPIOChip(opening: "/dev/null")) { error in
            XCTAssertEqual((error as? GPIOError)?.operation, .openChip, "\(error)")
        }
        // "auto" with no chip means no buttons, as a missing camera means the test pattern.
        XCTAssertNil(try ButtonPanel.open(Configuration.Buttons(), now: MonotonicInstant(nanoseconds: 0)))
        var disabled = Configuration.Buttons()
        disabled.chip = .disabled
        XCTAssertNil(try ButtonPanel.open(disabled, now: MonotonicInstant(nanoseconds: 0)))
    }
}
