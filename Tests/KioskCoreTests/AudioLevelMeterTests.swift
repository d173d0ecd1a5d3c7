import XCTest
@testable import KioskCore

final class AudioLevelMeterTests: XCTestCase {
    private let start = MonotonicInstant(nanoseconds: 7_000_000_000)
    private let rate = 48_000

    /// `seconds` of a 1 kHz sine per channel (nil: silence), interleaved, peak given in dBFS.
    private func sine(peakDBFS: [Double?], seconds: Double) -> [Int16] {
        let frames = Int(Double(rate) * seconds)
        var samples: [Int16] = []
        samples.reserveCapacity(frames * peakDBFS.count)
        for frame in 0..<frames {
            let phase = 2 * Double.pi * 1000 * Double(frame) / Double(rate)
            for peak in peakDBFS {
                guard let peak else { samples.append(0); continue }
                let amplitude = min(32767, 32768 * pow(10, peak / 20))
                samples.append(Int16((sin(phase) * amplitude).rounded()))
            }
        }
        return samples
    }

    /// Feeds `samples` in 20 ms chunks starting at `from`; returns every distinct levels value.
    @discardableResult
    private func feed(_ meter: inout AudioLevelMeter, _ samples: [Int16], channels: Int,
                      from: MonotonicInstant) -> [AudioLevels] {
        let chunkFrames = rate / 50
        var published: [AudioLevels] = []
        var frame = 0
        samples.withUnsafeBufferPointer { all in
            while frame * channels < all.count {
                let count = min(chunkFrames, all.count / channels - frame)
                let chunk = UnsafeBufferPointer(rebasing: all[(frame * channels)..<((frame + count) * channels)])
                let time = from.advanced(byNanoseconds: Int64(frame) * 1_000_000_000 / Int64(rate))
                meter.process(chunk, channels: channels, sampleRate: rate, at: time)
                if let levels = meter.levels, levels != published.last { published.append(levels) }
                frame += count
            }
        }
        return published
    }

    func testDBFSOfAmplitudes() {
        XCTAssertEqual(AudioLevelMeter.dBFS(1), 0, accuracy: 1e-12)
        XCTAssertEqual(AudioLevelMeter.dBFS(0.5), -6.020_599_913, accuracy: 1e-9)
        XCTAssertEqual(AudioLevelMeter.dBFS(0.1), -20, accuracy: 1e-12)
        XCTAssertEqual(AudioLevelMeter.dBFS(1e-3), -60, accuracy: 1e-9)
        XCTAssertEqual(AudioLevelMeter.dBFS(0), -120)
        XCTAssertEqual(AudioLevelMeter.dBFS(-1), -120)
        XCTAssertEqual(AudioLevelMeter.dBFS(1e-9), -120, "floors instead of -180")
        XCTAssertEqual(AudioLevelMeter.dBFS(.nan), -120)
    }

    func testSineAtMinus6PeakReadsMinus9RMS() {
        var meter = AudioLevelMeter()
        feed(&meter, sine(peakDBFS: [-6], seconds: 0.5), channels: 1, from: start)
        let levels = meter.levels
        XCTAssertNotNil(levels)
        XCTAssertEqual(levels?.rmsDBFS.first ?? 0, -9.03, accuracy: 0.1)
        XCTAssertEqual(levels?.peakHoldDBFS.first ?? 0, -6, accuracy: 0.1)
    }

    func testFullScaleSquareIsZeroAndFullScaleSineMinus3() {
        var square = AudioLevelMeter()
        let squareWave = (0..<(rate / 5)).map { ($0 / 24) % 2 == 0 ? Int16.max : Int16.min }
        feed(&square, squareWave, channels: 1, from: start)
        XCTAssertEqual(square.levels?.rmsDBFS.first ?? -1, 0, accuracy: 0.01)
        XCTAssertEqual(square.levels?.peakHoldDBFS.first ?? -1, 0, accuracy: 0.001)

        var sineMeter = AudioLevelMeter()
        feed(&sineMeter, sine(peakDBFS: [0], seconds: 0.2), channels: 1, from: start)
        XCTAssertEqual(sineMeter.levels?.rmsDBFS.first ?? 0, -3.01, accuracy: 0.02)
        XCTAssertEqual(sineMeter.levels?.peakHoldDBFS.first ?? -1, 0, accuracy: 0.01)
    }

    func testSilenceFloorsAtMinus120() {
        var meter = AudioLevelMeter()
        feed(&meter, [Int16](repeating: 0, count: rate / 5 * 2), channels: 2, from: start)
        XCTAssertEqual(meter.levels?.rmsDBFS, [-120, -120])
        XCTAssertEqual(meter.levels?.peakHoldDBFS, [-120, -120])
    }

    func testNoLevelsBeforeTheFirstBlockIsComplete() {
        var meter = AudioLevelMeter()
        feed(&meter, sine(peakDBFS: [-6], seconds: 0.08), channels: 1, from: start)
        XCTAssertNil(meter.levels)
    }

    func testStereoChannelsAreIndependent() {
        var meter = AudioLevelMeter()
        feed(&meter, sine(peakDBFS: [-6, nil], seconds: 0.3), channels: 2, from: start)
        XCTAssertEqual(meter.levels?.rmsDBFS.count, 2)
        XCTAssertEqual(meter.levels?.rmsDBFS[0] ?? 0, -9.03, accuracy: 0.1)
        XCTAssertEqual(meter.levels?.rmsDBFS[1], -120)
        XCTAssertEqual(meter.levels?.peakHoldDBFS[0] ?? 0, -6, accuracy: 0.1)
        XCTAssertEqual(meter.levels?.peakHoldDBFS[1], -120)

        var swapped = AudioLevelMeter()
        feed(&swapped, sine(peakDBFS: [-20, -6], seconds: 0.3), channels: 2, from: start)
        XCTAssertEqual(swapped.levels?.rmsDBFS[0] ?? 0, -23.01, accuracy: 0.1)
        XCTAssertEqual(swapped.levels?.rmsDBFS[1] ?? 0, -9.03, accuracy: 0.1)
    }

    func testUpdatesTenTimesPerSecondFrom20msChunks() {
        var meter = AudioLevelMeter()
        let updates = feed(&meter, sine(peakDBFS: [-12], seconds: 1), channels: 1, from: start)
        XCTAssertGreaterThanOrEqual(updates.count, 10)
        let times = updates.map { $0.updatedAt.seconds(since: start) }
        for (earlier, later) in zip(times, times.dropFirst()) {
            XCTAssertEqual(later - earlier, 0.1, accuracy: 1e-6)
        }
        XCTAssertEqual(times.first ?? 0, 0.1, accuracy: 1e-6, "stamped at the end of the block")
    }

    func testPeakHoldsForOneAndAHalfSecondsThenFallsAt20dBPerSecond() {
        var meter = AudioLevelMeter()
        // 0.5 s at -6 dBFS peak: the last loud block ends at start + 0.5 s.
        feed(&meter, sine(peakDBFS: [-6], seconds: 0.5), channels: 1, from: start)
        let loudEnd = start.advanced(byNanoseconds: 500_000_000)
        let silence = [Int16](repeating: 0, count: rate * 3)
        let updates = feed(&meter, silence, channels: 1, from: loudEnd)

        func held(after seconds: Double) -> Double? {
            updates.first { abs($0.updatedAt.seconds(since: loudEnd) - seconds) < 1e-6 }?.peakHoldDBFS[0]
        }
        XCTAssertEqual(held(after: 0.1) ?? 0, -6, accuracy: 0.1, "held")
        XCTAssertEqual(held(after: 1.5) ?? 0, -6, accuracy: 0.1, "still held at 1.5 s")
        XCTAssertEqual(held(after: 2.0) ?? 0, -16, accuracy: 0.1, "0.5 s of decay at 20 dB/s")
        XCTAssertEqual(held(after: 2.5) ?? 0, -26, accuracy: 0.1, "1 s of decay")
        XCTAssertEqual(updates.last?.rmsDBFS[0], -120, "the average follows the silence at once")
        let decaying = updates.filter { $0.updatedAt.seconds(since: loudEnd) > 1.5 + 1e-6 }.map { $0.peakHoldDBFS[0] }
        XCTAssertEqual(decaying, decaying.sorted(by: >), "falls steadily")
    }

    func testLouderPeakReplacesTheHeldOneAtOnce() {
        var meter = AudioLevelMeter()
        feed(&meter, sine(peakDBFS: [-20], seconds: 0.3), channels: 1, from: start)
        XCTAssertEqual(meter.levels?.peakHoldDBFS[0] ?? 0, -20, accuracy: 0.1)
        feed(&meter, sine(peakDBFS: [-3], seconds: 0.1), channels: 1, from: start.advanced(byNanoseconds: 300_000_000))
        XCTAssertEqual(meter.levels?.peakHoldDBFS[0] ?? 0, -3, accuracy: 0.1)
        // A quieter peak does not lower the hold.
        feed(&meter, sine(peakDBFS: [-10], seconds: 0.2), channels: 1, from: start.advanced(byNanoseconds: 400_000_000))
        XCTAssertEqual(meter.levels?.peakHoldDBFS[0] ?? 0, -3, accuracy: 0.1)
    }

    func testChangingTheChannelCountStartsAfresh() {
        var meter = AudioLevelMeter()
        feed(&meter, sine(peakDBFS: [-6], seconds: 0.2), channels: 1, from: start)
        XCTAssertEqual(meter.levels?.rmsDBFS.count, 1)
        feed(&meter, sine(peakDBFS: [nil, nil], seconds: 0.05), channels: 2, from: start)
        XCTAssertNil(meter.levels, "a new layout has no complete block yet")
        feed(&meter, sine(peakDBFS: [nil, nil], seconds: 0.1), channels: 2, from: start)
        XCTAssertEqual(meter.levels?.peakHoldDBFS, [-120, -120])
    }

    func testIgnoresNonsenseLayouts() {
        var meter = AudioLevelMeter()
        let samples: [Int16] = [1, 2, 3]
        samples.withUnsafeBufferPointer { meter.process($0, channels: 0, sampleRate: rate, at: start) }
        samples.withUnsafeBufferPointer { meter.process($0, channels: 2, sampleRate: 0, at: start) }
        XCTAssertNil(meter.levels)
    }
}
