import XCTest
@testable import KioskCore

final class FramePacerTests: XCTestCase {
    func at(_ milliseconds: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64(milliseconds * 1_000_000)) }

    /// vimc in the guest ran at ~37 fps when 15 were configured: 15 a second get through.
    func testACameraAtThirtySevenFramesPerSecondGivesFifteen() {
        var pacer = FramePacer(framesPerSecond: 15)
        let kept = (0..<370).filter { pacer.admits(at(1000 + Double($0) * 1000 / 37)) }.count
        XCTAssertEqual(kept, 150, accuracy: 1)
    }

    func testACameraAtTheRateKeepsEveryFrameDespiteJitter() {
        var pacer = FramePacer(framesPerSecond: 30)
        let jitter: [Double] = [0, 4, -3, 5, -5, 2, 0, -4]
        let kept = (0..<300).filter { pacer.admits(at(Double($0) * 1000 / 30 + jitter[$0 % jitter.count])) }.count
        XCTAssertEqual(kept, 300)
    }

    func testAfterAGapTheNextFrameIsKeptWithoutABurst() {
        var pacer = FramePacer(framesPerSecond: 10)
        XCTAssertTrue(pacer.admits(at(0)))
        XCTAssertTrue(pacer.admits(at(2000)))   // two seconds without frames
        XCTAssertFalse(pacer.admits(at(2010)))  // not ten frames in a row to catch up
        XCTAssertTrue(pacer.admits(at(2100)))
    }

    func testAClockThatJumpsBackStartsAgain() {
        var pacer = FramePacer(framesPerSecond: 10)
        XCTAssertTrue(pacer.admits(at(10_000)))
        XCTAssertTrue(pacer.admits(at(100)))
        XCTAssertTrue(pacer.admits(at(200)))
    }
}
