@testable import KioskCore
import XCTest

/// Deterministic scenes at the luma branch's size (320x180): a textured still scene with
/// sensor noise, a box that crosses it, a light switched on, masks.
final class MotionDetectorTests: XCTestCase {
    private let width = 320, height = 180

    /// A textured scene (so a box on it is visible), brightness `offset` added, plus
    /// deterministic noise of ±`noise`, plus a `boxSize` square of bright pixels at `box`.
    private func frame(_ number: Int, offset: Int = 0, noise: Int = 3, box: (x: Int, y: Int)? = nil,
                       boxSize: Int = 30) -> LumaFrame {
        var generator = ControlFuzzTests.SplitMix(state: UInt64(number) &* 7919 &+ 17)
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var value = 60 + (x / 16 + y / 16) % 4 * 20 + offset
                if noise > 0 { value += Int(generator.next() % UInt64(2 * noise + 1)) - noise }
                if let box, x >= box.x, x < box.x + boxSize, y >= box.y, y < box.y + boxSize { value = 230 }
                pixels[y * width + x] = UInt8(clamping: value)
            }
        }
        return LumaFrame(width: width, height: height, pixels: pixels,
                         time: MonotonicInstant(nanoseconds: Int64(number) * 125_000_000))
    }

    private func run(_ detector: inout MotionDetector, _ frames: [LumaFrame]) -> [MotionDetector.Observation] {
        frames.map { detector.observe($0) }
    }

    func testAStillNoisySceneNeverMoves() {
        var detector = MotionDetector()
        let observations = run(&detector, (0..<480).map { frame($0, noise: 4) }) // 60 s at 8 fps
        XCTAssertFalse(observations.contains { $0.isMotion })
        XCTAssertFalse(observations.contains { $0.transition != nil })
        XCTAssertLessThan(observations.map(\.score).max() ?? 1, 0.1, "speckle is opened away")
    }

    /// A camera in the dark: every pixel off by up to ±30, new in every frame. The noise is
    /// measured while the detector warms up, so the threshold starts above it: no light
    /// switch, no motion for a minute — and a box crossing is still seen.
    func testAVeryNoisyCameraIsMeasuredNotTakenForLightSwitchesAndABoxIsStillSeen() {
        var detector = MotionDetector(settings: .init(thresholdPercent: 1, minimumFrames: 2))
        var frames = (0..<480).map { frame($0, noise: 30) }
        frames += (480..<504).map { frame($0, noise: 30, box: (x: 20 + ($0 - 480) * 12, y: 70)) }
        let observations = run(&detector, frames)
        XCTAssertEqual(observations[..<480].filter(\.lightSwitch).count, 0, "noise is not a light switch")
        XCTAssertFalse(observations[..<480].contains { $0.isMotion }, "a minute of noise is no motion")
        XCTAssertGreaterThan(observations[20].pixelThreshold, 30, "the threshold rose over the noise")
        XCTAssertEqual(observations[480...].compactMap(\.transition), [.started], "the box is motion")
    }

    /// Noise the warm-up did not see (the camera's gain rose afterwards) must not blind the
    /// detector with a light switch in every frame: the second one in a row is taken as noise.
    func testNoiseThatAppearsLaterRaisesTheThresholdInsteadOfRepeatingLightSwitches() {
        var detector = MotionDetector(settings: .init(thresholdPercent: 1, minimumFrames: 2))
        var frames = (0..<40).map { frame($0, noise: 0) }
        frames += (40..<200).map { frame($0, noise: 30) }
        frames += (200..<224).map { frame($0, noise: 30, box: (x: 20 + ($0 - 200) * 12, y: 70)) }
        let observations = run(&detector, frames)
        XCTAssertLessThanOrEqual(observations.filter(\.lightSwitch).count, 3, "a few at the change, not one per frame")
        XCTAssertFalse(observations[..<200].contains { $0.isMotion })
        XCTAssertEqual(observations[200...].compactMap(\.transition), [.started], "still watching: the box is motion")
    }

    func testABoxCrossingStartsAndEndsMotionOnceWithHysteresis() {
        var detector = MotionDetector(settings: .init(thresholdPercent: 1, minimumFrames: 2))
        var frames = (0..<40).map { frame($0) }
        // 16 frames (2 s at 8 fps) of a 30x30 box moving left to right, then still again.
        frames += (0..<16).map { step in frame(40 + step, box: (x: 10 + step * 18, y: 70)) }
        frames += (56..<100).map { frame($0) }
        let observations = run(&detector, frames)
        let transitions = observations.enumerated().compactMap { index, observation in
            observation.transition.map { (index, $0) }
        }
        XCTAssertEqual(transitions.map(\.1), [.started, .ended], "\(transitions)")
        XCTAssertEqual(transitions.first?.0, 41, "the second frame over the threshold starts it (minimumFrames 2)")
        XCTAssertEqual(transitions.last?.0, 57, "the second still frame after the box left ends it")
        // A 30x30 box is 900 of 57,600 pixels: ~1.6 %, more where old and new positions join.
        let scores = observations[40..<56].map(\.score)
        XCTAssertGreaterThan(scores.min() ?? 0, 1.4)
        XCTAssertLessThan(scores.max() ?? 100, 5)
        // The region follows the box.
        let region = try? XCTUnwrap(observations[48].region)
        let boxCenterX = Double(10 + 8 * 18 + 15) / Double(width)
        XCTAssertEqual(region?.center.x ?? 0, boxCenterX, accuracy: 0.08)
        XCTAssertEqual(region?.center.y ?? 0, Double(70 + 15) / Double(height), accuracy: 0.08)
    }

    func testALightSwitchResetsTheBackgroundAndFiresNothing() {
        var detector = MotionDetector()
        var frames = (0..<20).map { frame($0) }
        frames += (20..<60).map { frame($0, offset: 70) }
        let observations = run(&detector, frames)
        XCTAssertTrue(observations[20].lightSwitch)
        XCTAssertFalse(observations.contains { $0.isMotion })
        XCTAssertLessThan(observations[21...].map(\.score).max() ?? 1, 0.1, "the new scene is the background at once")
    }

    func testMotionOnlyInsideAnIgnoredRectangleIsNotMotion() {
        let mask = MotionMask(ignoredRegions: [MotionRegion(x: 0, y: 0.3, width: 1, height: 0.3)])
        var masked = MotionDetector(settings: .init(thresholdPercent: 1), mask: mask)
        var unmasked = MotionDetector(settings: .init(thresholdPercent: 1))
        var frames = (0..<20).map { frame($0) }
        // The box stays within rows 60…95, inside the ignored band (54…108).
        frames += (0..<16).map { step in frame(20 + step, box: (x: 10 + step * 18, y: 62)) }
        XCTAssertFalse(run(&masked, frames).contains { $0.isMotion })
        XCTAssertTrue(run(&unmasked, frames).contains { $0.isMotion }, "the same scene unmasked moves")
    }

    func testAPictureMaskIgnoresItsDarkPixels() {
        // A 4x2 picture whose right half is black: the right half of any frame is ignored.
        let picture = (width: 4, height: 2, pixels: [UInt8]([255, 255, 0, 0, 255, 255, 0, 0]))
        let watched = MotionMask(picture: picture).watched(width: 8, height: 2)
        XCTAssertEqual(watched, [true, true, true, true, false, false, false, false,
                                 true, true, true, true, false, false, false, false])
        var detector = MotionDetector(settings: .init(thresholdPercent: 1), mask: MotionMask(picture: picture))
        var frames = (0..<20).map { frame($0) }
        frames += (0..<10).map { step in frame(20 + step, box: (x: 200 + step * 8, y: 70)) }
        XCTAssertFalse(run(&detector, frames).contains { $0.isMotion })
    }

    func testTheScoreIsAShareOfTheWatchedAreaOnly() {
        // Half the frame ignored: the same box scores twice as much.
        var half = MotionDetector(mask: MotionMask(ignoredRegions: [MotionRegion(x: 0.5, y: 0, width: 0.5, height: 1)]))
        var whole = MotionDetector()
        let frames = (0..<20).map { frame($0) } + [frame(20, box: (x: 40, y: 70), boxSize: 40)]
        let halfScore = run(&half, frames).last?.score ?? 0
        let wholeScore = run(&whole, frames).last?.score ?? 0
        XCTAssertEqual(wholeScore, 1600.0 * 100 / Double(width * height), accuracy: 0.3)
        XCTAssertEqual(halfScore, wholeScore * 2, accuracy: 0.5)
    }

    func testSpeckleIsOpenedAwayButABlobIsKept() {
        var changed = [Bool](repeating: false, count: 100)
        changed[11] = true // one lone pixel
        for y in 4..<8 { for x in 4..<8 { changed[y * 10 + x] = true } } // a 4x4 block
        let opened = MotionDetector.dilate(MotionDetector.erode(changed, width: 10, height: 10), width: 10, height: 10)
        XCTAssertFalse(opened[11])
        XCTAssertEqual(opened.filter { $0 }.count, 16, "the block survives the opening whole")
        let blob = MotionDetector.largestBlob(opened, watched: [Bool](repeating: true, count: 100), width: 10, height: 10)
        XCTAssertEqual(blob?.pixelCount, 16)
        XCTAssertEqual(blob.map { [$0.minX, $0.minY, $0.maxX, $0.maxY] }, [4, 4, 7, 7])
    }

    func testAFrameOfAnotherSizeStartsOver() {
        var detector = MotionDetector()
        _ = run(&detector, (0..<10).map { frame($0) })
        let other = LumaFrame(width: 160, height: 90, pixels: [UInt8](repeating: 200, count: 160 * 90),
                              time: MonotonicInstant(nanoseconds: 0))
        let observation = detector.observe(other)
        XCTAssertFalse(observation.lightSwitch)
        XCTAssertEqual(observation.score, 0)
        XCTAssertEqual(detector.watchedPixels.count, 160 * 90)
    }

    func testNothingFiresWhileTheCameraSettlesAfterAStart() {
        var detector = MotionDetector(settings: .init(thresholdPercent: 1, minimumFrames: 2, warmUpSeconds: 2))
        // The first 2 s: the exposure settles (a brightness ramp) and a box passes.
        let settling = (0..<16).map { frame($0, offset: $0 * 4, box: $0 > 8 ? (x: 20 + $0 * 10, y: 70) : nil) }
        XCTAssertFalse(run(&detector, settling).contains { $0.isMotion || $0.score > 0 || $0.lightSwitch })
        // Then the scene as it settled is the background, and a box is motion again.
        let after = (16..<40).map { frame($0, offset: 60, box: $0 >= 30 ? (x: 20 + ($0 - 30) * 12, y: 70) : nil) }
        let observations = run(&detector, after)
        XCTAssertFalse(observations[0..<14].contains { $0.isMotion }, "the settled scene is still")
        XCTAssertTrue(observations.contains { $0.transition == .started })
    }

    func testATruncatedFrameIsIgnoredNotATrap() {
        var detector = MotionDetector()
        let short = LumaFrame(width: 320, height: 180, pixels: [1, 2, 3], time: MonotonicInstant(nanoseconds: 0))
        XCTAssertEqual(detector.observe(short).score, 0)
        let empty = LumaFrame(width: 0, height: 0, pixels: [], time: MonotonicInstant(nanoseconds: 0))
        XCTAssertEqual(detector.observe(empty).score, 0)
    }

    func testMasksClampRegionsOutsideTheFrame() {
        let mask = MotionMask(ignoredRegions: [MotionRegion(x: -1, y: 0.5, width: 10, height: 7),
                                               MotionRegion(x: .nan, y: 0, width: 0.5, height: 0.5)])
        let watched = mask.watched(width: 4, height: 4)
        XCTAssertEqual(watched.filter { !$0 }.count, 8, "the bottom half, clamped; a region with NaN is no region")
        XCTAssertEqual(Array(watched[8...]), [Bool](repeating: false, count: 8))
    }
}
