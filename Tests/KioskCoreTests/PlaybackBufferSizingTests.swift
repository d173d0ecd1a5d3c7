import KioskCore
import XCTest

final class PlaybackBufferSizingTests: XCTestCase {
    func testHalfASecondOf48kHzStereoS16Is96000Bytes() {
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 48_000, channels: 2, bytesPerSample: 2), 96_000)
        XCTAssertEqual(PlaybackBufferSizing.frames(sampleRate: 48_000, channels: 2, bytesPerSample: 2), 24_000)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 48_000, channels: 1, bytesPerSample: 2), 48_000)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 44_100, channels: 2, bytesPerSample: 2), 88_200)
    }

    func testLowRatesAreRaisedTo16KiB() {
        // 8 kHz mono S16: 8000 bytes in 0.5 s, under the floor.
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 8000, channels: 1, bytesPerSample: 2), 16_384)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 16_000, channels: 1, bytesPerSample: 2), 16_384)
        // 16 KiB is not a whole number of 6-byte frames: rounded up, still ≥ the floor.
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 8000, channels: 3, bytesPerSample: 2, seconds: 0.1), 16_386)
    }

    func testHighRatesAndManyChannelsAreCappedAt320KiB() {
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 192_000, channels: 2, bytesPerSample: 2), 327_680)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 48_000, channels: 8, bytesPerSample: 4), 327_680)
        // 5.1 at 96 kHz: capped, then down to whole 12-byte frames.
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 96_000, channels: 6, bytesPerSample: 2), 327_672)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: Int.max, channels: Int.max, bytesPerSample: 2), 16_384,
                       "a frame larger than the floor cannot be sized; the floor, not a trap")
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: Int.max, channels: 2, bytesPerSample: 2), 327_680)
    }

    func testNonsenseFromADamagedHeaderGivesTheFloor() {
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 0, channels: 2, bytesPerSample: 2), 16_384)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: -48_000, channels: 2, bytesPerSample: 2), 16_384)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 48_000, channels: 0, bytesPerSample: 2), 16_384)
        XCTAssertEqual(PlaybackBufferSizing.bytes(sampleRate: 48_000, channels: 2, bytesPerSample: 2, seconds: .nan), 16_384)
    }

    func testGainIsClampedAndScalesSamples() {
        XCTAssertEqual(PlaybackGain.clamp(1.5), 1)
        XCTAssertEqual(PlaybackGain.clamp(-0.2), 0)
        XCTAssertEqual(PlaybackGain.clamp(.nan), 0)
        XCTAssertEqual(PlaybackGain.clamp(0.25), 0.25)
        var samples: [Int16] = [32767, -32768, 1000, -1000, 1, 0]
        samples.withUnsafeMutableBufferPointer { PlaybackGain.apply(0.5, to: $0) }
        XCTAssertEqual(samples, [16384, -16384, 500, -500, 1, 0])
        samples = [32767, -32768, 1234]
        samples.withUnsafeMutableBufferPointer { PlaybackGain.apply(7, to: $0) }
        XCTAssertEqual(samples, [32767, -32768, 1234], "above 1 is 1: never louder, never wrapped")
        samples.withUnsafeMutableBufferPointer { PlaybackGain.apply(0, to: $0) }
        XCTAssertEqual(samples, [0, 0, 0])
    }
}
