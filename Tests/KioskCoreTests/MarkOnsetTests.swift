import KioskCore
import XCTest

final class MarkOnsetTests: XCTestCase {
    /// A panel sampled every 4 ms: dark, then a 0.1 s flash at each second.
    private func flashes(at seconds: [Double], until end: Double, step: Double = 0.004) -> [(time: Double, level: Double)] {
        stride(from: 0.0, to: end, by: step).map { time in
            (time, seconds.contains { time >= $0 && time < $0 + 0.1 } ? 250 : 16)
        }
    }

    func testEachFlashIsOneOnsetAtItsFirstBrightSample() {
        var detector = MarkOnsetDetector(threshold: 128, quietSeconds: 0.5)
        for sample in flashes(at: [1.0, 2.0, 3.0], until: 4) { detector.feed(level: sample.level, at: sample.time) }
        XCTAssertEqual(detector.onsets.count, 3)
        for (found, expected) in zip(detector.onsets, [1.0, 2.0, 3.0]) { XCTAssertEqual(found, expected, accuracy: 0.004) }
        XCTAssertEqual(detector.firstOnset(notBefore: 1.5) ?? -1, 2.0, accuracy: 0.004)
        XCTAssertNil(detector.firstOnset(notBefore: 3.5))
    }

    func testAFlickerInsideTheQuietTimeIsNotANewMark() {
        var detector = MarkOnsetDetector(threshold: 128, quietSeconds: 0.5)
        for (time, level) in [(0.0, 0.0), (0.6, 200), (0.62, 10), (0.64, 200), (0.9, 10), (1.6, 200)] {
            detector.feed(level: level, at: time)
        }
        XCTAssertEqual(detector.onsets, [0.6, 1.6], "the dip at 0.62 s is part of the first mark")
    }

    func testAStreamThatStartsInsideAMarkHasNoOnsetForIt() {
        var detector = MarkOnsetDetector(threshold: 128, quietSeconds: 0.5)
        for (time, level) in [(0.0, 255.0), (0.05, 255), (0.2, 0), (1.0, 255)] { detector.feed(level: level, at: time) }
        XCTAssertEqual(detector.onsets, [1.0])
        var early = MarkOnsetDetector(threshold: 128, quietSeconds: 0.5)
        early.feed(level: 0, at: 10)
        early.feed(level: 255, at: 10.2)
        XCTAssertEqual(early.onsets, [], "quiet for 0.2 s is not yet quiet enough")
    }

    func testBadLevelsAndTimesGoingBackAreCountedNeverOnsets() {
        var detector = MarkOnsetDetector(threshold: 128, quietSeconds: 0.5)
        detector.feed(level: 0, at: 5)
        XCTAssertFalse(detector.feed(level: .nan, at: 6))
        XCTAssertFalse(detector.feed(level: 255, at: .infinity))
        XCTAssertFalse(detector.feed(level: 255, at: 4), "a time before the last one")
        XCTAssertEqual(detector.rejectedLevels, 3)
        XCTAssertTrue(detector.feed(level: 255, at: 6))
        XCTAssertEqual(detector.onsets, [6])
    }

    func testOnsetsBeyondTheCapacityAreCountedNotKept() {
        var detector = MarkOnsetDetector(threshold: 1, quietSeconds: 0.5, capacity: 2)
        for second in 0..<5 {
            detector.feed(level: 0, at: Double(second))
            detector.feed(level: 5, at: Double(second) + 0.6)
        }
        XCTAssertEqual(detector.onsets, [0.6, 1.6])
        XCTAssertEqual(detector.droppedOnsets, 3)
    }

    func testClicksInInterleavedSamplesAreFoundToTheFrame() {
        // 48 kHz stereo; a 20 ms click of 1 kHz at 0.75 s and 1.75 s, on the right channel only
        // (quiet for more than 0.5 s before each).
        let rate = 48_000
        var samples = [Int16](repeating: 0, count: rate * 2 * 2)
        for start in [36_000, 84_000] {
            for frame in start..<(start + 960) {
                samples[frame * 2 + 1] = Int16(20_000 * sin(2 * Double.pi * 1000 * Double(frame - start) / Double(rate)))
            }
        }
        var detector = MarkOnsetDetector(threshold: 8000, quietSeconds: 0.5)
        // In 5 ms periods, as the capture delivers them, each stamped with its first frame.
        let period = 240
        var found = 0
        samples.withUnsafeBufferPointer { all in
            for first in stride(from: 0, to: all.count / 2, by: period) {
                let chunk = UnsafeBufferPointer(rebasing: all[(first * 2)..<((first + period) * 2)])
                found += detector.feed(samples: chunk, channels: 2, sampleRate: rate, firstFrameTime: 100 + Double(first) / Double(rate))
            }
        }
        XCTAssertEqual(found, 2)
        XCTAssertEqual(detector.onsets.count, 2)
        // The sine passes 8000 a few frames into the click (sin = 0.4 at 1/15 of a cycle).
        XCTAssertEqual(detector.onsets.first ?? 0, 100.75, accuracy: 0.0002)
        XCTAssertEqual(detector.onsets.last ?? 0, 101.75, accuracy: 0.0002)
        samples.withUnsafeBufferPointer { all in
            XCTAssertEqual(detector.feed(samples: all, channels: 0, sampleRate: rate, firstFrameTime: 200), 0)
            XCTAssertEqual(detector.feed(samples: all, channels: 2, sampleRate: 0, firstFrameTime: 200), 0)
        }
    }

    func testPairsAreTheNearestWithinTheWindowAndTheirFigures() {
        let pairing = MarkPairing(pictures: [1.030, 2.010, 3.050, 7.0], sounds: [1.0, 2.0, 3.0, 4.0], window: 0.4)
        XCTAssertEqual(pairing.offsets.count, 3)
        for (offset, expected) in zip(pairing.offsets, [0.030, 0.010, 0.050]) { XCTAssertEqual(offset, expected, accuracy: 1e-9) }
        XCTAssertEqual(pairing.mean ?? 0, 0.030, accuracy: 1e-9)
        XCTAssertEqual(pairing.largest ?? 0, 0.050, accuracy: 1e-9)
        XCTAssertEqual(pairing.unpairedSounds, 1, "nothing near the click at 4 s")
        XCTAssertEqual(pairing.unpairedPictures, 1, "nothing near the flash at 7 s")
        XCTAssertEqual(pairing.summary, "3 pairs, picture − sound: mean +30 ms, largest 50 ms (+30 +10 +50), unpaired: 1 pictures, 1 sounds")
    }

    func testAPictureBeforeItsSoundIsANegativeOffsetAndCountsInTheLargest() {
        let pairing = MarkPairing(pictures: [0.93, 2.02], sounds: [1.0, 2.0], window: 0.4)
        XCTAssertEqual(pairing.offsets.map { ($0 * 1000).rounded() }, [-70, 20])
        XCTAssertEqual(pairing.largest ?? 0, 0.070, accuracy: 1e-9)
        XCTAssertEqual(pairing.mean ?? 0, -0.025, accuracy: 1e-9)
    }

    func testOnePictureIsNeverThePartnerOfTwoSounds() {
        let pairing = MarkPairing(pictures: [1.0], sounds: [0.9, 1.1], window: 0.4)
        XCTAssertEqual(pairing.offsets.count, 1)
        XCTAssertEqual(pairing.unpairedSounds, 1)
        XCTAssertEqual(pairing.unpairedPictures, 0)
    }

    func testNoPairsGiveNoFiguresAndNonsenseWindowsPairNothing() {
        let none = MarkPairing(pictures: [], sounds: [1, 2], window: 0.4)
        XCTAssertNil(none.mean)
        XCTAssertNil(none.largest)
        XCTAssertEqual(none.unpairedSounds, 2)
        XCTAssertEqual(none.summary, "0 pairs, picture − sound: no pairs, unpaired: 0 pictures, 2 sounds")
        XCTAssertEqual(MarkPairing(pictures: [1], sounds: [1], window: .nan).offsets, [])
        XCTAssertEqual(MarkPairing(pictures: [1, .nan], sounds: [1, .infinity], window: 0.1).offsets, [0])
    }
}
