import KioskCore
import XCTest

/// PinThrottle's waits and the `[lock]` section of the configuration.
final class LockPolicyTests: XCTestCase {
    func testFiveFreeAttemptsThenThirtySecondsDoubling() {
        let throttle = PinThrottle.standard
        XCTAssertEqual((0...4).map { throttle.lockoutSeconds(afterFailures: $0) }, [0, 0, 0, 0, 0])
        XCTAssertEqual((5...11).map { throttle.lockoutSeconds(afterFailures: $0) }, [30, 60, 120, 240, 480, 960, 1920])
        XCTAssertEqual(throttle.lockoutSeconds(afterFailures: 12), 3600, "capped at one hour")
        XCTAssertEqual(throttle.lockoutSeconds(afterFailures: 1_000_000), 3600, "no overflow")
    }

    func testRemainingWaitNeverExceedsTheCurrentStep() {
        let throttle = PinThrottle.standard
        XCTAssertEqual(throttle.remainingSeconds(failures: 5, lockedUntil: 1030, now: 1000), 30)
        XCTAssertEqual(throttle.remainingSeconds(failures: 5, lockedUntil: 1030, now: 1020), 10)
        XCTAssertEqual(throttle.remainingSeconds(failures: 5, lockedUntil: 1030, now: 1031), 0)
        // The clock was set back a day: still at most 30 s.
        XCTAssertEqual(throttle.remainingSeconds(failures: 5, lockedUntil: 1030, now: 1030 - 86_400), 30)
        XCTAssertEqual(throttle.remainingSeconds(failures: 3, lockedUntil: 5000, now: 1000), 0, "no wait below the threshold")
    }

    func testLockSectionDefaultsAndValues() throws {
        let defaults = Configuration().lock
        XCTAssertEqual(defaults.idleSeconds, 60)
        XCTAssertEqual(defaults.blankSeconds, 120)
        XCTAssertEqual(defaults.throttle, .standard)
        XCTAssertTrue(defaults.startLocked)

        let c = try Configuration(toml: """
            [lock]
            idle_seconds = 3
            blank_seconds = 0
            failures_before_lockout = 3
            lockout_seconds = 10
            max_lockout_seconds = 40
            start_locked = false
            """)
        XCTAssertEqual(c.lock.idleSeconds, 3)
        XCTAssertNil(c.lock.blankSeconds, "0: never blank")
        XCTAssertFalse(c.lock.startLocked)
        XCTAssertEqual((2...6).map { c.lock.throttle.lockoutSeconds(afterFailures: $0) }, [0, 10, 20, 40, 40])
    }

    func testLockSectionRefusesBadValues() {
        XCTAssertThrowsError(try Configuration(toml: "[lock]\nidle_seconds = 0\n")) { error in
            XCTAssertTrue("\(error)".contains("idle_seconds"), "\(error)")
        }
        XCTAssertThrowsError(try Configuration(toml: "[lock]\nblank_seconds = \"never\"\n"))
        XCTAssertThrowsError(try Configuration(toml: "[lock]\nfailures_before_lockout = 0\n"))
        XCTAssertThrowsError(try Configuration(toml: "[lock]\nstart_locked = \"yes\"\n"))
        XCTAssertThrowsError(try Configuration(toml: "[lock]\npin = 1234\n")) { error in
            XCTAssertTrue("\(error)".contains("idle_seconds"), "lists the known keys: \(error)")
        }
    }
}
