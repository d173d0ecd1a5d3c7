import XCTest
@testable import KioskCore

final class EncodingPolicyTests: XCTestCase {

    // MARK: Default bitrate

    func testDefaultBitrateBelowAndAt640x480() {
        func bitrate(_ w: Int, _ h: Int) -> Int { EncodingPolicy.defaultBitrate(for: FrameSize(width: w, height: h)) }
        XCTAssertEqual(EncodingPolicy.smallFramePixelCount, 307_200)
        // Below 640×480 pixels: 4.05 bits per pixel.
        XCTAssertEqual(bitrate(320, 240), 311_040)
        XCTAssertEqual(bitrate(639, 480), Int((639.0 * 480 * 4.05).rounded()))
        XCTAssertEqual(bitrate(640, 479), Int((640.0 * 479 * 4.05).rounded()))
        XCTAssertEqual(bitrate(640, 479), 1_241_568)  // 306 560 × 4.05
        // Exactly 640×480 pixels and above: 10.1 bits per pixel.
        XCTAssertEqual(bitrate(640, 480), 3_102_720)
        XCTAssertEqual(bitrate(480, 640), 3_102_720)  // pixel count decides, not the shape
        XCTAssertEqual(bitrate(1280, 720), 9_308_160)
        XCTAssertEqual(bitrate(1920, 1080), Int((1920.0 * 1080 * 10.1).rounded()))
        // The step at the boundary is large: one pixel more than 2.4 times the rate.
        XCTAssertGreaterThan(Double(bitrate(640, 480)) / Double(bitrate(639, 480)), 2.4)
    }

    func testDefaultBitrateRoundsToNearest() {
        // 1 × 1 × 4.05 = 4.05 → 4; 3 × 1 × 4.05 = 12.15 → 12.
        XCTAssertEqual(EncodingPolicy.defaultBitrate(for: FrameSize(width: 1, height: 1)), 4)
        XCTAssertEqual(EncodingPolicy.defaultBitrate(for: FrameSize(width: 3, height: 1)), 12)
        // 10 × 1 × 4.05 = 40.5 → 41 (half away from zero)
        XCTAssertEqual(EncodingPolicy.defaultBitrate(for: FrameSize(width: 10, height: 1)), 41)
    }

    // MARK: Keyframes

    func testKeyframeInterval() {
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 15), 15)
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 30), 30)
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 60), 30)
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 1), 1)
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 29), 29)
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 31), 30)
        // A nonsensical rate still gives a usable interval.
        XCTAssertEqual(EncodingPolicy.keyframeInterval(framesPerSecond: 0), 1)
        XCTAssertEqual(EncodingPolicy.maximumKeyframeInterval, 30)
    }

    // MARK: Segments

    func testDefaultSegmentPolicyIsFiveMinutesWithoutByteLimit() {
        let policy = SegmentPolicy()
        XCTAssertEqual(policy.maximumSeconds, 300)
        XCTAssertNil(policy.maximumBytes)
        XCTAssertFalse(policy.shouldCut(seconds: 299.99, bytes: .max / 2))
        XCTAssertTrue(policy.shouldCut(seconds: 300, bytes: 0))
    }

    func testCutBySeconds() {
        let policy = SegmentPolicy(maximumSeconds: 10, maximumBytes: nil)
        XCTAssertFalse(policy.shouldCut(seconds: 0, bytes: 0))
        XCTAssertFalse(policy.shouldCut(seconds: 9.999, bytes: 1 << 40, nextFrameEstimate: 1 << 40))
        XCTAssertTrue(policy.shouldCut(seconds: 10, bytes: 0))
        XCTAssertTrue(policy.shouldCut(seconds: 10.5, bytes: 0))
    }

    func testCutByBytesLeavesRoomForTheNextFrame() {
        let policy = SegmentPolicy(maximumSeconds: nil, maximumBytes: 1_000_000)
        XCTAssertFalse(policy.shouldCut(seconds: 1e9, bytes: 0))
        XCTAssertFalse(policy.shouldCut(seconds: 0, bytes: 999_999))
        XCTAssertTrue(policy.shouldCut(seconds: 0, bytes: 1_000_000))
        XCTAssertTrue(policy.shouldCut(seconds: 0, bytes: 2_000_000))
        // With the next frame's estimate: cut when bytes + estimate reaches the limit.
        XCTAssertFalse(policy.shouldCut(seconds: 0, bytes: 900_000, nextFrameEstimate: 99_999))
        XCTAssertTrue(policy.shouldCut(seconds: 0, bytes: 900_000, nextFrameEstimate: 100_000))
        XCTAssertTrue(policy.shouldCut(seconds: 0, bytes: 950_000, nextFrameEstimate: 60_000))
        XCTAssertFalse(policy.shouldCut(seconds: 0, bytes: 950_000))
    }

    func testEitherLimitCuts() {
        let policy = SegmentPolicy(maximumSeconds: 60, maximumBytes: 1000)
        XCTAssertFalse(policy.shouldCut(seconds: 59, bytes: 999))
        XCTAssertTrue(policy.shouldCut(seconds: 60, bytes: 0))
        XCTAssertTrue(policy.shouldCut(seconds: 0, bytes: 1000))
        XCTAssertTrue(policy.shouldCut(seconds: 0, bytes: 500, nextFrameEstimate: 500))
    }

    func testNilLimitsNeverCut() {
        let policy = SegmentPolicy(maximumSeconds: nil, maximumBytes: nil)
        for (seconds, bytes) in [(0.0, Int64(0)), (1e12, Int64(1) << 50), (Double.greatestFiniteMagnitude, Int64.max / 2)] {
            XCTAssertFalse(policy.shouldCut(seconds: seconds, bytes: bytes, nextFrameEstimate: Int64.max / 4))
        }
    }
}
