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
        XCTAssertEqual(error.code, .chipMissing)
        XCTAssertEqual(error.description,
                       "open the chip failed for gpiochip9: No such file or directory (ENOENT). The chips here are: "
                       + "gpiochip0 [pinctrl-bcm2711] (58 lines); gpiochip1 [raspberrypi-exp-gpio] (8 lines). "
                       + "Set buttons.chip to one of their names, labels or paths, or \"auto\".")
        let none = GPIOError(chip: "gpiochip0", operation: .openChip, errno: ENOENT, context: .init(availableChips: []))
        XCTAssertTrue(none.description.contains("no GPIO chips"), none.description)
        XCTAssertTrue(none.description.contains("buttons.chip = \"none\""), none.description)
    }

    func testOffsetOutOfRangeSaysHowManyLines() {
        let error = GPIOError(chip: "gpiochip0", line: "line 8", operation: .findLine, errno: nil,
                              code: .offsetOutOfRange, context: .init(lineCount: 8, setting: "buttons.record_line"))
        XCTAssertEqual(error.description,
                       "find the line failed for gpiochip0 line 8: no such line. gpiochip0 has 8 lines (offsets 0–7); "
                       + "choose one of those for buttons.record_line, or another chip with buttons.chip.")
    }

    func testBusyLineNamesTheConsumer() {
        let error = GPIOError(chip: "gpiochip0", line: "line 17 (GPIO17)", operation: .requestInput, errno: EBUSY,
                              context: .init(consumer: "gpiomon", setting: "buttons.record_line"))
        XCTAssertEqual(error.code, .busy)
        XCTAssertEqual(error.description,
                       "request as a button input (both edges) failed for gpiochip0 line 17 (GPIO17): Device or resource busy (EBUSY). "
                       + "The line is held by \"gpiomon\": stop that program (or the other kioskcam), or choose another line for buttons.record_line.")
    }

    func testPermissionDeniedNamesTheGroupAndTheUdevRule() {
        for code in [EACCES, EPERM] {
            let error = GPIOError(chip: "gpiochip0", operation: .openChip, errno: code)
            XCTAssertEqual(error.code, .permissionDenied)
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
        XCTAssertEqual(error.code, .lineMissing)
        XCTAssertTrue(error.description.contains("named lines include ID_SDA, ID_SCL, GPIO2"), error.description)
        XCTAssertTrue(error.description.contains("gpioinfo gpiochip0"), error.description)
    }

    func testOnAHostWithoutGPIOChips() throws {
        guard GPIOChip.available().isEmpty else { throw XCTSkip("this machine has GPIO chips") }
        XCTAssertThrowsError(try GPIOChip(opening: "gpiochip0")) { error in
            guard let error = error as? GPIOError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .chipMissing)
            XCTAssertTrue(error.description.contains("no GPIO chips"), error.description)
        }
        XCTAssertThrowsError(try GPIOChip(opening: "/dev/null")) { error in
            XCTAssertEqual((error as? GPIOError)?.call, .openChip, "\(error)")
        }
        // "auto" with no chip means no buttons, as a missing camera means the test pattern.
        XCTAssertNil(try ButtonPanel.open(Configuration.Buttons(), now: MonotonicInstant(nanoseconds: 0)))
        var disabled = Configuration.Buttons()
        disabled.chip = .disabled
        XCTAssertNil(try ButtonPanel.open(disabled, now: MonotonicInstant(nanoseconds: 0)))
    }

    /// EBUSY, EACCES and ENOENT keep the code and the hint they had before the device
    /// errors took one shape (`DeviceError`); the errno is named from the one table
    /// instead of "errno 16".
    func testBusyDeniedAndMissingKeepTheirCodeAndHint() {
        let busy = GPIOError(chip: "gpiochip0", line: "line 4", operation: .requestOutput, errno: EBUSY)
        XCTAssertEqual(busy.code, .busy)
        XCTAssertEqual(busy.hint, "Another program holds the line: stop that program (or the other kioskcam), or choose another line.")
        XCTAssertTrue(busy.description.hasPrefix("request as an output failed for gpiochip0 line 4: Device or resource busy (EBUSY). "),
                      busy.description)
        let denied = GPIOError(chip: "gpiochip0", operation: .openChip, errno: EACCES)
        XCTAssertEqual(denied.code, .permissionDenied)
        XCTAssertEqual(denied.hint, "Permission denied: add the user to the `gpio` group (`sudo usermod -aG gpio USER`, then log in again); "
                       + "the udev rule /usr/lib/udev/rules.d/70-kioskcam.rules (from rootfs/) gives that group /dev/gpiochip*.")
        XCTAssertTrue(denied.description.contains("(EACCES)"), denied.description)
        let missing = GPIOError(chip: "gpiochip9", operation: .openChip, errno: ENOENT)
        XCTAssertEqual(missing.code, .chipMissing)
        XCTAssertEqual(missing.hint, "This machine has no GPIO chips (no /dev/gpiochip*). Set buttons.chip = \"none\" to run without buttons.")
        XCTAssertEqual(missing.errno, ENOENT)
        let missingLine = GPIOError(chip: "gpiochip0", line: "line \"X\"", operation: .findLine, errno: ENOENT)
        XCTAssertEqual(missingLine.code, .lineMissing)
        XCTAssertEqual(missingLine.hint, "gpiochip0 names none of its lines: use a line offset (`gpioinfo gpiochip0` lists them).")
        XCTAssertTrue(missingLine.description.hasSuffix(". gpiochip0 names none of its lines: use a line offset (`gpioinfo gpiochip0` lists them)."),
                      "the chip's name keeps its case: \(missingLine.description)")
    }

    /// A configuration mistake is no system call's failure: no errno, the words are the detail.
    func testConfigurationMistakeHasNoErrno() {
        let error = GPIOError(chip: "gpiochip0", line: "line 4", operation: .configure, errno: nil, code: .configuration,
                              context: .init(detail: "buttons.record_line and buttons.led_line both name this line; give each its own line."))
        XCTAssertNil(error.errno)
        XCTAssertEqual(error.description, "check the configuration failed for gpiochip0 line 4: "
                       + "buttons.record_line and buttons.led_line both name this line; give each its own line.")
    }
}
