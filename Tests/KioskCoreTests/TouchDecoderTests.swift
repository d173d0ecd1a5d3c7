import KioskCore
import XCTest

/// Recorded event streams, as `evtest` shows them, for each protocol.
final class TouchDecoderTests: XCTestCase {
    typealias C = EvdevCode

    /// A stream builder: events at `ms` milliseconds.
    struct Stream {
        var events: [RawInputEvent] = []
        mutating func at(_ ms: Int64, _ items: [(UInt16, UInt16, Int32)]) {
            for (type, code, value) in items {
                events.append(RawInputEvent(type: type, code: code, value: value, time: MonotonicInstant(nanoseconds: ms * 1_000_000)))
            }
        }
    }

    static func ms(_ value: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: value * 1_000_000) }
    static let syn: (UInt16, UInt16, Int32) = (EvdevCode.EV_SYN, EvdevCode.SYN_REPORT, 0)
    static let mtReport: (UInt16, UInt16, Int32) = (EvdevCode.EV_SYN, EvdevCode.SYN_MT_REPORT, 0)
    static func abs(_ code: UInt16, _ value: Int32) -> (UInt16, UInt16, Int32) { (EvdevCode.EV_ABS, code, value) }
    static func key(_ code: UInt16, _ value: Int32) -> (UInt16, UInt16, Int32) { (EvdevCode.EV_KEY, code, value) }

    private func summary(_ changes: [ContactChange]) -> [String] {
        changes.map { "\($0.phase.rawValue) \($0.slot) \($0.x),\($0.y)" }
    }

    // MARK: Protocol B

    func testProtocolBTwoFingers() {
        var s = Stream()
        // Finger 1 down in slot 0 (the kernel also sends the single-touch emulation).
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 45), Self.abs(C.ABS_MT_POSITION_X, 100), Self.abs(C.ABS_MT_POSITION_Y, 200),
                 Self.key(C.BTN_TOUCH, 1), Self.abs(C.ABS_X, 100), Self.abs(C.ABS_Y, 200), Self.syn])
        // It moves; only X changes (the kernel filters the unchanged Y).
        s.at(10, [Self.abs(C.ABS_MT_POSITION_X, 110), Self.abs(C.ABS_X, 110), Self.syn])
        // Finger 2 down in slot 1.
        s.at(20, [Self.abs(C.ABS_MT_SLOT, 1), Self.abs(C.ABS_MT_TRACKING_ID, 46), Self.abs(C.ABS_MT_POSITION_X, 500),
                  Self.abs(C.ABS_MT_POSITION_Y, 600), Self.syn])
        // Both move in one frame.
        s.at(30, [Self.abs(C.ABS_MT_SLOT, 0), Self.abs(C.ABS_MT_POSITION_Y, 210), Self.abs(C.ABS_MT_SLOT, 1),
                  Self.abs(C.ABS_MT_POSITION_X, 505), Self.syn])
        // Finger 1 lifts; slot 1 is still current, so the device names slot 0 again.
        s.at(40, [Self.abs(C.ABS_MT_SLOT, 0), Self.abs(C.ABS_MT_TRACKING_ID, -1), Self.syn])
        // Finger 2 lifts.
        s.at(50, [Self.abs(C.ABS_MT_SLOT, 1), Self.abs(C.ABS_MT_TRACKING_ID, -1), Self.key(C.BTN_TOUCH, 0), Self.syn])

        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 10)
        let changes = decoder.feed(s.events)
        XCTAssertEqual(summary(changes), [
            "press 0 100,200", "move 0 110,200", "press 1 500,600", "move 0 110,210", "move 1 505,600",
            "release 0 110,210", "release 1 505,600",
        ])
        XCTAssertEqual(changes.map(\.time), [0, 10, 20, 30, 30, 40, 50].map(Self.ms))
        XCTAssertFalse(changes.contains(where: \.synthesized))
        XCTAssertEqual(decoder.activeSlots, [])
        XCTAssertNil(decoder.nextDeadline)
    }

    func testProtocolBNewTrackingIDInTheSameSlotIsReleaseThenPress() {
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 1), Self.abs(C.ABS_MT_POSITION_X, 10), Self.abs(C.ABS_MT_POSITION_Y, 10), Self.syn])
        s.at(5, [Self.abs(C.ABS_MT_TRACKING_ID, 2), Self.abs(C.ABS_MT_POSITION_X, 90), Self.syn])
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 2)
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 10,10", "release 0 10,10", "press 0 90,10"])
    }

    func testProtocolBEventsWithoutSyncReportChangeNothingYet() {
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 2)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 1), Self.abs(C.ABS_MT_POSITION_X, 10)])
        XCTAssertEqual(decoder.feed(s.events), [])
        XCTAssertEqual(summary(decoder.feed(RawInputEvent(type: C.EV_SYN, code: C.SYN_REPORT, value: 0, time: Self.ms(1)))),
                       ["press 0 10,0"])
    }

    func testProtocolBSlotBeyondTheDeviceRangeGrowsAndOutOfBoundsIsIgnored() {
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 1)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_SLOT, 3), Self.abs(C.ABS_MT_TRACKING_ID, 7), Self.abs(C.ABS_MT_POSITION_X, 1), Self.syn])
        s.at(1, [Self.abs(C.ABS_MT_SLOT, 5000), Self.abs(C.ABS_MT_TRACKING_ID, 8), Self.syn])
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 3 1,0"])
    }

    // MARK: Protocol A

    func testProtocolATwoContactsKeepTheirSlotsByNearness() {
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_POSITION_X, 100), Self.abs(C.ABS_MT_POSITION_Y, 100), Self.mtReport,
                 Self.key(C.BTN_TOUCH, 1), Self.syn])
        s.at(10, [Self.abs(C.ABS_MT_POSITION_X, 102), Self.abs(C.ABS_MT_POSITION_Y, 101), Self.mtReport,
                  Self.abs(C.ABS_MT_POSITION_X, 700), Self.abs(C.ABS_MT_POSITION_Y, 400), Self.mtReport, Self.syn])
        // The device lists them in the other order: they keep their slots.
        s.at(20, [Self.abs(C.ABS_MT_POSITION_X, 690), Self.abs(C.ABS_MT_POSITION_Y, 400), Self.mtReport,
                  Self.abs(C.ABS_MT_POSITION_X, 102), Self.abs(C.ABS_MT_POSITION_Y, 101), Self.mtReport, Self.syn])
        // The first lifts.
        s.at(30, [Self.abs(C.ABS_MT_POSITION_X, 690), Self.abs(C.ABS_MT_POSITION_Y, 400), Self.mtReport, Self.syn])
        // Nothing touches: an empty report.
        s.at(40, [Self.mtReport, Self.key(C.BTN_TOUCH, 0), Self.syn])
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous)
        XCTAssertEqual(summary(decoder.feed(s.events)), [
            "press 0 100,100", "move 0 102,101", "press 1 700,400", "move 1 690,400", "release 0 102,101", "release 1 690,400",
        ])
    }

    func testProtocolAWithTrackingIDsAndBTNTouchZeroReleases() {
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 7), Self.abs(C.ABS_MT_POSITION_X, 5), Self.abs(C.ABS_MT_POSITION_Y, 6), Self.mtReport, Self.syn])
        // Same ID far away: a move, not a new contact.
        s.at(10, [Self.abs(C.ABS_MT_TRACKING_ID, 7), Self.abs(C.ABS_MT_POSITION_X, 900), Self.abs(C.ABS_MT_POSITION_Y, 6), Self.mtReport, Self.syn])
        // Some devices end a touch with BTN_TOUCH 0 and no empty report.
        s.at(20, [Self.key(C.BTN_TOUCH, 0), Self.syn])
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous)
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 5,6", "move 0 900,6", "release 0 900,6"])
    }

    func testProtocolAFrameWithoutContactDataChangesNothing() {
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_POSITION_X, 5), Self.abs(C.ABS_MT_POSITION_Y, 6), Self.syn])   // no SYN_MT_REPORT
        s.at(10, [(C.EV_MSC, 5, 1234), Self.syn])   // MSC_TIMESTAMP only
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous)
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 5,6"])
        XCTAssertEqual(decoder.activeSlots, [0])
    }

    // MARK: Single touch

    func testSingleTouchWithBTNTouch() {
        var s = Stream()
        s.at(0, [Self.key(C.BTN_TOUCH, 1), Self.abs(C.ABS_X, 300), Self.abs(C.ABS_Y, 400), Self.abs(C.ABS_PRESSURE, 50), Self.syn])
        s.at(10, [Self.abs(C.ABS_PRESSURE, 60), Self.syn])   // pressure alone: no move
        s.at(20, [Self.abs(C.ABS_Y, 410), Self.syn])
        s.at(30, [Self.key(C.BTN_TOUCH, 0), Self.abs(C.ABS_PRESSURE, 0), Self.syn])
        // Hovering (a position without BTN_TOUCH) is not a touch.
        s.at(40, [Self.abs(C.ABS_X, 1), Self.syn])
        var decoder = TouchDecoder(touchProtocol: .singleTouch)
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 300,400", "move 0 300,410", "release 0 300,410"])
    }

    func testPressureOnlyTouchesAboveTheThreshold() {
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_X, 10), Self.abs(C.ABS_Y, 20), Self.abs(C.ABS_PRESSURE, 3), Self.syn])   // at threshold: no
        s.at(10, [Self.abs(C.ABS_PRESSURE, 200), Self.syn])
        s.at(20, [Self.abs(C.ABS_X, 15), Self.abs(C.ABS_PRESSURE, 180), Self.syn])
        s.at(30, [Self.abs(C.ABS_PRESSURE, 0), Self.syn])
        var decoder = TouchDecoder(touchProtocol: .pressureOnly, pressureThreshold: 3)
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 10,20", "move 0 15,20", "release 0 15,20"])
    }

    func testDecoderFromCapabilities() throws {
        let caps = InputDeviceCapabilities(name: "resistive", keys: [], absoluteAxes: [
            C.ABS_X: AxisRange(minimum: 0, maximum: 4095), C.ABS_Y: AxisRange(minimum: 0, maximum: 4095),
            C.ABS_PRESSURE: AxisRange(minimum: 10, maximum: 255),
        ])
        let decoder = try XCTUnwrap(TouchDecoder(capabilities: caps, staleAfterSeconds: 3))
        XCTAssertEqual(decoder.touchProtocol, .pressureOnly)
        XCTAssertEqual(decoder.pressureThreshold, 10)
        XCTAssertEqual(decoder.staleAfterNanoseconds, 3_000_000_000)
        XCTAssertNil(TouchDecoder(capabilities: InputDeviceCapabilities(name: "keyboard", keys: [30])))
    }

    // MARK: Missing release (stale contacts)

    func testMissingReleaseIsSynthesizedAfterTheStaleTime() {
        var decoder = TouchDecoder(touchProtocol: .singleTouch, staleAfterSeconds: 10)
        var s = Stream()
        s.at(1000, [Self.key(C.BTN_TOUCH, 1), Self.abs(C.ABS_X, 30), Self.abs(C.ABS_Y, 40), Self.syn])
        s.at(2000, [Self.abs(C.ABS_X, 31), Self.syn])
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 30,40", "move 0 31,40"])
        // The deadline follows the last event, not the press.
        XCTAssertEqual(decoder.nextDeadline, Self.ms(12_000))
        XCTAssertEqual(decoder.expire(now: Self.ms(11_999)), [])
        let released = decoder.expire(now: Self.ms(12_500))
        XCTAssertEqual(released, [ContactChange(phase: .release, slot: 0, x: 31, y: 40, time: Self.ms(12_000), synthesized: true)])
        XCTAssertNil(decoder.nextDeadline)
        XCTAssertEqual(decoder.expire(now: Self.ms(60_000)), [], "released once")

        // The device never sent BTN_TOUCH 0, so the kernel will not send BTN_TOUCH 1 again:
        // the next touch arrives as a position only, and is a press.
        var next = Stream()
        next.at(20_000, [Self.abs(C.ABS_X, 500), Self.abs(C.ABS_Y, 60), Self.syn])
        XCTAssertEqual(summary(decoder.feed(next.events)), ["press 0 500,60"])
        // A late real release after that is an ordinary release.
        var late = Stream()
        late.at(20_100, [Self.key(C.BTN_TOUCH, 0), Self.syn])
        XCTAssertEqual(summary(decoder.feed(late.events)), ["release 0 500,60"])
    }

    func testLateReleaseOfAnExpiredContactIsNotReportedTwice() {
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 2, staleAfterSeconds: 1)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 3), Self.abs(C.ABS_MT_POSITION_X, 1), Self.abs(C.ABS_MT_POSITION_Y, 1), Self.syn])
        _ = decoder.feed(s.events)
        XCTAssertEqual(decoder.expire(now: Self.ms(1000)).map(\.phase), [.release])
        // Unrelated frames (the other slot) do not press the expired contact again.
        var other = Stream()
        other.at(1500, [Self.abs(C.ABS_MT_SLOT, 1), Self.abs(C.ABS_MT_TRACKING_ID, 4), Self.abs(C.ABS_MT_POSITION_X, 9), Self.syn])
        XCTAssertEqual(summary(decoder.feed(other.events)), ["press 1 9,0"])
        XCTAssertEqual(decoder.nextDeadline, Self.ms(2500))
        var late = Stream()
        late.at(2000, [Self.abs(C.ABS_MT_SLOT, 0), Self.abs(C.ABS_MT_TRACKING_ID, -1), Self.syn])
        XCTAssertEqual(decoder.feed(late.events), [])
    }

    func testProtocolAStaleContactComesBackWhenFramesResume() {
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous, staleAfterSeconds: 2)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_POSITION_X, 40), Self.abs(C.ABS_MT_POSITION_Y, 50), Self.mtReport, Self.syn])
        _ = decoder.feed(s.events)
        XCTAssertEqual(summary(decoder.expire(now: Self.ms(5000))), ["release 0 40,50"])
        var again = Stream()
        again.at(6000, [Self.abs(C.ABS_MT_POSITION_X, 41), Self.abs(C.ABS_MT_POSITION_Y, 50), Self.mtReport, Self.syn])
        XCTAssertEqual(summary(decoder.feed(again.events)), ["press 0 41,50"])
    }

    func testReleaseAllWhenTheDeviceGoesAway() {
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 2)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 3), Self.abs(C.ABS_MT_POSITION_X, 1), Self.abs(C.ABS_MT_POSITION_Y, 2), Self.syn])
        _ = decoder.feed(s.events)
        let changes = decoder.releaseAll(at: Self.ms(7))
        XCTAssertEqual(changes, [ContactChange(phase: .release, slot: 0, x: 1, y: 2, time: Self.ms(7), synthesized: true)])
        XCTAssertEqual(decoder.activeSlots, [])
    }

    // MARK: SYN_DROPPED

    func testSynDroppedIgnoresTheRestOfTheFrameAndResyncReportsTheDifference() {
        var decoder = TouchDecoder(touchProtocol: .multiTouchSlots, slotCount: 3)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_TRACKING_ID, 10), Self.abs(C.ABS_MT_POSITION_X, 100), Self.abs(C.ABS_MT_POSITION_Y, 100), Self.syn])
        s.at(5, [Self.abs(C.ABS_MT_SLOT, 1), Self.abs(C.ABS_MT_TRACKING_ID, 11), Self.abs(C.ABS_MT_POSITION_X, 300),
                 Self.abs(C.ABS_MT_POSITION_Y, 300), Self.syn])
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 100,100", "press 1 300,300"])

        // The buffer overflowed: the kernel says so, and the frame in flight is garbage.
        var lost = Stream()
        lost.at(10, [(C.EV_SYN, C.SYN_DROPPED, 0), Self.abs(C.ABS_MT_SLOT, 2), Self.abs(C.ABS_MT_TRACKING_ID, 99), Self.syn])
        XCTAssertEqual(decoder.feed(lost.events), [])
        XCTAssertTrue(decoder.needsResync)

        // Meanwhile slot 0 lifted, slot 1 moved and a third finger came down in slot 2.
        let state = TouchDeviceSnapshot(currentSlot: 2, slots: [
            .init(trackingID: -1, x: 100, y: 100), .init(trackingID: 11, x: 320, y: 300), .init(trackingID: 12, x: 50, y: 60),
        ], touching: true)
        let changes = decoder.resync(state: state, time: Self.ms(20))
        XCTAssertEqual(summary(changes), ["release 0 100,100", "move 1 320,300", "press 2 50,60"])
        XCTAssertTrue(changes[0].synthesized)
        XCTAssertFalse(decoder.needsResync)

        // Events continue from the resynced state (slot 2 is current).
        var after = Stream()
        after.at(30, [Self.abs(C.ABS_MT_POSITION_X, 55), Self.syn])
        XCTAssertEqual(summary(decoder.feed(after.events)), ["move 2 55,60"])
    }

    func testSynDroppedWithoutResyncCarriesOnAtTheNextFrame() {
        var decoder = TouchDecoder(touchProtocol: .singleTouch)
        var s = Stream()
        s.at(0, [Self.key(C.BTN_TOUCH, 1), Self.abs(C.ABS_X, 1), Self.abs(C.ABS_Y, 1), Self.syn])
        s.at(5, [Self.abs(C.ABS_X, 2), (C.EV_SYN, C.SYN_DROPPED, 0), Self.abs(C.ABS_X, 3), Self.syn])
        s.at(9, [Self.abs(C.ABS_X, 4), Self.syn])
        XCTAssertEqual(summary(decoder.feed(s.events)), ["press 0 1,1", "move 0 4,1"])
    }

    func testResyncOfSingleTouchAndProtocolA() {
        var single = TouchDecoder(touchProtocol: .singleTouch)
        XCTAssertEqual(summary(single.resync(state: TouchDeviceSnapshot(touching: true, x: 7, y: 8), time: Self.ms(1))), ["press 0 7,8"])
        XCTAssertEqual(single.resync(state: TouchDeviceSnapshot(touching: true, x: 7, y: 8), time: Self.ms(2)), [], "nothing changed")
        XCTAssertEqual(summary(single.resync(state: TouchDeviceSnapshot(touching: false, x: 7, y: 8), time: Self.ms(3))), ["release 0 7,8"])

        var pressure = TouchDecoder(touchProtocol: .pressureOnly, pressureThreshold: 5)
        XCTAssertEqual(summary(pressure.resync(state: TouchDeviceSnapshot(x: 1, y: 2, pressure: 90), time: Self.ms(1))), ["press 0 1,2"])

        var anonymous = TouchDecoder(touchProtocol: .multiTouchAnonymous)
        var s = Stream()
        s.at(0, [Self.abs(C.ABS_MT_POSITION_X, 5), Self.abs(C.ABS_MT_POSITION_Y, 6), Self.mtReport, Self.syn])
        _ = anonymous.feed(s.events)
        XCTAssertEqual(anonymous.resync(state: TouchDeviceSnapshot(touching: true), time: Self.ms(1)), [], "still down: wait for the next frame")
        XCTAssertEqual(summary(anonymous.resync(state: TouchDeviceSnapshot(touching: false), time: Self.ms(2))), ["release 0 5,6"])
    }

    func testEventDescriptionNamesCodes() {
        let event = RawInputEvent(type: C.EV_ABS, code: C.ABS_MT_POSITION_X, value: 400, time: Self.ms(0))
        XCTAssertEqual(event.description, "EV_ABS ABS_MT_POSITION_X 400")
        XCTAssertEqual(RawInputEvent(type: C.EV_KEY, code: 0x1ff, value: 1, time: Self.ms(0)).description, "EV_KEY 0x1ff 1")
    }
}
