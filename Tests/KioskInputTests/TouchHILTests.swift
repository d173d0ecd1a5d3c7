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

    // MARK: Panels with quirks, replayed with real timing through the kernel
    //
    // The traces are modelled on what these drivers are documented (and their source
    // shows) to send, not recorded from physical panels here. They go through uinput and
    // evdev, so the kernel's own filtering (unchanged values dropped, a frame of nothing
    // dropped) applies, and the panel runs as the daemon's loop runs it.

    typealias RawEvent = (type: UInt16, code: UInt16, value: Int32)
    typealias Frame = (ms: Int64, events: [RawEvent])

    let pixels = (x: AxisRange(minimum: 0, maximum: 799), y: AxisRange(minimum: 0, maximum: 479))

    private static func axis(_ code: UInt16, _ value: Int32) -> RawEvent { (EvdevCode.EV_ABS, code, value) }
    private static func key(_ code: UInt16, _ value: Int32) -> RawEvent { (EvdevCode.EV_KEY, code, value) }
    private static let mtReport: RawEvent = (EvdevCode.EV_SYN, EvdevCode.SYN_MT_REPORT, 0)

    /// Writes each frame (and its SYN_REPORT) at its time, in milliseconds from the start,
    /// while running the panel as the daemon's loop does — poll until the next frame or
    /// release deadline, read, `expire(now:)` — until `untilMs`.
    /// - Returns: The events, with times in milliseconds since the start.
    private func replay(_ frames: [Frame], through device: UInputTouchscreen, panel: TouchPanel,
                        untilMs: Int64) throws -> [(ms: Int64, event: TouchEvent)] {
        let start = SystemMonotonic.now()
        func at(_ ms: Int64) -> MonotonicInstant { start.advanced(byNanoseconds: ms * 1_000_000) }
        var next = 0
        var events: [TouchEvent] = []
        while true {
            while next < frames.count, at(frames[next].ms) <= SystemMonotonic.now() {
                try device.emit(frames[next].events)
                try device.report()
                next += 1
            }
            events += panel.expire(now: SystemMonotonic.now())
            if next == frames.count, at(untilMs) <= SystemMonotonic.now() { break }
            var wake = at(next < frames.count ? frames[next].ms : untilMs)
            if let deadline = panel.nextDeadline { wake = min(wake, deadline) }
            let timeout = Int32(clamping: max(0, (wake.nanoseconds(since: SystemMonotonic.now()) + 999_999) / 1_000_000))
            var fds = panel.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), timeout)
            for entry in fds where entry.revents != 0 { events += panel.handleReadable(fd: entry.fd) }
        }
        return events.map { ($0.time.nanoseconds(since: start) / 1_000_000, $0) }
    }

    /// Press and release lines (moves left out), without times.
    private func taps(_ events: [(ms: Int64, event: TouchEvent)]) -> [String] {
        summary(events.map(\.event).filter { $0.phase != .move })
    }

    /// A tap from a Goodix driver that never reports a lift (vendor kernels): protocol B,
    /// slot 0, the firmware's touch number 0 as tracking ID and never -1, BTN_TOUCH 1 once;
    /// a frame every `interval` ms with the finger's jitter; then nothing at all.
    ///
    /// A real panel reports every 10 ms or so (the unit tests use that); here every 100 ms,
    /// so the silence is 400 ms and a guest that stalls under load (TCG on a busy host)
    /// for less than that cannot split a tap in two.
    private func goodixTap(_ frames: inout [Frame], at start: Int64, x: Int32, y: Int32, count: Int = 5, interval: Int64 = 100) {
        for n in 0..<count {
            let j = Int32(n % 2)
            frames.append((start + Int64(n) * interval, [
                Self.axis(EvdevCode.ABS_MT_SLOT, 0), Self.axis(EvdevCode.ABS_MT_TRACKING_ID, 0),
                Self.axis(EvdevCode.ABS_MT_POSITION_X, x + j), Self.axis(EvdevCode.ABS_MT_POSITION_Y, y + j),
                Self.key(EvdevCode.BTN_TOUCH, 1), Self.axis(EvdevCode.ABS_X, x + j), Self.axis(EvdevCode.ABS_Y, y + j),
            ]))
        }
    }

    /// Two taps 1.7 s apart at different places, then the second key again: three press
    /// and release pairs, each released within a second, and the panel is named silent.
    func testPanelThatNeverReportsALiftGivesEveryTap() throws {
        let device = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-goodix-no-lift", xRange: pixels.x, yRange: pixels.y)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        let panel = panel(for: path)
        defer { panel.close() }
        var notices: [TouchPanel.Notice] = []
        panel.onNotice = { notices.append($0) }
        var frames: [Frame] = []
        goodixTap(&frames, at: 100, x: 200, y: 300)
        goodixTap(&frames, at: 1800, x: 600, y: 100)
        // The same key again, a finger's width off: a frame with exactly the coordinates the
        // kernel already holds would carry nothing, and the kernel would drop it.
        goodixTap(&frames, at: 3000, x: 602, y: 102)
        let events = try replay(frames, through: device, panel: panel, untilMs: 5000)
        XCTAssertEqual(taps(events), ["press 200,300 slot 0", "release 200,300 slot 0", "press 600,100 slot 0",
                                      "release 600,100 slot 0", "press 602,102 slot 0", "release 602,102 slot 0"],
                       "\(events.map { "\($0.ms) \($0.event)" })")
        // The first is released when the second shows the panel's kind; the others once
        // their reports stop (4 report intervals of 100 ms) — none 10 s later.
        let releases = events.filter { $0.event.phase == .release }.map(\.ms)
        XCTAssertEqual(releases.count, 3)
        for (release, lastFrame) in zip(releases, [500, 2200, 3400] as [Int64]) {
            XCTAssertLessThan(release, lastFrame + 1000, "released \(release - lastFrame) ms after the last report")
        }
        XCTAssertTrue(notices.contains { if case .liftReporting(path, .silence, _, _) = $0 { true } else { false } }, "\(notices)")
        print("HIL: \(notices.map(\.description).joined(separator: "; "))")
    }

    /// The daemon's loop was busy (drawing) past a silent panel's deadline while the finger
    /// kept reporting: `expire` reads what waits in the kernel first, so the finger is not
    /// released in the middle of its touch.
    func testExpireReadsWaitingReportsBeforeJudgingASilence() throws {
        let device = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-busy-loop", xRange: pixels.x, yRange: pixels.y)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        let panel = panel(for: path)
        defer { panel.close() }
        // Two taps far apart: the panel shows it lifts by silence (400 ms at 100 ms reports).
        var frames: [Frame] = []
        goodixTap(&frames, at: 100, x: 200, y: 300)
        goodixTap(&frames, at: 1800, x: 600, y: 100)
        XCTAssertEqual(taps(try replay(frames, through: device, panel: panel, untilMs: 2800)).count, 4)
        // A third touch, read at once…
        var touch: [Frame] = []
        goodixTap(&touch, at: 0, x: 400, y: 240, count: 11)
        try device.emit(touch[0].events)
        try device.report()
        XCTAssertEqual(taps(collect(panel, count: 1).map { (0, $0) }), ["press 400,240 slot 0"])
        // …then reported every 100 ms for a second while nothing reads the device.
        for frame in touch.dropFirst() {
            usleep(100_000)
            try device.emit(frame.events)
            try device.report()
        }
        let events = panel.expire(now: SystemMonotonic.now())
        XCTAssertEqual(events.map(\.phase), Array(repeating: .move, count: 10), "\(summary(events))")
        XCTAssertNotNil(panel.nextDeadline, "still down")
    }

    /// The same kind of panel speaking protocol A: no empty frame, no BTN_TOUCH 0, ever.
    func testProtocolAPanelThatNeverReportsALift() throws {
        let device = try UInputTouchscreen(.multiTouchAnonymous, name: "kioskcam-hil-a-no-lift", xRange: pixels.x, yRange: pixels.y,
                                           contactSize: AxisRange(minimum: 0, maximum: 15))
        defer { device.close() }
        let path = try device.waitForDevicePath()
        let panel = panel(for: path)
        defer { panel.close() }
        var frames: [Frame] = []
        for (start, x, y) in [(Int64(100), Int32(200), Int32(300)), (1800, 600, 100)] {
            for n in 0..<5 {   // every 100 ms, as goodixTap
                frames.append((start + Int64(n) * 100, [Self.axis(EvdevCode.ABS_MT_TOUCH_MAJOR, 6), Self.axis(EvdevCode.ABS_MT_POSITION_X, x + Int32(n % 2)),
                                                       Self.axis(EvdevCode.ABS_MT_POSITION_Y, y), Self.mtReport]
                               + (start == 100 && n == 0 ? [Self.key(EvdevCode.BTN_TOUCH, 1)] : [])))
            }
        }
        let events = try replay(frames, through: device, panel: panel, untilMs: 3500)
        XCTAssertEqual(taps(events), ["press 200,300 slot 0", "release 200,300 slot 0", "press 600,100 slot 0", "release 600,100 slot 0"],
                       "\(events.map { "\($0.ms) \($0.event)" })")
        XCTAssertLessThan(events.last?.ms ?? .max, 2200 + 1000, "the second tap is released within a second of its last report")
    }

    /// An ordinary panel reporting only changes: the finger rests perfectly still for 2 s
    /// (nothing is sent), slides on and lifts. It must not be released while it rests.
    func testRestingFingerOnAnOrdinaryPanelIsNotReleased() throws {
        let device = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-resting", xRange: pixels.x, yRange: pixels.y)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        let panel = panel(for: path)
        defer { panel.close() }
        var frames: [Frame] = [(100, [Self.axis(EvdevCode.ABS_MT_SLOT, 0), Self.axis(EvdevCode.ABS_MT_TRACKING_ID, 5),
                                      Self.axis(EvdevCode.ABS_MT_POSITION_X, 400), Self.axis(EvdevCode.ABS_MT_POSITION_Y, 240),
                                      Self.key(EvdevCode.BTN_TOUCH, 1)])]
        for n in 1..<6 { frames.append((100 + Int64(n) * 50, [Self.axis(EvdevCode.ABS_MT_POSITION_X, 400 + Int32(n))])) }
        for n in 0..<5 { frames.append((2400 + Int64(n) * 50, [Self.axis(EvdevCode.ABS_MT_POSITION_Y, 241 + Int32(n))])) }
        frames.append((2700, [Self.axis(EvdevCode.ABS_MT_TRACKING_ID, -1), Self.key(EvdevCode.BTN_TOUCH, 0)]))
        let events = try replay(frames, through: device, panel: panel, untilMs: 3000)
        XCTAssertEqual(taps(events), ["press 400,240 slot 0", "release 405,245 slot 0"], "\(events.map { "\($0.ms) \($0.event)" })")
        XCTAssertGreaterThanOrEqual(events.last?.ms ?? 0, 2700, "released by the device's lift, not before")
    }

    /// An older protocol A driver that ends a touch with a contact of size 0
    /// (ABS_MT_TOUCH_MAJOR 0, ABS_MT_WIDTH_MAJOR 0) instead of an empty frame: the
    /// release comes with that frame.
    func testProtocolAZeroSizeContactIsAReleaseAtOnce() throws {
        let device = try UInputTouchscreen(.multiTouchAnonymous, name: "kioskcam-hil-a-zero-size", xRange: pixels.x, yRange: pixels.y,
                                           contactSize: AxisRange(minimum: 0, maximum: 15))
        defer { device.close() }
        let path = try device.waitForDevicePath()
        let panel = panel(for: path)
        defer { panel.close() }
        func contact(_ size: Int32, _ x: Int32) -> [RawEvent] {
            [Self.axis(EvdevCode.ABS_MT_TOUCH_MAJOR, size), Self.axis(EvdevCode.ABS_MT_WIDTH_MAJOR, size),
             Self.axis(EvdevCode.ABS_MT_POSITION_X, x), Self.axis(EvdevCode.ABS_MT_POSITION_Y, 200), Self.mtReport]
        }
        var frames: [Frame] = [(100, contact(9, 300) + [Self.key(EvdevCode.BTN_TOUCH, 1)])]
        for n in 1..<4 { frames.append((100 + Int64(n) * 20, contact(9, 300 + Int32(n)))) }
        frames.append((200, contact(0, 303)))
        frames.append((800, contact(9, 500)))
        frames.append((820, contact(0, 500)))
        let events = try replay(frames, through: device, panel: panel, untilMs: 1500)
        XCTAssertEqual(taps(events), ["press 300,200 slot 0", "release 303,200 slot 0", "press 500,200 slot 0", "release 500,200 slot 0"],
                       "\(events.map { "\($0.ms) \($0.event)" })")
        let releases = events.filter { $0.event.phase == .release }.map(\.ms)
        XCTAssertEqual(releases.count, 2)
        XCTAssertLessThan(releases.first ?? .max, 800, "the first release comes with its zero-size frame, not 10 s later")
    }

    /// hid-multitouch: a frame at the report rate while a finger is down; once the finger
    /// rests the kernel drops the unchanged slot values and frames of MSC_TIMESTAMP alone
    /// remain; then the device falls silent without a lift. The stale rule (1 s here)
    /// counts from the last frame with the contact's data, timestamps or not.
    func testTimestampOnlyFramesDoNotKeepAContactAlive() throws {
        let device = try UInputTouchscreen(.multiTouchSlots, name: "kioskcam-hil-hid-timestamps", xRange: pixels.x, yRange: pixels.y,
                                           timestamps: true)
        defer { device.close() }
        let path = try device.waitForDevicePath()
        var settings = Configuration.Touch()
        settings.releaseAfterSeconds = 1
        let panel = panel(for: path, settings: settings)
        defer { panel.close() }
        func stamp(_ ms: Int64) -> RawEvent { (EvdevCode.EV_MSC, EvdevCode.MSC_TIMESTAMP, Int32(ms * 1000)) }
        var frames: [Frame] = [(100, [Self.axis(EvdevCode.ABS_MT_SLOT, 0), Self.axis(EvdevCode.ABS_MT_TRACKING_ID, 9),
                                      Self.axis(EvdevCode.ABS_MT_POSITION_X, 300), Self.axis(EvdevCode.ABS_MT_POSITION_Y, 200),
                                      Self.key(EvdevCode.BTN_TOUCH, 1), Self.axis(EvdevCode.ABS_X, 300), Self.axis(EvdevCode.ABS_Y, 200), stamp(100)])]
        for n in 1...4 {
            let ms = 100 + Int64(n) * 20
            frames.append((ms, [Self.axis(EvdevCode.ABS_MT_POSITION_X, 300 + Int32(n)), Self.axis(EvdevCode.ABS_X, 300 + Int32(n)), stamp(ms)]))
        }
        // The finger rests: 2 s of timestamp-only frames, every 20 ms; then silence.
        for ms in stride(from: Int64(200), through: 2200, by: 20) { frames.append((ms, [stamp(ms)])) }
        let events = try replay(frames, through: device, panel: panel, untilMs: 3000)
        XCTAssertEqual(taps(events), ["press 300,200 slot 0", "release 304,200 slot 0"], "\(events.map { "\($0.ms) \($0.event)" })")
        let release = try XCTUnwrap(events.last { $0.event.phase == .release })
        // The last data frame was at 180 ms: due at 1180, while timestamp frames still come.
        XCTAssertLessThan(release.ms, 2000, "released 1 s after the last data, not after the timestamps stop")
        XCTAssertGreaterThanOrEqual(release.ms, 1100)
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
