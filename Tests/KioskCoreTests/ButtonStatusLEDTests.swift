import XCTest
@testable import KioskCore

final class ButtonStatusLEDTests: XCTestCase {
    private func ms(_ value: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: value * 1_000_000) }

    func testPatternForEachState() {
        XCTAssertEqual(StatusLEDPattern(state: .idle, error: false), .off)
        XCTAssertEqual(StatusLEDPattern(state: .recording, error: false), .on)
        XCTAssertEqual(StatusLEDPattern(state: .starting, error: false), .slowBlink)
        XCTAssertEqual(StatusLEDPattern(state: .stopping, error: false), .slowBlink)
        for state in RecordingState.allCases {
            XCTAssertEqual(StatusLEDPattern(state: state, error: true), .errorFlashes, "an error wins over \(state)")
        }
    }

    /// The LED sampled every 10 ms over `periods` × 2 s: (count of on→off changes, ms lit).
    private func sample(_ pattern: StatusLEDPattern, seconds: Int64) -> (flashes: Int, litMilliseconds: Int64) {
        var flashes = 0, lit: Int64 = 0
        var previous = false
        for t in stride(from: Int64(0), to: seconds * 1000, by: 10) {
            let on = pattern.isOn(elapsedNanoseconds: t * 1_000_000)
            if on { lit += 10 }
            if on && !previous { flashes += 1 }
            previous = on
        }
        return (flashes, lit)
    }

    func testErrorIsThreeShortFlashesEveryTwoSeconds() {
        let error = sample(.errorFlashes, seconds: 4)
        XCTAssertEqual(error.flashes, 6)
        XCTAssertEqual(error.litMilliseconds, 600)
        let blink = sample(.slowBlink, seconds: 4)
        XCTAssertEqual(blink.flashes, 4)
        XCTAssertEqual(blink.litMilliseconds, 2000)
        XCTAssertEqual(sample(.on, seconds: 2).litMilliseconds, 2000)
        XCTAssertEqual(sample(.off, seconds: 2).flashes, 0)
        // The error pattern's exact steps.
        let steps: [(Int64, Bool)] = [(0, true), (99, true), (100, false), (249, false), (250, true), (350, false),
                                      (500, true), (599, true), (600, false), (1999, false), (2000, true)]
        for (t, on) in steps {
            XCTAssertEqual(StatusLEDPattern.errorFlashes.isOn(elapsedNanoseconds: t * 1_000_000), on, "at \(t) ms")
        }
    }

    func testNextChangeLetsTheLoopSleepBetweenChanges() {
        XCTAssertNil(StatusLEDPattern.on.nextChange(afterElapsedNanoseconds: 0))
        XCTAssertNil(StatusLEDPattern.off.nextChange(afterElapsedNanoseconds: 123))
        XCTAssertEqual(StatusLEDPattern.slowBlink.nextChange(afterElapsedNanoseconds: 0), 500_000_000)
        XCTAssertEqual(StatusLEDPattern.slowBlink.nextChange(afterElapsedNanoseconds: 500_000_000), 1_000_000_000)
        XCTAssertEqual(StatusLEDPattern.errorFlashes.nextChange(afterElapsedNanoseconds: 650_000_000), 2_000_000_000)
        XCTAssertEqual(StatusLEDPattern.errorFlashes.nextChange(afterElapsedNanoseconds: 2_050_000_000), 2_100_000_000)
    }

    func testControllerStartsANewPatternAtOnceAndKeepsItsPhase() {
        var led = StatusLEDController()
        XCTAssertFalse(led.update(state: .idle, error: false, now: ms(1000)))
        XCTAssertNil(led.nextChange(after: ms(1000)))
        XCTAssertTrue(led.update(state: .starting, error: false, now: ms(1234)), "a blink starts lit, so the press shows at once")
        XCTAssertEqual(led.nextChange(after: ms(1234)), ms(1734))
        XCTAssertFalse(led.update(state: .starting, error: false, now: ms(1800)), "the same state keeps its phase")
        XCTAssertTrue(led.update(state: .recording, error: false, now: ms(1900)))
        XCTAssertNil(led.nextChange(after: ms(1900)))
        XCTAssertTrue(led.update(state: .recording, error: true, now: ms(5000)))
        XCTAssertFalse(led.isOn(at: ms(5100)))
        XCTAssertEqual(led.nextChange(after: ms(5100)), ms(5250))
        XCTAssertFalse(led.update(state: .idle, error: false, now: ms(6000)))
        XCTAssertEqual(led.pattern, .off)
    }
}
