import KioskCore
import XCTest

/// The Digest nonce's clock: what a client sends back is read as text before any
/// arithmetic (a 16-digit stamp once trapped the daemon before any login).
final class DigestNonceClockTests: XCTestCase {
    func testAStampReadsBackAsTheSecondsItWasMadeAt() {
        XCTAssertEqual(DigestNonceClock.stamp(uptime: 0), "0")
        XCTAssertEqual(DigestNonceClock.stamp(uptime: 4_660.9), "1234")
        XCTAssertEqual(DigestNonceClock.seconds(in: "1234"), 4_660)
        XCTAssertEqual(DigestNonceClock.seconds(in: "fffffffffffff"), DigestNonceClock.limit - 1)
    }

    func testStampsWeCouldNotHaveWrittenAreRefused() {
        for stamp in ["ffffffffffffffff", "fffffffffffffc00", "10000000000000", "", "01", "+1", "-1", "FF", "1g", " 1", "1.5", "١"] {
            XCTAssertNil(DigestNonceClock.seconds(in: Substring(stamp)), stamp)
        }
    }

    func testAnUptimeOutOfRangeIsClampedNotTrappedOn() {
        XCTAssertEqual(DigestNonceClock.stamp(uptime: -5), "0")
        XCTAssertEqual(DigestNonceClock.stamp(uptime: .nan), "0")
        XCTAssertEqual(DigestNonceClock.stamp(uptime: .infinity), "0")
        XCTAssertEqual(DigestNonceClock.stamp(uptime: 1e30), "fffffffffffff")
        XCTAssertEqual(DigestNonceClock.stamp(uptime: Double(UInt64.max)), "fffffffffffff")
    }

    func testANonceIsFreshForFiveMinutesAndNeverFromTheFuture() {
        XCTAssertTrue(DigestNonceClock.isFresh(madeAt: 100, now: 100))
        XCTAssertTrue(DigestNonceClock.isFresh(madeAt: 100, now: 400))
        XCTAssertFalse(DigestNonceClock.isFresh(madeAt: 100, now: 400.5))
        XCTAssertTrue(DigestNonceClock.isFresh(madeAt: 100, now: 99))
        XCTAssertFalse(DigestNonceClock.isFresh(madeAt: 100, now: 98.5))
        XCTAssertFalse(DigestNonceClock.isFresh(madeAt: .max, now: 100))
    }
}
