import KioskCore
import XCTest

/// How lifts are found on panels with quirks. The event streams are modelled on what
/// those drivers send as the kernel passes it on (values that did not change are dropped
/// by the input core, so a still finger sends nothing) — written from the drivers'
/// documented behaviour, not recorded from physical panels.
final class TouchDecoderLiftTests: XCTestCase {
    typealias C = EvdevCode
    typealias Event = (UInt16, UInt16, Int32)

    /// The panels here report in pixels of an 800x480 screen.
    static let ranges = (x: AxisRange(minimum: 0, maximum: 799), y: AxisRange(minimum: 0, maximum: 479))
    static let syn: Event = (C.EV_SYN, C.SYN_REPORT, 0)
    static let mtReport: Event = (C.EV_SYN, C.SYN_MT_REPORT, 0)
    static func abs(_ code: UInt16, _ value: Int32) -> Event { (C.EV_ABS, code, value) }
    static func key(_ code: UInt16, _ value: Int32) -> Event { (C.EV_KEY, code, value) }
    static func timestamp(_ ms: Int64) -> Event { (C.EV_MSC, C.MSC_TIMESTAMP, Int32(truncatingIfNeeded: ms * 1000)) }
    static func ms(_ value: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: value * 1_000_000) }

    /// Frames, each ending in SYN_REPORT, at times in milliseconds.
    struct Trace {
        var frames: [(ms: Int64, events: [Event])] = []
        mutating func frame(_ ms: Int64, _ events: [Event]) { frames.append((ms, events + [TouchDecoderLiftTests.syn])) }
    }

    /// Plays a trace as the daemon does: before each frame arrives, every release that fell
    /// due (`nextDeadline`) has been made by `expire(now:)`; at the end, time runs on to `endMs`.
    func replay(_ trace: Trace, into decoder: inout TouchDecoder, untilMs endMs: Int64) -> [ContactChange] {
        var changes: [ContactChange] = []
        func expire(upTo now: MonotonicInstant) {
            while let due = decoder.nextDeadline, due <= now { changes += decoder.expire(now: due) }
        }
        for frame in trace.frames {
            expire(upTo: Self.ms(frame.ms))
            for (type, code, value) in frame.events {
                changes += decoder.feed(RawInputEvent(type: type, code: code, value: value, time: Self.ms(frame.ms)))
            }
        }
        expire(upTo: Self.ms(endMs))
        return changes
    }

    func summary(_ changes: [ContactChange]) -> [String] {
        changes.filter { $0.phase != .move }.map { "\($0.phase.rawValue) \($0.x),\($0.y) @\($0.time.nanoseconds / 1_000_000)" }
    }

    // MARK: (a) A panel that never reports a lift

    /// A tap as a Goodix driver without lift reporting sends it, protocol B: slot 0 with
    /// the firmware's touch number 0 as tracking ID (never -1, so after the first tap the
    /// kernel drops the unchanged ID), a frame every `interval` ms with the finger's
    /// jitter, then nothing.
    func goodixSlotsTap(_ trace: inout Trace, at start: Int64, x: Int32, y: Int32, frames: Int = 9, interval: Int64 = 10, first: Bool) {
        for n in 0..<frames {
            let jitter = Int32(n % 2)
            var events = [Self.abs(C.ABS_MT_POSITION_X, x + jitter), Self.abs(C.ABS_MT_POSITION_Y, y + jitter),
                          Self.abs(C.ABS_X, x + jitter), Self.abs(C.ABS_Y, y + jitter)]
            if n == 0, first { events = [Self.abs(C.ABS_MT_TRACKING_ID, 0)] + events + [Self.key(C.BTN_TOUCH, 1)] }
            trace.frame(start + Int64(n) * interval, events)
        }
    }

    func testGoodixWithoutLiftTwoTapsAtDifferentPlacesAreTwoPressReleasePairs() {
        var trace = Trace()
        goodixSlotsTap(&trace, at: 1000, x: 200, y: 300, first: true)
        goodixSlotsTap(&trace, at: 2700, x: 600, y: 100, first: false)   // 1.7 s later, elsewhere
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, positionRanges: Self.ranges)
        let changes = replay(trace, into: &decoder, untilMs: 20_000)
        // The first tap is released when the second shows it was a new touch (one silence
        // after its last frame); from then on the panel is known: the second is released
        // one silence (4 report intervals of 10 ms, at least 50 ms) after its last frame.
        XCTAssertEqual(summary(changes), ["press 200,300 @1000", "release 200,300 @1130", "press 600,100 @2700", "release 600,100 @2830"])
        XCTAssertTrue(changes.filter { $0.phase == .release }.allSatisfy(\.synthesized))
        XCTAssertEqual(decoder.liftReporting, .silence)
        XCTAssertEqual(decoder.reportIntervalNanoseconds, 10_000_000)
        XCTAssertEqual(decoder.silenceNanoseconds, 50_000_000)
    }

    func testGoodixWithoutLiftOnceKnownASecondTapOnTheSameSpotIsANewPress() {
        var trace = Trace()
        goodixSlotsTap(&trace, at: 1000, x: 200, y: 300, first: true)
        goodixSlotsTap(&trace, at: 2700, x: 600, y: 100, first: false)
        goodixSlotsTap(&trace, at: 3500, x: 602, y: 101, first: false)   // the same key again
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 20_000)), [
            "press 200,300 @1000", "release 200,300 @1130", "press 600,100 @2700", "release 600,100 @2830",
            "press 602,101 @3500", "release 602,101 @3630",
        ])
    }

    /// The same panel speaking protocol A (the vendor driver's other mode): every frame lists
    /// the contact, but no empty frame and no BTN_TOUCH 0 ever follow.
    func testGoodixWithoutLiftProtocolA() {
        var trace = Trace()
        for (start, x, y) in [(Int64(1000), Int32(200), Int32(300)), (2700, 600, 100)] {
            for n in 0..<9 {
                let jitter = Int32(n % 2)
                trace.frame(start + Int64(n) * 10, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 6), Self.abs(C.ABS_MT_POSITION_X, x + jitter),
                                                    Self.abs(C.ABS_MT_POSITION_Y, y), Self.mtReport]
                            + (start == 1000 && n == 0 ? [Self.key(C.BTN_TOUCH, 1)] : []))
            }
        }
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 20_000)),
                       ["press 200,300 @1000", "release 200,300 @1130", "press 600,100 @2700", "release 600,100 @2830"])
        XCTAssertEqual(decoder.liftReporting, .silence)
    }

    /// Protocol A with the firmware's own tracking IDs: the second touch comes with a new ID
    /// and the first is simply no longer listed — not a lift the device reported.
    func testProtocolAWithoutLiftWithTrackingIDs() {
        var trace = Trace()
        for (start, id, x) in [(Int64(1000), Int32(1), Int32(200)), (2700, 2, 600)] {
            for n in 0..<5 {
                trace.frame(start + Int64(n) * 10, [Self.abs(C.ABS_MT_TRACKING_ID, id), Self.abs(C.ABS_MT_POSITION_X, x + Int32(n % 2)),
                                                    Self.abs(C.ABS_MT_POSITION_Y, 300), Self.mtReport])
            }
        }
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous, positionRanges: Self.ranges)
        let changes = replay(trace, into: &decoder, untilMs: 20_000)
        XCTAssertEqual(summary(changes).map { String($0.prefix { $0 != "@" }) },
                       ["press 200,300 ", "release 200,300 ", "press 600,300 ", "release 600,300 "])
        XCTAssertEqual(decoder.liftReporting, .silence)
        XCTAssertLessThan(changes.last!.time, Self.ms(3000), "the second touch is released after a silence, not 10 s")
    }

    func testSingleTouchWithoutLift() {
        var trace = Trace()
        trace.frame(1000, [Self.key(C.BTN_TOUCH, 1), Self.abs(C.ABS_X, 200), Self.abs(C.ABS_Y, 300)])
        for n in 1..<6 { trace.frame(1000 + Int64(n) * 20, [Self.abs(C.ABS_X, 200 + Int32(n % 2))]) }
        for n in 0..<6 { trace.frame(2700 + Int64(n) * 20, [Self.abs(C.ABS_X, 600 + Int32(n % 2)), Self.abs(C.ABS_Y, 100)]) }
        var decoder = TouchDecoder(touchProtocol: .singleTouch, positionRanges: Self.ranges)
        // 20 ms reports: a silence is 80 ms.
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 20_000)),
                       ["press 200,300 @1000", "release 201,300 @1180", "press 600,100 @2700", "release 601,100 @2880"])
    }

    /// End to end: the PIN pad on a panel that never reports lifts gets every digit, the
    /// first taps included (before the panel has shown what it is), a repeated digit too.
    func testPINPadGetsEveryDigitFromAPanelThatNeverReportsLifts() {
        let layout = ScreenLayout(size: ScreenSize(width: 800, height: 480))
        var settings = Configuration.Lock()
        settings.blankSeconds = nil
        var controller = ScreenController(settings: settings, layout: layout, now: Self.ms(0), startLocked: true)
        func key(_ digit: Int) -> (Int32, Int32) {
            let rect = layout.rect(of: .pinKey(.digit(digit)))!
            return (Int32(rect.x + rect.width / 2), Int32(rect.y + rect.height / 2))
        }
        var trace = Trace()
        var first = true
        for (n, digit) in [1, 5, 5, 9].enumerated() {
            let (x, y) = key(digit)
            goodixSlotsTap(&trace, at: 1000 + Int64(n) * 1700, x: x, y: y, first: first)
            first = false
        }
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, positionRanges: Self.ranges)
        let transform = TouchTransform(xRange: Self.ranges.x, yRange: Self.ranges.y, screen: layout.size)
        var effects: [ScreenEffect] = []
        for change in replay(trace, into: &decoder, untilMs: 20_000) {
            effects += controller.touch(transform.event(change, device: "goodix"))
        }
        XCTAssertEqual(effects.last, .verifyPIN("1559"))
    }

    // MARK: A resting finger on an ordinary panel

    /// An ordinary protocol B panel that reports only changes: a finger rests perfectly
    /// still for 3 s (nothing at all is sent), moves on a little and lifts. It is never
    /// released early — not before the panel has reported any lift, and not after.
    func testRestingFingerOnAnOrdinaryPanelIsNotReleased() {
        var trace = Trace()
        for round in 0..<2 {
            let start = Int64(round) * 10_000 + 1000
            trace.frame(start, [Self.abs(C.ABS_MT_TRACKING_ID, Int32(round + 1)), Self.abs(C.ABS_MT_POSITION_X, 400),
                                Self.abs(C.ABS_MT_POSITION_Y, 240), Self.key(C.BTN_TOUCH, 1)])
            for n in 1..<6 { trace.frame(start + Int64(n) * 10, [Self.abs(C.ABS_MT_POSITION_X, 400 + Int32(n))]) }
            // 3 s still, then it slides on from where it rested, and lifts.
            for n in 0..<5 { trace.frame(start + 3050 + Int64(n) * 10, [Self.abs(C.ABS_MT_POSITION_Y, 241 + Int32(n))]) }
            trace.frame(start + 3100, [Self.abs(C.ABS_MT_TRACKING_ID, -1), Self.key(C.BTN_TOUCH, 0)])
        }
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 30_000)),
                       ["press 400,240 @1000", "release 405,245 @4100", "press 400,240 @11000", "release 405,245 @14100"])
        XCTAssertEqual(decoder.liftReporting, .reported)
    }

    /// Before any lift, a finger resting 3 s is still not released (the panel has not
    /// shown that silences are lifts) — and the stale rule still ends it after 10 s.
    func testUnknownPanelRestingFingerKeepsTheStaleRule() {
        var trace = Trace()
        trace.frame(1000, [Self.abs(C.ABS_MT_TRACKING_ID, 1), Self.abs(C.ABS_MT_POSITION_X, 400), Self.abs(C.ABS_MT_POSITION_Y, 240)])
        for n in 1..<6 { trace.frame(1000 + Int64(n) * 10, [Self.abs(C.ABS_MT_POSITION_X, 400 + Int32(n))]) }
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 4000)), ["press 400,240 @1000"])
        XCTAssertEqual(decoder.nextDeadline, Self.ms(11_050))
        XCTAssertEqual(decoder.liftReporting, .unknown)
    }

    /// A panel that does report lifts but lost one (the contact reappears far away after a
    /// silence): a release and a new press, but the panel is not taken for a silent one.
    func testJumpAfterSilenceOnAnOrdinaryPanelIsANewTouchButNotASilentPanel() {
        var trace = Trace()
        trace.frame(0, [Self.abs(C.ABS_MT_TRACKING_ID, 1), Self.abs(C.ABS_MT_POSITION_X, 10), Self.abs(C.ABS_MT_POSITION_Y, 10)])
        trace.frame(10, [Self.abs(C.ABS_MT_TRACKING_ID, -1)])
        trace.frame(500, [Self.abs(C.ABS_MT_TRACKING_ID, 2), Self.abs(C.ABS_MT_POSITION_X, 100), Self.abs(C.ABS_MT_POSITION_Y, 100)])
        trace.frame(510, [Self.abs(C.ABS_MT_POSITION_X, 101)])
        trace.frame(2000, [Self.abs(C.ABS_MT_POSITION_X, 700)])
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 2, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 5000)),
                       ["press 10,10 @0", "release 10,10 @10", "press 100,100 @500", "release 101,100 @1010", "press 700,100 @2000"])
        XCTAssertEqual(decoder.liftReporting, .reported)
    }

    /// A panel taken for silent that then reports a lift is an ordinary panel again.
    func testALiftEventUndoesTheSilentJudgement() {
        var trace = Trace()
        goodixSlotsTap(&trace, at: 1000, x: 200, y: 300, first: true)
        goodixSlotsTap(&trace, at: 2700, x: 600, y: 100, first: false)
        trace.frame(3000, [Self.abs(C.ABS_MT_TRACKING_ID, 7), Self.abs(C.ABS_MT_POSITION_X, 50)])
        trace.frame(3010, [Self.abs(C.ABS_MT_TRACKING_ID, -1)])
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, positionRanges: Self.ranges)
        _ = replay(trace, into: &decoder, untilMs: 3020)
        XCTAssertEqual(decoder.liftReporting, .reported)
    }

    // MARK: Report interval

    func testReportIntervalIsTheMedianOfDataFrameSpacingsAndBoundsTheSilence() {
        func decoder(interval: Int64, pauses: Bool = false) -> TouchDecoder {
            var trace = Trace()
            trace.frame(0, [Self.abs(C.ABS_MT_TRACKING_ID, 1), Self.abs(C.ABS_MT_POSITION_X, 0), Self.abs(C.ABS_MT_POSITION_Y, 0)])
            var t: Int64 = 0
            for n in 1...20 {
                t += interval + (pauses && n % 5 == 0 ? 400 : 0)
                trace.frame(t, [Self.abs(C.ABS_MT_POSITION_X, Int32(n))])
            }
            var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 2, positionRanges: Self.ranges)
            _ = replay(trace, into: &decoder, untilMs: t)
            return decoder
        }
        XCTAssertNil(TouchDecoder(touchProtocol: .multiTouchSlots).reportIntervalNanoseconds)
        XCTAssertEqual(TouchDecoder(touchProtocol: .multiTouchSlots).silenceNanoseconds, 500_000_000, "unknown interval: the longest")
        XCTAssertEqual(decoder(interval: 8).silenceNanoseconds, 50_000_000, "125 Hz: clamped to 50 ms")
        XCTAssertEqual(decoder(interval: 40).silenceNanoseconds, 160_000_000)
        XCTAssertEqual(decoder(interval: 40, pauses: true).reportIntervalNanoseconds, 40_000_000, "pauses are not the cadence")
        XCTAssertEqual(decoder(interval: 200).silenceNanoseconds, 500_000_000, "5 Hz: clamped to 500 ms")
    }

    // MARK: (b) Protocol A whose lift is a contact of zero size

    func testProtocolATouchMajorZeroIsALift() {
        var trace = Trace()
        for n in 0..<4 {
            trace.frame(Int64(n) * 12, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 9), Self.abs(C.ABS_MT_WIDTH_MAJOR, 9),
                                        Self.abs(C.ABS_MT_POSITION_X, 300 + Int32(n)), Self.abs(C.ABS_MT_POSITION_Y, 200), Self.mtReport])
        }
        // The lift: the same contact again, of size zero. No empty frame, no BTN_TOUCH.
        trace.frame(48, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 0), Self.abs(C.ABS_MT_WIDTH_MAJOR, 0),
                         Self.abs(C.ABS_MT_POSITION_X, 303), Self.abs(C.ABS_MT_POSITION_Y, 200), Self.mtReport])
        // Another tap later.
        trace.frame(900, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 9), Self.abs(C.ABS_MT_WIDTH_MAJOR, 9),
                          Self.abs(C.ABS_MT_POSITION_X, 303), Self.abs(C.ABS_MT_POSITION_Y, 200), Self.mtReport])
        trace.frame(912, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 0), Self.abs(C.ABS_MT_WIDTH_MAJOR, 0),
                          Self.abs(C.ABS_MT_POSITION_X, 303), Self.abs(C.ABS_MT_POSITION_Y, 200), Self.mtReport])
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous, positionRanges: Self.ranges)
        let changes = replay(trace, into: &decoder, untilMs: 20_000)
        XCTAssertEqual(summary(changes), ["press 300,200 @0", "release 303,200 @48", "press 303,200 @900", "release 303,200 @912"])
        XCTAssertFalse(changes.contains(where: \.synthesized), "the device's own lifts, at once")
        XCTAssertEqual(decoder.liftReporting, .reported)
    }

    func testProtocolAZeroSizeLiftsOnlyThatContactAndPressureZeroCountsWithoutATouchSize() {
        var trace = Trace()
        trace.frame(0, [Self.abs(C.ABS_MT_PRESSURE, 40), Self.abs(C.ABS_MT_POSITION_X, 100), Self.abs(C.ABS_MT_POSITION_Y, 100), Self.mtReport,
                        Self.abs(C.ABS_MT_PRESSURE, 50), Self.abs(C.ABS_MT_POSITION_X, 700), Self.abs(C.ABS_MT_POSITION_Y, 400), Self.mtReport])
        trace.frame(10, [Self.abs(C.ABS_MT_PRESSURE, 0), Self.abs(C.ABS_MT_POSITION_X, 100), Self.abs(C.ABS_MT_POSITION_Y, 100), Self.mtReport,
                         Self.abs(C.ABS_MT_PRESSURE, 50), Self.abs(C.ABS_MT_POSITION_X, 701), Self.abs(C.ABS_MT_POSITION_Y, 400), Self.mtReport])
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 20)), ["press 100,100 @0", "press 700,400 @0", "release 100,100 @10"])
        XCTAssertEqual(decoder.activeSlots, [1])
    }

    func testProtocolAWidthZeroWithATouchSizeIsNoLift() {
        // A driver that declares ABS_MT_WIDTH_MAJOR but always sends 0: the touch size decides.
        var trace = Trace()
        trace.frame(0, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 5), Self.abs(C.ABS_MT_WIDTH_MAJOR, 0), Self.abs(C.ABS_MT_POSITION_X, 10),
                        Self.abs(C.ABS_MT_POSITION_Y, 10), Self.mtReport])
        trace.frame(10, [Self.abs(C.ABS_MT_TOUCH_MAJOR, 5), Self.abs(C.ABS_MT_WIDTH_MAJOR, 0), Self.abs(C.ABS_MT_POSITION_X, 12),
                         Self.abs(C.ABS_MT_POSITION_Y, 10), Self.mtReport])
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 20)), ["press 10,10 @0"])
        XCTAssertEqual(decoder.activeSlots, [0])
    }

    // MARK: (c) hid-multitouch: MSC_TIMESTAMP-only frames while the finger rests

    /// hid-multitouch sends a report (and so a frame) at its report rate while a finger is
    /// down; the kernel drops the unchanged slot values, leaving frames of MSC_TIMESTAMP
    /// alone. Here the finger rests for 12 s, then the device falls silent without a lift.
    /// The stale rule counts from the last frame with the contact's data: 10 s after it,
    /// while the timestamp-only frames are still coming.
    func testHIDMultitouchTimestampOnlyFramesDoNotKeepAContactAlive() {
        var trace = Trace()
        trace.frame(1000, [Self.abs(C.ABS_MT_TRACKING_ID, 12), Self.abs(C.ABS_MT_POSITION_X, 300), Self.abs(C.ABS_MT_POSITION_Y, 200),
                           Self.key(C.BTN_TOUCH, 1), Self.key(C.BTN_TOOL_FINGER, 1), Self.abs(C.ABS_X, 300), Self.abs(C.ABS_Y, 200),
                           Self.timestamp(1000)])
        for n in 1...4 { trace.frame(1000 + Int64(n) * 8, [Self.abs(C.ABS_MT_POSITION_X, 300 + Int32(n)), Self.abs(C.ABS_X, 300 + Int32(n)),
                                                           Self.timestamp(1000 + Int64(n) * 8)]) }
        var t: Int64 = 1032
        while t < 13_000 {
            t += 8
            trace.frame(t, [Self.timestamp(t)])
        }
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, staleAfterSeconds: 10, positionRanges: Self.ranges)
        let changes = replay(trace, into: &decoder, untilMs: 30_000)
        XCTAssertEqual(summary(changes), ["press 300,200 @1000", "release 304,200 @11032"])
        XCTAssertTrue(changes.last!.synthesized)
        XCTAssertEqual(decoder.reportIntervalNanoseconds, 8_000_000, "learned from data frames only")
        XCTAssertEqual(decoder.liftReporting, .unknown, "a resting finger is not a silent panel")
        XCTAssertNil(decoder.nextDeadline)
    }

    /// The same panel, the finger resting 2 s (timestamp frames) and the device then silent:
    /// released 10 s after the last data frame, not 10 s after the last timestamp.
    func testHIDMultitouchThenSilenceIsReleasedTenSecondsAfterTheLastData() {
        var trace = Trace()
        trace.frame(0, [Self.abs(C.ABS_MT_TRACKING_ID, 3), Self.abs(C.ABS_MT_POSITION_X, 30), Self.abs(C.ABS_MT_POSITION_Y, 40),
                        Self.key(C.BTN_TOUCH, 1), Self.timestamp(0)])
        for t in stride(from: Int64(8), through: 2000, by: 8) { trace.frame(t, [Self.timestamp(t)]) }
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10, staleAfterSeconds: 10, positionRanges: Self.ranges)
        XCTAssertEqual(summary(replay(trace, into: &decoder, untilMs: 9999)), ["press 30,40 @0"])
        XCTAssertEqual(decoder.nextDeadline, Self.ms(10_000))
        XCTAssertEqual(summary(decoder.expire(now: Self.ms(10_000))), ["release 30,40 @10000"])
    }
}
