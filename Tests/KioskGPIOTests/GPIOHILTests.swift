import Glibc
import KioskCore
import XCTest
@testable import KioskGPIO

/// The wrapper and the button panel against the kernel's real GPIO character device,
/// on a gpio-sim chip (scripts/hil/scenarios/buttons.sh sets one up in the QEMU guest:
/// 8 lines, line 5 named "KIOSK_REC"). Buttons are "pressed" by switching the simulated
/// pull in sysfs; the LED is read back from sysfs.
///
/// Needs KIOSKCAM_HIL_GPIO_CHIP (e.g. gpiochip0) and KIOSKCAM_HIL_GPIO_SIM (the chip's
/// sysfs folder, /sys/devices/platform/gpio-sim.0/gpiochip0); skipped otherwise.
final class GPIOHILTests: XCTestCase {
    private var chipName = ""
    private var simFolder = ""
    private let clock = KernelMonotonicClock()

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let chip = environment["KIOSKCAM_HIL_GPIO_CHIP"], !chip.isEmpty,
              let sim = environment["KIOSKCAM_HIL_GPIO_SIM"], !sim.isEmpty else {
            throw XCTSkip("set KIOSKCAM_HIL_GPIO_CHIP=gpiochipN and KIOSKCAM_HIL_GPIO_SIM=/sys/devices/platform/gpio-sim.0/gpiochipN to run against gpio-sim (scripts/hil/scenarios/buttons.sh)")
        }
        chipName = chip
        simFolder = sim
    }

    // MARK: Helpers

    /// A configuration with no buttons and no LED on the simulated chip.
    private func bare() -> Configuration.Buttons {
        var c = Configuration.Buttons()
        c.chip = .named(chipName)
        c.record.line = nil
        c.snapshot.line = nil
        c.extra.line = nil
        c.statusLED = nil
        return c
    }

    /// Writes "pull-up" / "pull-down" to one line's simulated pull, at offset 0 each time.
    private final class Pull {
        let fd: Int32
        init(_ path: String) throws {
            fd = open(path, O_WRONLY)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        deinit { close(fd) }
        func set(_ up: Bool) {
            let text = up ? "pull-up" : "pull-down"
            _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        }
    }

    private func pull(_ offset: Int) throws -> Pull { try Pull("\(simFolder)/sim_gpio\(offset)/pull") }

    private func simulatedValue(_ offset: Int) throws -> String {
        try String(contentsOfFile: "\(simFolder)/sim_gpio\(offset)/value", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Everything the panel recognises within `seconds`, waiting in poll.
    private func collect(_ panel: ButtonPanel, seconds: Double) throws -> [ButtonEvent] {
        let end = clock.now().advanced(byNanoseconds: Int64(seconds * 1e9))
        var events: [ButtonEvent] = []
        while clock.now() < end {
            events += try panel.waitForEvents(clock: clock, seconds: end.seconds(since: clock.now()))
        }
        return events
    }

    private func expectError(_ reason: GPIOError.Code, _ fragments: [String], file: StaticString = #filePath,
                             line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("expected a \(reason) error", file: file, line: line)
        } catch let error as GPIOError {
            XCTAssertEqual(error.code, reason, "\(error)", file: file, line: line)
            for fragment in fragments {
                XCTAssertTrue(error.description.contains(fragment), "'\(error)' lacks '\(fragment)'", file: file, line: line)
            }
            print("HIL message: \(error)")
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    // MARK: Buttons

    func testBouncyPressIsExactlyOneShortPress() throws {
        let button = try pull(0)
        button.set(true)  // released (active low, pulled up)
        var c = bare()
        c.record.line = .offset(0)
        let panel = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))
        XCTAssertEqual(panel.fileDescriptors.count, 1)
        XCTAssertFalse(panel.isPressed("record"))

        // A clean press first: exactly one short press too, and it warms up the kernel's
        // event path (TCG translates cold code slowly, which would stretch the first flips).
        button.set(false)
        usleep(100_000)
        button.set(true)
        XCTAssertEqual(try collect(panel, seconds: 0.3).map(\.kind), [.short], "a clean press")
        let cleanEdges = panel.rawEdgeCount

        // A bounce: flips about 1 ms apart (so the kernel sees each), ending on `level`:
        // five of them, or three if the emulator is slow, all within 10 ms.
        func bounce(endingAt level: Bool) -> [Double] {
            button.set(!level)  // a no-op write (the line is there already): wakes the emulated CPU up
            let start = clock.now()
            var flips: [Double] = []
            var value = level
            while true {
                button.set(value)
                flips.append(Double(clock.now().nanoseconds(since: start)) / 1e6)
                if value == level, flips.count >= 5 || (flips.count >= 3 && flips.last! > 5) { return flips }
                value.toggle()
                usleep(1000)
            }
        }
        func text(_ flips: [Double]) -> String { flips.map { String(format: "%.1f", $0) }.joined(separator: " ") }

        // A burst whose flips are all closer together than the debounce time (30 ms) must be
        // exactly one press. Under TCG a write can stall for tens of milliseconds, which makes
        // the burst two real presses instead; so try up to ten times for one whose flips all
        // fit in 10 ms, and check the count on every burst that stayed a bounce.
        func widestGap(_ flips: [Double]) -> Double { zip(flips.dropFirst(), flips).map { $0 - $1 }.max() ?? 0 }
        var fitted = false
        var checked = 0
        for attempt in 1...10 where !fitted {
            let edgesBefore = panel.rawEdgeCount
            let pressFlips = bounce(endingAt: false)
            usleep(300_000)
            let releaseFlips = bounce(endingAt: true)
            let released = clock.now()
            let events = try collect(panel, seconds: 0.6)
            let edges = panel.rawEdgeCount - edgesBefore
            fitted = pressFlips.last! < 10 && releaseFlips.last! < 10
            let isBounce = max(widestGap(pressFlips), widestGap(releaseFlips)) < 25
            print("HIL: bouncy press \(attempt): press flips at ms \(text(pressFlips)); release flips at ms \(text(releaseFlips)); \(edges) raw edges → \(events.count) press\(fitted ? "" : isBounce ? " (a flip stalled past 10 ms)" : " (not a bounce: flips stalled apart by more than the debounce time)")")
            guard isBounce else { continue }
            checked += 1
            XCTAssertEqual(events.map(\.kind), [.short], "one physical press: \(events)")
            XCTAssertEqual(events.first?.action, .recordToggle)
            XCTAssertGreaterThan(edges, 2, "more edges than a clean press (\(cleanEdges)): the bounces reached the debouncer")
            // Kernel timestamps are CLOCK_MONOTONIC: the press is stamped near our own clock.
            if let event = events.first {
                let lag = event.time.seconds(since: released)
                XCTAssertTrue((0..<0.5).contains(lag), "release recognised \(lag) s after the last flip")
            }
        }
        print("HIL: \(checked) bouncy presses checked")
        XCTAssertTrue(fitted, "no attempt flipped the line within 10 ms")
        XCTAssertFalse(panel.isPressed("record"))
    }

    func testLongPressFiresWhileStillHeld() throws {
        let button = try pull(1)
        button.set(true)
        var c = bare()
        c.snapshot = .init(line: .offset(1), shortPress: .snapshot, longPress: .audioToggle)
        c.longPressMilliseconds = 1000
        let panel = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))

        let pressed = clock.now()
        button.set(false)
        var events: [ButtonEvent] = []
        let deadline = pressed.advanced(byNanoseconds: 4_000_000_000)
        while events.isEmpty, clock.now() < deadline {
            events = try panel.waitForEvents(clock: clock, seconds: 0.5)
        }
        let recognised = clock.now()
        XCTAssertEqual(events.map(\.kind), [.long])
        XCTAssertEqual(events.first?.action, .audioToggle)
        XCTAssertEqual(events.first?.button, "snapshot")
        XCTAssertTrue(panel.isPressed("snapshot"), "still held when the long press fired")
        XCTAssertEqual(try simulatedValue(1), "0", "the button was never released")
        let held = recognised.seconds(since: pressed)
        print("HIL: long press recognised \(held) s after pressing")
        XCTAssertGreaterThanOrEqual(held, 1.0)
        XCTAssertLessThan(held, 2.0)

        button.set(true)
        XCTAssertEqual(try collect(panel, seconds: 0.3), [], "the release after a long press reports nothing")
        // A short press afterwards is a short press again.
        button.set(false)
        usleep(100_000)
        button.set(true)
        XCTAssertEqual(try collect(panel, seconds: 0.4).map(\.kind), [.short])
    }

    func testLineByNameAndTwoButtonsAtOnce() throws {
        let rec = try pull(5), snap = try pull(6)
        rec.set(true)
        snap.set(true)
        var c = bare()
        c.record.line = .name("KIOSK_REC")
        c.snapshot.line = .offset(6)
        let panel = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))
        XCTAssertTrue(panel.summary.contains("record: line 5 (KIOSK_REC)"), panel.summary)
        XCTAssertEqual(panel.fileDescriptors.count, 2)
        rec.set(false)
        snap.set(false)
        usleep(100_000)
        snap.set(true)
        usleep(100_000)
        rec.set(true)
        let events = try collect(panel, seconds: 0.5)
        XCTAssertEqual(events.map(\.button), ["snapshot", "record"], "in the order they were released")
        XCTAssertEqual(events.map(\.action), [.snapshot, .recordToggle])
    }

    func testMoreEdgesThanTheKernelQueuesStillEndOnTheRightLevel() throws {
        let button = try pull(7)
        button.set(true)
        var c = bare()
        c.extra = .init(line: .offset(7), shortPress: .snapshot, longPress: .none)
        let panel = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))
        // 41 flips ending pressed, unread: the kernel keeps 16 edges and drops the rest,
        // the final "pressed" among them.
        var level = false
        for _ in 0..<41 {
            button.set(level)
            level.toggle()
            usleep(300)
        }
        usleep(200_000)
        XCTAssertEqual(try collect(panel, seconds: 0.2), [])
        print("HIL: 41 flips → \(panel.rawEdgeCount) raw edges read")
        XCTAssertTrue(panel.isPressed("extra"), "the level was re-read after a full queue")
        button.set(true)
        XCTAssertEqual(try collect(panel, seconds: 0.3).map(\.kind), [.short])
    }

    // MARK: The status LED

    func testLEDFollowsTheRecordingState() throws {
        var c = bare()
        c.chip = .automatic  // the guest's only chip is gpio-sim's
        c.statusLED = .offset(2)
        let panel = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))
        XCTAssertEqual(panel.chip.name, chipName)
        let t0 = clock.now()
        func at(_ ms: Int64) -> MonotonicInstant { t0.advanced(byNanoseconds: ms * 1_000_000) }

        let steps: [(RecordingState, Bool, Int64, String)] = [
            (.idle, false, 0, "0"),
            (.starting, false, 100, "1"),      // a blink starts lit
            (.recording, false, 300, "1"),
            (.stopping, false, 5000, "1"),
            (.idle, false, 5200, "0"),
            (.idle, true, 6000, "1"),          // error: first flash
        ]
        var seen: [String] = []
        for (state, error, ms, expected) in steps {
            try panel.showStatus(state, error: error, now: at(ms))
            let value = try simulatedValue(2)
            seen.append(value)
            XCTAssertEqual(value, expected, "LED after \(state)\(error ? " + error" : "")")
        }
        print("HIL: LED values \(seen.joined(separator: " "))")
        // The blink phases while starting: off after 0.5 s, on again after 1 s; error flashes.
        try panel.showStatus(.starting, error: false, now: at(10_000))
        XCTAssertEqual(panel.nextDeadline(after: at(10_000)), at(10_500))
        _ = try panel.tick(now: at(10_500))
        XCTAssertEqual(try simulatedValue(2), "0")
        _ = try panel.tick(now: at(11_000))
        XCTAssertEqual(try simulatedValue(2), "1")
        try panel.showStatus(.recording, error: true, now: at(20_000))
        for (ms, expected) in [(Int64(20_050), "1"), (20_150, "0"), (20_300, "1"), (20_400, "0"), (20_550, "1"), (21_000, "0")] {
            _ = try panel.tick(now: at(ms))
            XCTAssertEqual(try simulatedValue(2), expected, "error pattern at +\(ms - 20_000) ms")
        }
        try panel.setLED(true)
        XCTAssertEqual(try simulatedValue(2), "1")
    }

    func testActiveLowLEDDrivesTheLineLowWhenOn() throws {
        var c = bare()
        c.statusLED = .offset(3)
        c.statusLEDActiveLow = true
        let panel = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))
        XCTAssertEqual(try simulatedValue(3), "1", "off = high for an active-low LED")
        try panel.showStatus(.recording, error: false, now: clock.now())
        XCTAssertEqual(try simulatedValue(3), "0")
        try panel.showStatus(.idle, error: false, now: clock.now())
        XCTAssertEqual(try simulatedValue(3), "1")
    }

    // MARK: Errors from the real driver

    func testBusyLineNamesTheConsumerKioskcam() throws {
        var c = bare()
        c.record.line = .offset(4)
        let first = try XCTUnwrap(try ButtonPanel.open(c, now: clock.now()))
        XCTAssertEqual(first.chip.consumer(of: .offset(4)), "kioskcam")
        expectError(.busy, ["\(chipName) line 4", "Device or resource busy", "held by \"kioskcam\"", "buttons.record_line"]) {
            _ = try ButtonPanel.open(c, now: clock.now())
        }
        withExtendedLifetime(first) {}
    }

    func testReleasedLinesAreFreeAgain() throws {
        var c = bare()
        c.record.line = .offset(7)
        c.statusLED = .offset(2)
        var panel = try ButtonPanel.open(c, now: clock.now())
        XCTAssertNotNil(panel)
        let chip = try GPIOChip(opening: chipName)
        XCTAssertEqual(chip.consumer(of: .offset(7)), "kioskcam")
        panel = nil
        XCTAssertNil(chip.consumer(of: .offset(7)), "dropping the panel released the line")
        XCTAssertNil(chip.consumer(of: .offset(2)))
        XCTAssertNotNil(try ButtonPanel.open(c, now: clock.now()))
    }

    func testOffsetOutOfRangeSaysHowManyLinesTheChipHas() {
        var c = bare()
        c.snapshot.line = .offset(8)
        expectError(.offsetOutOfRange, ["\(chipName) has 8 lines (offsets 0–7)", "buttons.snapshot_line"]) {
            _ = try ButtonPanel.open(c, now: clock.now())
        }
    }

    func testMissingLineNameListsTheNamedLines() {
        var c = bare()
        c.statusLED = .name("NO_SUCH_LINE")
        expectError(.lineMissing, ["KIOSK_REC", "buttons.led_line"]) {
            _ = try ButtonPanel.open(c, now: clock.now())
        }
    }

    func testMissingChipListsTheChipsThereAre() throws {
        let chip = try GPIOChip(opening: chipName)
        XCTAssertEqual(chip.lineCount, 8)
        XCTAssertTrue(chip.label.hasPrefix("gpio-sim"), chip.label)
        // By label and by path too.
        XCTAssertEqual(try GPIOChip(opening: chip.label).name, chip.name)
        XCTAssertEqual(try GPIOChip(opening: "/dev/" + chip.name).name, chip.name)
        expectError(.chipMissing, ["gpiochip99", "The chips here are: \(chip.name) [\(chip.label)] (8 lines)"]) {
            _ = try GPIOChip(opening: "gpiochip99")
        }
    }

    func testOneLineConfiguredTwiceIsAConfigurationError() {
        var c = bare()
        c.record.line = .offset(0)
        c.statusLED = .offset(0)
        expectError(.configuration, ["buttons.record_line and buttons.led_line both name this line"]) {
            _ = try ButtonPanel.open(c, now: clock.now())
        }
    }
}

/// CLOCK_MONOTONIC, the clock the kernel stamps GPIO events with.
private struct KernelMonotonicClock: MonotonicClock {
    func now() -> MonotonicInstant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicInstant(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }
}
