import KioskCore
import XCTest

final class IdleTimerTests: XCTestCase {
    let clock = ManualClock(MonotonicInstant(nanoseconds: 5_000_000_000))

    func testExpiresAfterTheTimeoutAndNotBefore() {
        var timer = IdleTimer(timeoutSeconds: 60, start: clock.now())
        XCTAssertEqual(timer.nextDeadline, clock.now().advanced(byNanoseconds: 60_000_000_000))
        clock.advance(bySeconds: 59.999)
        XCTAssertFalse(timer.expire(at: clock.now(), busy: false))
        clock.advance(bySeconds: 0.001)
        XCTAssertTrue(timer.expire(at: clock.now(), busy: false))
    }

    func testResetStartsTheCountAgain() {
        var timer = IdleTimer(timeoutSeconds: 3, start: clock.now())
        clock.advance(bySeconds: 2)
        timer.reset(at: clock.now())
        clock.advance(bySeconds: 2)
        XCTAssertFalse(timer.expire(at: clock.now(), busy: false), "only 2 s since the reset")
        XCTAssertEqual(timer.nextDeadline.seconds(since: clock.now()), 1, accuracy: 1e-9)
        clock.advance(bySeconds: 1)
        XCTAssertTrue(timer.expire(at: clock.now(), busy: false))
    }

    /// While recording (or taking a still, or playing) the timer simply starts again.
    func testBusyRestartsTheTimerInsteadOfExpiring() {
        var timer = IdleTimer(timeoutSeconds: 60, start: clock.now())
        clock.advance(bySeconds: 61)
        XCTAssertFalse(timer.expire(at: clock.now(), busy: true))
        XCTAssertEqual(timer.lastActivity, clock.now(), "restarted at the moment it would have expired")
        // Not busy any more: the full idle time must pass again.
        clock.advance(bySeconds: 59)
        XCTAssertFalse(timer.expire(at: clock.now(), busy: false))
        clock.advance(bySeconds: 1)
        XCTAssertTrue(timer.expire(at: clock.now(), busy: false))
    }
}
