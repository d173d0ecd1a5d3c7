import KioskCore
import KioskMedia
import KioskTestSupport
import XCTest

/// Stereo survives decoding: a WAV export, the player's samples and a re-encoded clip
/// keep left and right apart; 5.1 is folded to stereo.
final class StereoDecodeTests: XCTestCase {
    private func assertTones(_ samples: [Int16], left: Double, right: Double, file: StaticString = #filePath, line: UInt = #line) {
        let heardLeft = TestMedia.toneHertz(samples, channels: 2, channel: 0, sampleRate: 48_000)
        let heardRight = TestMedia.toneHertz(samples, channels: 2, channel: 1, sampleRate: 48_000)
        XCTAssertEqual(heardLeft, left, accuracy: left * 0.03, "left channel", file: file, line: line)
        XCTAssertEqual(heardRight, right, accuracy: right * 0.03, "right channel", file: file, line: line)
    }

    func testStereoM4AExportsAStereoWAVWithEachSideItsTone() throws {
        let folder = TemporaryDirectory()
        let sound = folder.path + "/stereo.m4a", wav = folder.path + "/stereo.wav"
        try TestMedia.writeTones(sound, left: 440, right: 1000)
        let report = try WAVExport.write(input: sound, output: wav, range: ClipRange(start: 0.5, end: 1.5, endWasClamped: false))
        XCTAssertEqual(report.channels, 2)
        XCTAssertEqual(report.frames, 48_000)
        let audio = try XCTUnwrap(FFprobe.probe(wav).audio)
        XCTAssertEqual(audio.channels, 2)
        XCTAssertEqual(audio.codec_name, "pcm_s16le")
        let samples = try TestMedia.readWAVSamples(wav)
        XCTAssertEqual(samples.count, 96_000)
        assertTones(samples, left: 440, right: 1000)
    }

    func testMonoStaysMono() throws {
        let folder = TemporaryDirectory()
        let sound = folder.path + "/mono.wav", wav = folder.path + "/out.wav"
        try TestMedia.writeWAV(sound, seconds: 1, frequency: 440)
        let report = try WAVExport.write(input: sound, output: wav, range: ClipRange(start: 0, end: 1, endWasClamped: false))
        XCTAssertEqual(report.channels, 1)
        XCTAssertEqual(try FFprobe.probe(wav).audio?.channels, 1)
        XCTAssertEqual(TestMedia.toneHertz(try TestMedia.readWAVSamples(wav), channels: 1, channel: 0, sampleRate: 48_000),
                       440, accuracy: 440 * 0.03)
    }

    func testFivePointOneIsFoldedToStereoForThePlayer() throws {
        let folder = TemporaryDirectory()
        let sound = folder.path + "/surround.m4a"
        try TestMedia.writeTones(sound, left: 440, right: 1000, layout: "5.1")
        let decoder = try AudioFileDecoder(path: sound)
        XCTAssertEqual(decoder.channelCount, 6)
        XCTAssertEqual(decoder.keptChannels, 2)
        var samples: [Int16] = []
        let frames = try decoder.decodeInterleavedS16 { samples.append(contentsOf: $0); return true }
        XCTAssertEqual(samples.count, frames * 2)
        // Skip the encoder's fade-in; the rest carries each side's tone.
        assertTones(Array(samples[9600..<(samples.count - 9600)]), left: 440, right: 1000)
    }

    func testReEncodedClipKeepsStereo() throws {
        let folder = TemporaryDirectory()
        let input = folder.path + "/stereo.mp4", clip = folder.path + "/clip.mp4", wav = folder.path + "/clip.wav"
        try TestMedia.writeTones(input, left: 440, right: 1000, video: true)
        let report = try ClipTranscode.write(input: input, output: clip, range: ClipRange(start: 0.5, end: 1.5, endWasClamped: false),
                                             size: nil, bitrate: nil)
        XCTAssertEqual(report.audioFrames, 48_000, accuracy: 1024)
        let audio = try XCTUnwrap(FFprobe.probe(clip).audio)
        XCTAssertEqual(audio.channels, 2)
        _ = try WAVExport.write(input: clip, output: wav, range: ClipRange(start: 0.1, end: 0.9, endWasClamped: false))
        assertTones(try TestMedia.readWAVSamples(wav), left: 440, right: 1000)
    }
}
