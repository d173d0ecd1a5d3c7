import XCTest
@testable import KioskCore

final class AudioAlignerTests: XCTestCase {
    private let start = MonotonicInstant(nanoseconds: 5_000_000_000)

    private func at(milliseconds: Double) -> MonotonicInstant {
        start.advanced(byNanoseconds: Int64((milliseconds * 1e6).rounded()))
    }

    /// The time of sample frame `frame` (relative to `start`) at `rate`.
    private func at(frame: Int64, rate: Int) -> MonotonicInstant {
        start.advanced(byNanoseconds: frame * 1_000_000_000 / Int64(rate))
    }

    private func plan(_ silence: Int, _ skip: Int, _ take: Int) -> AudioAligner.Plan {
        AudioAligner.Plan(silence: silence, skip: skip, take: take)
    }

    func testToleranceInFrames() {
        XCTAssertEqual(AudioAligner(sampleRate: 48_000, start: start).toleranceFrames, 2880)
        XCTAssertEqual(AudioAligner(sampleRate: 44_100, start: start).toleranceFrames, 2646)
        XCTAssertEqual(AudioAligner(sampleRate: 48_000, start: start, toleranceSeconds: 0.01).toleranceFrames, 480)
    }

    func testStartsWithCursorAtStart() {
        let aligner = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(aligner.writtenFrames, 0)
        XCTAssertEqual(aligner.cursor, start)
    }

    // MARK: First chunk

    func testFirstChunkBeforeStartIsTrimmedExactly() {
        for rate in [48_000, 44_100] {
            var aligner = AudioAligner(sampleRate: rate, start: start)
            // 10 ms early: 480 frames at 48 kHz, 441 at 44.1 kHz.
            let early = rate / 100
            XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: -10), frameCount: 1024), plan(0, early, 1024 - early), "\(rate) Hz")
            XCTAssertEqual(aligner.writtenFrames, Int64(1024 - early))
            // The next chunk follows on directly.
            XCTAssertEqual(aligner.plan(timestamp: at(frame: Int64(1024 - early), rate: rate), frameCount: 1024), plan(0, 0, 1024))
        }
    }

    func testEvenOneEarlyFrameIsTrimmedFromTheFirstChunk() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(aligner.plan(timestamp: at(frame: -1, rate: 48_000), frameCount: 100), plan(0, 1, 99))
    }

    func testChunksEntirelyBeforeStartAreDropped() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: -100), frameCount: 480), plan(0, 480, 0))
        XCTAssertEqual(aligner.writtenFrames, 0)
        XCTAssertEqual(aligner.cursor, start)
        // The chunk that straddles the start is still trimmed exactly (no tolerance before the first sample).
        XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: -5), frameCount: 480), plan(0, 240, 240))
        XCTAssertEqual(aligner.writtenFrames, 240)
    }

    func testFirstChunkAfterStartIsPaddedWithExactSilence() {
        for rate in [48_000, 44_100] {
            var aligner = AudioAligner(sampleRate: rate, start: start)
            // 5 ms late: 240 frames at 48 kHz; 220.5 → 221 (rounded to nearest) at 44.1 kHz.
            let late = rate == 48_000 ? 240 : 221
            XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 5), frameCount: 1000), plan(late, 0, 1000), "\(rate) Hz")
            XCTAssertEqual(aligner.writtenFrames, Int64(late + 1000))
        }
        var tiny = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(tiny.plan(timestamp: at(frame: 3, rate: 48_000), frameCount: 10), plan(3, 0, 10))
    }

    func testFirstChunkExactlyAtStart() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(aligner.plan(timestamp: start, frameCount: 960), plan(0, 0, 960))
    }

    // MARK: Steady state

    func testContinuousChunksWithJitterAreNeitherPaddedNorTrimmed() {
        for rate in [48_000, 44_100] {
            var aligner = AudioAligner(sampleRate: rate, start: start)
            let chunk = rate / 50  // 20 ms
            let jitterMilliseconds: [Double] = [0, 3, -4, 12, -15, 7, 0, -1, 20, -20, 5]
            var expectedFrames: Int64 = 0
            for round in 0..<200 {
                let jitter = jitterMilliseconds[round % jitterMilliseconds.count]
                let nominal = Double(round) * 20
                // The first chunk has no tolerance, so it is stamped exactly.
                let stamp = at(milliseconds: round == 0 ? 0 : nominal + jitter)
                XCTAssertEqual(aligner.plan(timestamp: stamp, frameCount: chunk), plan(0, 0, chunk), "\(rate) Hz chunk \(round)")
                expectedFrames += Int64(chunk)
            }
            XCTAssertEqual(aligner.writtenFrames, expectedFrames)
            XCTAssertEqual(aligner.cursor, at(milliseconds: 4000), "\(rate) Hz")
        }
    }

    func testDeviationExactlyAtToleranceIsNotCorrectedButOneFrameMoreIs() {
        var exact = AudioAligner(sampleRate: 48_000, start: start)
        _ = exact.plan(timestamp: start, frameCount: 4800)
        XCTAssertEqual(exact.plan(timestamp: at(frame: 4800 + 2880, rate: 48_000), frameCount: 100), plan(0, 0, 100))

        var over = AudioAligner(sampleRate: 48_000, start: start)
        _ = over.plan(timestamp: start, frameCount: 4800)
        XCTAssertEqual(over.plan(timestamp: at(frame: 4800 + 2881, rate: 48_000), frameCount: 100), plan(2881, 0, 100))

        var early = AudioAligner(sampleRate: 48_000, start: start)
        _ = early.plan(timestamp: start, frameCount: 4800)
        XCTAssertEqual(early.plan(timestamp: at(frame: 4800 - 2880, rate: 48_000), frameCount: 100), plan(0, 0, 100))

        var overlap = AudioAligner(sampleRate: 48_000, start: start)
        _ = overlap.plan(timestamp: start, frameCount: 4800)
        XCTAssertEqual(overlap.plan(timestamp: at(frame: 4800 - 2881, rate: 48_000), frameCount: 4000), plan(0, 2881, 1119))
    }

    func testLostChunkIsPaddedWithSilence() {
        for rate in [48_000, 44_100] {
            var aligner = AudioAligner(sampleRate: rate, start: start)
            let chunk = rate / 10  // 100 ms, longer than the 60 ms tolerance
            XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 0), frameCount: chunk), plan(0, 0, chunk))
            XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 100), frameCount: chunk), plan(0, 0, chunk))
            // The chunk at 200 ms was lost.
            XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 300), frameCount: chunk), plan(chunk, 0, chunk), "\(rate) Hz")
            XCTAssertEqual(aligner.writtenFrames, Int64(4 * chunk))
            XCTAssertEqual(aligner.cursor, at(milliseconds: 400))
            // Back to normal afterwards.
            XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 401), frameCount: chunk), plan(0, 0, chunk))
        }
    }

    func testOverlapBeyondToleranceIsSkipped() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(aligner.plan(timestamp: start, frameCount: 9600), plan(0, 0, 9600))  // 0–200 ms
        // A chunk stamped 100 ms: its first 100 ms repeat what was written.
        XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 100), frameCount: 9600), plan(0, 4800, 4800))
        XCTAssertEqual(aligner.writtenFrames, 14_400)
        // A chunk entirely in the past is skipped whole.
        XCTAssertEqual(aligner.plan(timestamp: at(milliseconds: 0), frameCount: 4800), plan(0, 4800, 0))
        XCTAssertEqual(aligner.writtenFrames, 14_400)
        XCTAssertEqual(aligner.cursor, at(milliseconds: 300))
    }

    // MARK: Segment end

    func testEndLimitsTake() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        let end = at(milliseconds: 1000)  // frame 48 000
        XCTAssertEqual(aligner.plan(timestamp: start, frameCount: 47_000, end: end), plan(0, 0, 47_000))
        XCTAssertEqual(aligner.plan(timestamp: at(frame: 47_000, rate: 48_000), frameCount: 4800, end: end), plan(0, 0, 1000))
        XCTAssertEqual(aligner.writtenFrames, 48_000)
        XCTAssertEqual(aligner.cursor, end)
        // Nothing more fits.
        XCTAssertEqual(aligner.plan(timestamp: end, frameCount: 4800, end: end), plan(0, 0, 0))
        XCTAssertEqual(aligner.writtenFrames, 48_000)
    }

    func testEndLimitsSilenceAndThenTake() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        let end = at(frame: 10_000, rate: 48_000)
        XCTAssertEqual(aligner.plan(timestamp: start, frameCount: 4000, end: end), plan(0, 0, 4000))
        // A gap of 4000 frames (> tolerance); only 6000 frames of room: all the silence, part of the chunk.
        XCTAssertEqual(aligner.plan(timestamp: at(frame: 8000, rate: 48_000), frameCount: 4800, end: end), plan(4000, 0, 2000))
        XCTAssertEqual(aligner.writtenFrames, 10_000)

        var gapOnly = AudioAligner(sampleRate: 48_000, start: start)
        _ = gapOnly.plan(timestamp: start, frameCount: 4000, end: end)
        // The gap alone is longer than the room: silence up to the end, nothing taken.
        XCTAssertEqual(gapOnly.plan(timestamp: at(frame: 14_000, rate: 48_000), frameCount: 4800, end: end), plan(6000, 0, 0))
        XCTAssertEqual(gapOnly.writtenFrames, 10_000)
        XCTAssertEqual(gapOnly.cursor, end)
    }

    func testEndCombinesWithSkip() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        let end = at(frame: 1000, rate: 48_000)
        // 480 frames early, 2000 frames long, 1000 frames of room.
        XCTAssertEqual(aligner.plan(timestamp: at(frame: -480, rate: 48_000), frameCount: 2000, end: end), plan(0, 480, 1000))
        XCTAssertEqual(aligner.writtenFrames, 1000)
    }

    func testEndAtOrBeforeStartWritesNothing() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        XCTAssertEqual(aligner.plan(timestamp: start, frameCount: 480, end: start), plan(0, 0, 0))
        XCTAssertEqual(aligner.plan(timestamp: start, frameCount: 480, end: at(milliseconds: -10)), plan(0, 0, 0))
        XCTAssertEqual(aligner.writtenFrames, 0)
    }

    // MARK: Cursor

    func testCursorArithmetic() {
        var a48 = AudioAligner(sampleRate: 48_000, start: start)
        _ = a48.plan(timestamp: start, frameCount: 48)
        XCTAssertEqual(a48.cursor, start.advanced(byNanoseconds: 1_000_000))
        _ = a48.plan(timestamp: a48.cursor, frameCount: 47_952)
        XCTAssertEqual(a48.cursor, start.advanced(byNanoseconds: 1_000_000_000))

        var a44 = AudioAligner(sampleRate: 44_100, start: start)
        _ = a44.plan(timestamp: start, frameCount: 1)
        // 1/44 100 s = 22 675.73… ns, rounded to the nearest nanosecond.
        XCTAssertEqual(a44.cursor, start.advanced(byNanoseconds: 22_676))
        _ = a44.plan(timestamp: a44.cursor, frameCount: 440)
        XCTAssertEqual(a44.cursor, start.advanced(byNanoseconds: 10_000_000))
        // One hour of 44.1 kHz stays exact.
        _ = a44.plan(timestamp: a44.cursor, frameCount: 44_100 * 3600 - 441)
        XCTAssertEqual(a44.cursor, start.advanced(byNanoseconds: 3_600_000_000_000))
        XCTAssertEqual(a44.writtenFrames, 44_100 * 3600)
    }

    func testCursorCountsSilence() {
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        _ = aligner.plan(timestamp: at(milliseconds: 50), frameCount: 480)
        XCTAssertEqual(aligner.writtenFrames, 2400 + 480)
        XCTAssertEqual(aligner.cursor, at(milliseconds: 60))
    }
}

/// The continuous encoder's clock-jump guard.
final class AudioAlignerRebaseTests: XCTestCase {
    func testRebaseContinuesTheTimeLineWithoutSilence() {
        let start = MonotonicInstant(nanoseconds: 1_000_000_000)
        var aligner = AudioAligner(sampleRate: 48_000, start: start)
        _ = aligner.plan(timestamp: start, frameCount: 960)
        let jumped = start.advanced(byNanoseconds: 3_600_000_000_000)   // an hour later
        XCTAssertGreaterThan(aligner.offset(of: jumped), 3_500_000_000_000)
        aligner.rebase(continuingAt: jumped)
        XCTAssertEqual(aligner.offset(of: jumped), 0)
        let plan = aligner.plan(timestamp: jumped, frameCount: 960)
        XCTAssertEqual(plan, AudioAligner.Plan(silence: 0, skip: 0, take: 960), "no hour of silence")
        XCTAssertEqual(aligner.writtenFrames, 1920)
    }
}
