import Foundation
import KioskCore
import XCTest
@testable import KioskInput

/// Virtual touch screens of every protocol (uinput) read back through the real kernel
/// evdev path. Needs /dev/uinput and the evdev module: runs in the HIL guest
/// (scripts/hil/scenarios/touch.sh); skipped elsewhere unless KIOSKCAM_HIL_UINPUT=1.
final class TouchHILTests: XCTestCase {
    let screen = ScreenSize(width: 800, height: 480)
    let xRange = AxisRange(minimum: 0, maximum: 4095)
    let yRange = AxisRange(minimum: 0, maximum: 4095)

    override func setUpWithError() throws {
        guard ProcessInfo.processInfo.environment["KIOSKCAM_HIL_UINPUT"] == "1" else {
            throw XCTSkip("needs /dev/uinput and evdev: set KIOSKCAM_HIL_UINPUT=1 (the HIL guest does, scripts/hil/scenarios/touch.sh)")
        }
    }

    /// A panel watching /dev/input for exactly this device (so other tests' devices do not interfere).
    private func panel(for path: String, settings: Configuration.Touch = Configuration.Touch()) -> TouchPanel {
        var settings = settings
        settings.device = .path(path)
        let panel = TouchPanel(settings: settings, screen: screen)
        panel.start()
        return panel
    }

    /// Polls the panel until `count` events arrived or `seconds` passed.
    private func collect(_ panel: TouchPanel, count: Int, seconds: Double = 10) -> [TouchEvent] {
        var events: [TouchEvent] = []
        let deadline = Date().addingTimeInterval(seconds)
        while events.count < count, Date() < deadline {
            var fds = panel.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 100)
            for entry in fds where entry.revents != 0 { events += panel.handleReadable(fd: entry.fd) }
        }
        return events
    }

    private func summary(_ events: [TouchEvent]) -> [String] {
        events.map { "\($0.phase.rawValue) \($0.point.x),\($0.point.y) slot \($0.slot)" }
    }

    // MARK: Each protocol

    func testEveryProtocolDecodesTapsToScreenPixels() throws {
        for proto in TouchProtocol.allCases {
            let device = try UInputTouchscreen(proto, name: "kioskcam-hil-\(proto)", xRange: xRange, yRange: yRange)
            defer { device.close() }
            let path = try device.waitForDevicePath()
            let panel = panel(for: path)
            defer { panel.close() }
            XCTAssertEqual(panel.devices.map(\.touchProtocol), [proto], "\(path) opened as \(proto)")

            // (4095, 0) is the panel's top-right: 799, 0. (2048, 2048) is the middle.
            try device.tap(x: 4095, y: 0)
            try device.press(x: 2048, y: 2048)
            try device.move(x: 1024, y: 4095)
            try device.release()
            let events = collect(panel, count: 5)
            XCTAssertEqual(summary(events), ["press 799,0 slot 0", "release 799,0 slot 0", "press 400,240 slot 0",
                                             "move 200,479 slot 0", "release 200,479 slot 0"], "\(proto)")
            XCTAssertTrue(events.allSatisfy { $0.device == path })
            // Kernel times on the monotonic clock: close to now, in order.
            let now = SystemMonotonic.now()
            for event in events {
                XCTAssertLessThan(abs(now.seconds(since: event.time)), 30, "\(proto): event time \(event.time) vs now \(now)")
            }
            XCTAssertEqual(events.map(\.time), events.map(\.time).sorted())
        }
    }

    func testProtocolBTwoFingersAndRotation() throws {
        let device = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-two-fingers", xRange: AxisRange(minimum: 0, maximum: 799),
                                           yRange: AxisRange(minimum: 0, maximum: 479), slots: 5)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        var settings = Configuration.Touch()
        settings.rotation = .quarter
        settings.device = .path(path)
        // Portrait: the 800x480 panel turned 90° clockwise.
        let panel = TouchPanel(settings: settings, screen: ScreenSize(width: 480, height: 800))
        panel.start()
        defer { panel.close() }
        try device.press(x: 0, y: 0, slot: 0)
        try device.press(x: 799, y: 479, slot: 3)
        try device.move(x: 100, y: 0, slot: 0)
        try device.release(slot: 3)
        try device.release(slot: 0)
        let events = collect(panel, count: 5)
        XCTAssertEqual(summary(events), ["press 0,799 slot 0", "press 479,0 slot 3", "move 0,699 slot 0",
                                         "release 479,0 slot 3", "release 0,699 slot 0"])
        var primary = PrimaryTouchFilter()
        XCTAssertEqual(events.compactMap { primary.filter($0) }.map(\.slot), [0, 0, 0], "the second finger is not primary")
    }

    // MARK: Missing release, lost events

    func testPressWithoutReleaseIsReleasedByTheStaleRule() throws {
        let device = try UInputTouchscreen(.singleTouch, name: "kioskcam-hil-no-release", xRange: xRange, yRange: yRange)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        var settings = Configuration.Touch()
        settings.releaseAfterSeconds = 1
        let panel = panel(for: path, settings: settings)
        defer { panel.close() }
        try device.press(x: 0, y: 4095)
        let pressed = collect(panel, count: 1)
        XCTAssertEqual(summary(pressed), ["press 0,479 slot 0"])
        let deadline = try XCTUnwrap(panel.nextDeadline)
        XCTAssertEqual(deadline.seconds(since: pressed[0].time), 1, accuracy: 0.001)
        XCTAssertEqual(panel.expire(now: pressed[0].time.advanced(byNanoseconds: 500_000_000)), [])
        let released = panel.expire(now: deadline)
        XCTAssertEqual(summary(released), ["release 0,479 slot 0"])
        XCTAssertNil(panel.nextDeadline)
        // The device never released, so BTN_TOUCH stays 1 in the kernel; the next touch
        // comes as a position only — it is a press again.
        try device.move(x: 4095, y: 4095)
        XCTAssertEqual(summary(collect(panel, count: 1)), ["press 799,479 slot 0"])
    }

    func testOverflowingTheKernelBufferResyncs() throws {
        let device = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-overflow", xRange: xRange, yRange: yRange)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        let panel = panel(for: path)
        defer { panel.close() }
        // Thousands of moves without reading: evdev's client buffer overflows (SYN_DROPPED).
        try device.press(x: 0, y: 0, slot: 0)
        try device.press(x: 4095, y: 4095, slot: 1)
        for step in 0..<3000 { try device.move(x: Int32(1 + step % 4000), y: 10, slot: 0) }
        try device.release(slot: 1)
        try device.move(x: 2048, y: 2048, slot: 0)
        // Read until quiet.
        var events: [TouchEvent] = []
        while true {
            let more = collect(panel, count: 1, seconds: 1)
            if more.isEmpty { break }
            events += more
        }
        XCTAssertGreaterThan(panel.resyncCount, 0, "the buffer overflowed and libevdev resynced")
        // evdev dropped what was queued (possibly both presses); the resync reports the
        // device as it is now: slot 0 down at the centre, slot 1 not down.
        let lastOfFirst = try XCTUnwrap(events.last(where: { $0.slot == 0 }), "\(summary(events.filter { $0.phase != .move }))")
        XCTAssertEqual(lastOfFirst.point, ScreenPoint(x: 400, y: 240), "slot 0 ends where the device says")
        XCTAssertNotEqual(lastOfFirst.phase, .release)
        XCTAssertNotEqual(events.last(where: { $0.slot == 1 })?.phase ?? .release, .press, "slot 1 is not left pressed")
        XCTAssertEqual(panel.nextDeadline.map { _ in true }, true, "slot 0 is down")
        // Decoding carries on normally after the resync.
        try device.release(slot: 0)
        XCTAssertEqual(summary(collect(panel, count: 1)), ["release 400,240 slot 0"])
        XCTAssertNil(panel.nextDeadline)
    }

    // MARK: Discovery and hotplug

    func testDiscoveryPrefersTheTouchscreenAndExplainsTheRest() throws {
        let touchpad = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-touchpad", xRange: xRange, yRange: yRange,
                                             direct: false, pointer: true)
        defer { touchpad.close() }
        let single = try UInputTouchscreen(.singleTouch, name: "kioskcam-hil-single", xRange: xRange, yRange: yRange)
        defer { single.close() }
        let multi = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-multi", xRange: xRange, yRange: yRange)
        defer { multi.close() }
        let touchpadPath = try touchpad.waitForDevicePath()
        let multiPath = try multi.waitForDevicePath()
        _ = try single.waitForDevicePath()

        let report = TouchscreenDiscovery.scan()
        XCTAssertEqual(report.best?.path, multiPath, "multi-touch B with INPUT_PROP_DIRECT wins")
        XCTAssertEqual(report.best?.capabilities.name, "kioskcam-hil-multi")
        XCTAssertTrue(report.best?.explanation.contains("multi-touch B, 10 slots, direct input") ?? false, report.best?.explanation ?? "")
        let rejectedTouchpad = try XCTUnwrap(report.rejected.first { $0.path == touchpadPath })
        XCTAssertTrue(rejectedTouchpad.explanation.contains("touchpad"), rejectedTouchpad.explanation)
        XCTAssertTrue(report.touchscreens.contains { $0.capabilities.name == "kioskcam-hil-single" })
    }

    func testHotplugPicksUpANewDeviceAndDropsARemovedOne() throws {
        var notices: [TouchPanel.Notice] = []
        let panel = TouchPanel(settings: Configuration.Touch(), screen: screen)   // touch.device = auto
        panel.onNotice = { notices.append($0) }
        notices += panel.start()
        defer { panel.close() }
        XCTAssertNotNil(panel.hotplugDescriptor)
        let before = Set(panel.devices.map(\.path))

        // Plugged in after the panel started.
        let device = try UInputTouchscreen(.multiTouchAnonymous, name: "kioskcam-hil-hotplug", xRange: xRange, yRange: yRange)
        let path = try device.waitForDevicePath()
        let deadline = Date().addingTimeInterval(10)
        while !panel.devices.contains(where: { $0.path == path }), Date() < deadline {
            _ = collect(panel, count: 1, seconds: 0.2)
        }
        XCTAssertEqual(Set(panel.devices.map(\.path)).subtracting(before), [path], "\(notices)")
        try device.press(x: 4095, y: 4095)
        XCTAssertEqual(summary(collect(panel, count: 1)), ["press 799,479 slot 0"])

        // Unplugged while a finger is down: removed without error, the finger released.
        device.close()
        var events: [TouchEvent] = []
        let gone = Date().addingTimeInterval(10)
        while panel.devices.contains(where: { $0.path == path }), Date() < gone {
            events += collect(panel, count: 1, seconds: 0.2)
        }
        XCTAssertFalse(panel.devices.contains { $0.path == path }, "\(notices)")
        XCTAssertEqual(summary(events), ["release 799,479 slot 0"])
        XCTAssertTrue(notices.contains(.removed(path: path, reason: "unplugged"))
                      || notices.contains(.removed(path: path, reason: "its node disappeared")), "\(notices)")
        XCTAssertFalse(notices.contains { if case .failed = $0 { return true } else { return false } }, "\(notices)")

        // And plugged in again: a new node, picked up again.
        let again = try UInputTouchscreen(.singleTouch, name: "kioskcam-hil-hotplug-2", xRange: xRange, yRange: yRange)
        defer { again.close() }
        let againPath = try again.waitForDevicePath()
        let back = Date().addingTimeInterval(10)
        while !panel.devices.contains(where: { $0.path == againPath }), Date() < back {
            _ = collect(panel, count: 1, seconds: 0.2)
        }
        try again.tap(x: 0, y: 0)
        XCTAssertEqual(summary(collect(panel, count: 2)), ["press 0,0 slot 0", "release 0,0 slot 0"])
    }
}

enum SystemMonotonic {
    static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }
}
