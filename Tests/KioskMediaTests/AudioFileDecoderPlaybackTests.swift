import Foundation
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

    /// A file's clock is outside data: an M4A that starts at 0.75 × 2^63 ticks and whose
    /// third fragment on says −0.75 × 2^63 trapped the player: `stamp - startTime`
    /// overflowed. Such stamps are no position now, and the file plays for as long as
    /// FFmpeg reads it (it gives up at the jump, as the ffmpeg CLI does: 1.02 s).
    func testAFragmentClockFarOutOfRangePlaysOnAsCounted() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/torn-clock.m4a"
        try Tool.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3",
                                "-c:a", "aac", "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-frag_duration", "500000", path])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 0, fragments = 0
        while at + 8 <= bytes.count {
            let size = Int(MP4HeaderLength.number(bytes[...], at: at, width: 4))
            guard size >= 8, size <= bytes.count - at else { break }
            if String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self) == "moof" {
                fragments += 1
                let tfdt = try XCTUnwrap(MP4HeaderLength.box(["traf", "tfdt"], in: bytes[(at + 8)..<(at + size)]))
                XCTAssertEqual(bytes[tfdt.startIndex + 8], 1, "a 64-bit tfdt")
                let field = (tfdt.startIndex + 12)..<(tfdt.startIndex + 20)
                let time = Int64(bitPattern: MP4HeaderLength.number(bytes[...], at: tfdt.startIndex + 12, width: 8))
                let far: Int64 = 0x6000_0000_0000_0000
                let patched = fragments >= 3 ? -far : far + time
                bytes.replaceSubrange(field, with: withUnsafeBytes(of: patched.bigEndian, Array.init))
            }
            at += size
        }
        XCTAssertGreaterThanOrEqual(fragments, 5)
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let seconds = Double(try AudioFileDecoder(path: path).decodeInterleavedS16 { _ in true }) / 48_000
        XCTAssertGreaterThanOrEqual(seconds, 1.0, "the fragments before the jump play whole")
        XCTAssertLessThanOrEqual(seconds, 3.1, "and nothing more than the file holds")
    }

    func testAStartNoRecordingHasIsRefused() throws {
        let folder = TemporaryDirectory()
        let decoder = try AudioFileDecoder(path: try countingWAV(in: folder, frames: 100))
        XCTAssertThrowsError(try decoder.decodeInterleavedS16(from: 1e20) { _ in true }) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
        }
    }
}
