import XCTest
@testable import KioskCore

/// Debounce and long-press timing, driven by hand: edge timestamps are what the kernel
/// would report, and a `ManualClock` stands in for the poll loop's clock.
final class ButtonPressDetectorTests: XCTestCase {
    private func ms(_ value: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64(value * 1_000_000)) }

    private func detector(debounce: Int = 30, long: Int? = 1000, pressed: Bool = false) -> ButtonPressDetector {
        ButtonPressDetector(debounceMilliseconds: debounce, longPressMilliseconds: long, initiallyPressed: pressed, at: ms(0))
    }

    /// Feeds (level, ms) edges, then runs the timers to `until`, returning every press.
    private func run(_ d: inout ButtonPressDetector, _ edges: [(Bool, Double)], until end: Double) -> [ButtonPress] {
        var presses: [ButtonPress] = []
        for (level, time) in edges { presses += d.edge(isActive: level, at: ms(time)) }
        return presses + d.advance(to: ms(end))
    }

    func testCleanShortPressIsReportedOnceOnRelease() {
        var d = detector()
        XCTAssertEqual(run(&d, [(true, 100)], until: 129.9), [])
        XCTAssertFalse(d.isPressed, "a level counts only after holding for the debounce time")
        XCTAssertEqual(d.advance(to: ms(130)), [])
        XCTAssertTrue(d.isPressed)
        XCTAssertEqual(d.edge(isActive: false, at: ms(300)), [], "a short press reports on release, once settled")
        XCTAssertEqual(d.advance(to: ms(330)), [ButtonPress(kind: .short, time: ms(330))])
        XCTAssertFalse(d.isPressed)
        XCTAssertNil(d.nextDeadline)
        XCTAssertEqual(d.advance(to: ms(5000)), [])
    }

    func testBouncesWithinTenMillisecondsAreOnePress() {
        var d = detector()
        // Press: five flips within 8 ms, held; release: four flips within 6 ms.
        let bouncy: [(Bool, Double)] = [(true, 100), (false, 101.5), (true, 103), (false, 105), (true, 108),
                                        (false, 400), (true, 401), (false, 403), (true, 404), (false, 406)]
        let presses = run(&d, bouncy, until: 2000)
        XCTAssertEqual(presses, [ButtonPress(kind: .short, time: ms(436))])
    }

    func testSameLevelTwiceMeansAnUnseenGlitchAndRestartsTheTimer() {
        // The kernel reads the level when it handles the interrupt, so fast bounces can
        // arrive as rising, rising, rising.
        var d = detector()
        XCTAssertEqual(run(&d, [(true, 100), (true, 110), (true, 125)], until: 154), [])
        XCTAssertFalse(d.isPressed, "the last edge at 125 ms restarted the 30 ms timer")
        XCTAssertEqual(d.advance(to: ms(155)), [])
        XCTAssertTrue(d.isPressed)
    }

    func testGlitchShorterThanDebounceIsIgnored() {
        var d = detector()
        XCTAssertEqual(run(&d, [(true, 100), (false, 110)], until: 1000), [])
        XCTAssertFalse(d.isPressed)
        // A blip while held does not end the press either.
        XCTAssertEqual(run(&d, [(true, 2000), (false, 2100), (true, 2110)], until: 2200), [])
        XCTAssertTrue(d.isPressed)
        XCTAssertEqual(run(&d, [(false, 2300)], until: 2400), [ButtonPress(kind: .short, time: ms(2330))])
    }

    func testLongPressFiresWhileStillHeldAndReleaseReportsNothing() {
        var d = detector()
        XCTAssertEqual(run(&d, [(true, 100), (false, 102), (true, 104)], until: 1099), [])
        // The press began at the burst's first edge (100 ms): long at 1100 ms.
        XCTAssertEqual(d.nextDeadline, ms(1100))
        XCTAssertEqual(d.advance(to: ms(1100)), [ButtonPress(kind: .long, time: ms(1100))])
        XCTAssertTrue(d.isPressed, "long fires without releasing")
        XCTAssertNil(d.nextDeadline)
        XCTAssertEqual(run(&d, [(false, 3000)], until: 4000), [], "the release after a long press reports nothing")
        // And the next press is classified afresh.
        XCTAssertEqual(run(&d, [(true, 5000), (false, 5200)], until: 6000), [ButtonPress(kind: .short, time: ms(5230))])
    }

    func testReleaseJustBeforeTheThresholdIsShortEvenIfItSettlesAfter() {
        var d = detector()
        // Released at 1090 ms (< 1100), bouncing until 1095: settles at 1125, past the threshold.
        let presses = run(&d, [(true, 100), (false, 1090), (true, 1092), (false, 1095)], until: 3000)
        XCTAssertEqual(presses, [ButtonPress(kind: .short, time: ms(1125))])
    }

    func testEdgesHandedInLateAreProcessedInTimeOrder() {
        // The poll loop may read a long-queued edge after its timers ran: an edge stamped
        // before the cursor counts at the cursor, never earlier.
        var d = detector()
        _ = d.edge(isActive: true, at: ms(100))
        XCTAssertEqual(d.advance(to: ms(500)), [])
        XCTAssertEqual(d.edge(isActive: false, at: ms(450)), [])
        XCTAssertEqual(d.advance(to: ms(600)), [ButtonPress(kind: .short, time: ms(530))])
    }

    func testWithoutLongPressEveryPressIsShortHoweverLong() {
        var d = detector(long: nil)
        XCTAssertEqual(run(&d, [(true, 0.5)], until: 10_000), [])
        XCTAssertNil(d.nextDeadline, "nothing to wake up for while held")
        XCTAssertEqual(run(&d, [(false, 10_000)], until: 10_030), [ButtonPress(kind: .short, time: ms(10_030))])
    }

    func testZeroDebounceCountsEveryEdge() {
        var d = detector(debounce: 0)
        XCTAssertEqual(run(&d, [(true, 10), (false, 11), (true, 12), (false, 13)], until: 13),
                       [ButtonPress(kind: .short, time: ms(11)), ButtonPress(kind: .short, time: ms(13))])
    }

    func testButtonHeldAtStartUpReportsNothingUntilReleasedAndPressedAgain() {
        var d = detector(pressed: true)
        XCTAssertTrue(d.isPressed)
        XCTAssertNil(d.nextDeadline, "no long press for a button held through start-up")
        XCTAssertEqual(run(&d, [(false, 3000)], until: 4000), [])
        XCTAssertEqual(run(&d, [(true, 5000), (false, 5100)], until: 6000), [ButtonPress(kind: .short, time: ms(5130))])
    }

    func testNextDeadlineDrivesAPollLoopWithAManualClock() {
        // A poll loop: sleep until nextDeadline (or the next edge), then advance.
        let clock = ManualClock(ms(0))
        var d = detector(long: 1000)
        var presses: [ButtonPress] = []
        var wakeUps = 0
        let edges: [(Bool, Double)] = [(true, 50), (false, 51), (true, 52)]  // then held 2 s, released at 2052
        for (level, time) in edges { presses += d.edge(isActive: level, at: ms(time)) }
        clock.advance(byNanoseconds: ms(52).nanoseconds)
        while let deadline = d.nextDeadline, deadline <= ms(2052) {
            clock.advance(byNanoseconds: deadline.nanoseconds(since: clock.now()))
            presses += d.advance(to: clock.now())
            wakeUps += 1
        }
        XCTAssertEqual(wakeUps, 2, "one wake-up to settle the press, one for the long press; no polling in between")
        XCTAssertEqual(presses, [ButtonPress(kind: .long, time: ms(1050))])
        presses += d.edge(isActive: false, at: ms(2052))
        presses += d.advance(to: ms(2100))
        XCTAssertEqual(presses.count, 1)
    }

    func testDebouncedButtonMapsPressesToActionsAndLongNoneMeansShort() {
        var record = DebouncedButton(name: "record", shortPress: .recordToggle, longPress: .audioToggle,
                                     debounceMilliseconds: 30, longPressMilliseconds: 1000)
        var events = record.edge(isActive: true, at: ms(0))
        events += record.advance(to: ms(1500))
        events += record.edge(isActive: false, at: ms(1600))
        events += record.edge(isActive: true, at: ms(2000))
        events += record.edge(isActive: false, at: ms(2200))
        events += record.advance(to: ms(3000))
        XCTAssertEqual(events, [
            ButtonEvent(button: "record", action: .audioToggle, kind: .long, time: ms(1000)),
            ButtonEvent(button: "record", action: .recordToggle, kind: .short, time: ms(2230)),
        ])

        var snapshot = DebouncedButton(name: "snapshot", shortPress: .snapshot, longPress: .none,
                                       debounceMilliseconds: 30, longPressMilliseconds: 1000)
        var held = snapshot.edge(isActive: true, at: ms(0))
        held += snapshot.advance(to: ms(5000))
        XCTAssertEqual(held, [], "a long action of none means no long press")
        held += snapshot.edge(isActive: false, at: ms(5000))
        held += snapshot.advance(to: ms(5100))
        XCTAssertEqual(held, [ButtonEvent(button: "snapshot", action: .snapshot, kind: .short, time: ms(5030))])
    }
}
