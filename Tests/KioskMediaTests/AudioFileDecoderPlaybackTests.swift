import KioskMedia
import KioskTestSupport
import XCTest

/// `decodeInterleavedS16`: the player's view of a file, sample for sample.
final class AudioFileDecoderPlaybackTests: XCTestCase {
    /// A stereo WAV whose left channel counts frames and right channel counts down.
    private func countingWAV(in folder: TemporaryDirectory, frames: Int = 48_000) throws -> String {
        let path = folder.path + "/counting.wav"
        try TestMedia.writeWAV(path, frames: frames, sampleRate: 48_000, channels: 2) { frame, channel in
            Int16(truncatingIfNeeded: channel == 0 ? frame % 30_000 : -(frame % 30_000))
        }
        return path
    }

    func testStereoComesOutInterleavedAndComplete() throws {
        let folder = TemporaryDirectory()
        let decoder = try AudioFileDecoder(path: try countingWAV(in: folder))
        XCTAssertEqual(decoder.channelCount, 2)
        XCTAssertEqual(decoder.expectedSeconds ?? 0, 1, accuracy: 0.001)
        var samples: [Int16] = []
        let frames = try decoder.decodeInterleavedS16 { samples.append(contentsOf: $0); return true }
        XCTAssertEqual(frames, 48_000)
        XCTAssertEqual(samples.count, 96_000)
        for frame in [0, 1, 29_999, 30_000, 47_999] {
            XCTAssertEqual(samples[2 * frame], Int16(frame % 30_000), "left of frame \(frame)")
            XCTAssertEqual(samples[2 * frame + 1], -Int16(frame % 30_000), "right of frame \(frame)")
        }
    }

    func testFromStartsOnTheSampleAndStopEndsEarly() throws {
        let folder = TemporaryDirectory()
        let path = try countingWAV(in: folder)
        var samples: [Int16] = []
        let frames = try AudioFileDecoder(path: path).decodeInterleavedS16(from: 0.25) { samples.append(contentsOf: $0); return true }
        XCTAssertEqual(frames, 36_000)
        XCTAssertEqual(samples.first, 12_000, "the first frame played is frame 12000 (0.25 s)")

        var calls = 0
        _ = try AudioFileDecoder(path: path).decodeInterleavedS16 { _ in calls += 1; return false }
        XCTAssertEqual(calls, 1, "false stops decoding")
    }

    func testAStartNoRecordingHasIsRefused() throws {
        let folder = TemporaryDirectory()
        let decoder = try AudioFileDecoder(path: try countingWAV(in: folder, frames: 100))
        XCTAssertThrowsError(try decoder.decodeInterleavedS16(from: 1e20) { _ in true }) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
        }
    }
}
