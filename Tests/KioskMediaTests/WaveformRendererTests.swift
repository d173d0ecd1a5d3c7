import Foundation
import KioskCore
import KioskTestSupport
import XCTest

@testable import KioskMedia

/// Real files through real libavformat/libavcodec; the PNGs are read back with the ffmpeg CLI.
final class WaveformRendererTests: XCTestCase {
    private let rate = 48_000
    private let colours = WaveformColours.standard
    /// 300 columns: one per 10 ms of a 3 s recording, so each third is 100 columns.
    private let size = FrameSize(width: 300, height: 100)

    /// A 16-bit stereo WAV: `third` seconds of a 440 Hz sine at half scale, as long a
    /// silence, and the sine again; in both channels, or in the left one only.
    private func writeToneSilenceTone(_ path: String, third: Double = 1, leftOnly: Bool = false) throws {
        let thirdFrames = Int(third * Double(rate))
        try TestMedia.writeWAV(path, frames: 3 * thirdFrames, sampleRate: rate, channels: 2) { frame, channel in
            let loud = frame < thirdFrames || frame >= 2 * thirdFrames
            let value = loud ? Int16((sin(2 * Double.pi * 440 * Double(frame) / Double(rate)) * 16384).rounded()) : 0
            return leftOnly && channel == 1 ? 0 : value
        }
    }

    /// The PNG decoded by the ffmpeg CLI to packed RGB24.
    private func readPNG(_ path: String) throws -> [UInt8] {
        let raw = path + ".rgb"
        try Tool.run("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        defer { try? FileManager.default.removeItem(atPath: raw) }
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    /// Rows of column `x` that are not background.
    private func paintedRows(_ pixels: [UInt8], x: Int) -> [Int] {
        (0..<size.height).filter { y in
            let offset = (y * size.width + x) * 3
            return RGBColour(red: pixels[offset], green: pixels[offset + 1], blue: pixels[offset + 2]) != colours.background
        }
    }

    /// Checks a rendered tone/silence/tone picture: size, loud thirds ±0.5 tall, silent third flat.
    private func assertToneSilenceTonePicture(_ png: String, tolerance: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let probe = try FFprobe.probe(png, countFrames: false)
        let picture = try XCTUnwrap(probe.video, file: file, line: line)
        XCTAssertEqual(picture.codec_name, "png", file: file, line: line)
        XCTAssertEqual(picture.width, size.width, file: file, line: line)
        XCTAssertEqual(picture.height, size.height, file: file, line: line)
        let pixels = try readPNG(png)
        XCTAssertEqual(pixels.count, size.width * size.height * 3, file: file, line: line)
        guard pixels.count == size.width * size.height * 3 else { return }
        // Away from the edges of each third (AAC smears a transition over a few ms).
        for x in Array(5..<95) + Array(205..<295) {
            let rows = paintedRows(pixels, x: x)
            XCTAssertEqual(rows.first ?? -1, 25, accuracy: tolerance, "top of loud column \(x)", file: file, line: line)
            XCTAssertEqual(rows.last ?? -1, 75, accuracy: tolerance, "bottom of loud column \(x)", file: file, line: line)
            XCTAssertEqual(rows.count, rows.last.map { $0 - rows[0] + 1 }, "gap in column \(x)", file: file, line: line)
        }
        for x in 105..<195 {
            XCTAssertEqual(paintedRows(pixels, x: x), [50], "silent column \(x)", file: file, line: line)
            let offset = (50 * size.width + x) * 3
            XCTAssertEqual(RGBColour(red: pixels[offset], green: pixels[offset + 1], blue: pixels[offset + 2]),
                           colours.centreLine, file: file, line: line)
        }
    }

    func testWAVBecomesAPNGWithTallLoudThirdsAndAFlatSilentThird() throws {
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav", png = folder.path + "/sound.png"
        try writeToneSilenceTone(wav)
        let summary = try WaveformRenderer.render(audioFile: wav, to: png, size: size)
        XCTAssertEqual(summary, WaveformSummary(frames: 3 * rate, sampleRate: rate, damagedPackets: 0))
        XCTAssertEqual(summary.seconds, 3)
        try assertToneSilenceTonePicture(png, tolerance: 0)
        XCTAssertEqual(folder.files(), ["sound.png", "sound.wav"], "no .tmp left behind")
    }

    func testAACInM4ADecodesToTheSamePicture() throws {
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav", m4a = folder.path + "/sound.m4a", png = folder.path + "/sound.png"
        try writeToneSilenceTone(wav)
        try Tool.run("ffmpeg", ["-v", "error", "-i", wav, "-c:a", "aac", m4a])
        let decoder = try AudioFileDecoder(path: m4a)
        XCTAssertEqual(decoder.codecName, "aac")
        XCTAssertEqual(decoder.channelCount, 2)
        XCTAssertEqual(decoder.expectedFrames ?? 0, 3 * rate, accuracy: 1024)
        try WaveformRenderer.render(audioFile: m4a, to: png, size: size)
        try assertToneSilenceTonePicture(png, tolerance: 2)
        XCTAssertEqual(folder.files(), ["sound.m4a", "sound.png", "sound.wav"])
    }

    func testAWrongStatedLengthAndReplacingAnOldPicture() throws {
        // An M4A whose header states half its length (mdhd): the first pass is off, and the
        // renderer decodes again with the real count. (Raw ADTS, which states no length, is
        // not read at all: kioskcam reads only its own containers.)
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav", aac = folder.path + "/sound.m4a", png = folder.path + "/sound.png"
        try writeToneSilenceTone(wav)
        try Tool.run("ffmpeg", ["-v", "error", "-i", wav, "-c:a", "aac", aac])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: aac)))
        let mdhd = try XCTUnwrap((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)] == ArraySlice("mdhd".utf8) })
        XCTAssertEqual(bytes[mdhd + 4], 0, "version 0: 32-bit times")
        let at = mdhd + 4 + 4 + 4 + 4 + 4   // version/flags, creation, modification, timescale
        let duration = bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } / 2
        bytes.replaceSubrange(at..<(at + 4), with: [UInt8(duration >> 24), UInt8(duration >> 16 & 0xFF), UInt8(duration >> 8 & 0xFF), UInt8(duration & 0xFF)])
        try Data(bytes).write(to: URL(fileURLWithPath: aac))
        let adts = folder.path + "/raw.aac"
        try Tool.run("ffmpeg", ["-v", "error", "-i", wav, "-c:a", "aac", "-f", "adts", adts])
        assertRefused(adts, in: folder, mentioning: "raw AAC (ADTS)")
        try FileManager.default.removeItem(atPath: adts)
        let decoder = try AudioFileDecoder(path: aac)
        let stated = try XCTUnwrap(decoder.expectedFrames)
        let decoded = try decoder.decode { _ in }
        XCTAssertGreaterThan(abs(decoded - stated), decoded / size.width, "the estimate is off by more than a column")
        try Data("old picture".utf8).write(to: URL(fileURLWithPath: png))
        try WaveformRenderer.render(audioFile: aac, to: png, size: size)
        try assertToneSilenceTonePicture(png, tolerance: 2)
        XCTAssertEqual(folder.files(), ["sound.m4a", "sound.png", "sound.wav"])
    }

    func testDecoderMixesChannelsToMonoFloat() throws {
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav"
        try writeToneSilenceTone(wav)
        let decoder = try AudioFileDecoder(path: wav)
        XCTAssertEqual(decoder.sampleRate, rate)
        XCTAssertEqual(decoder.channelCount, 2)
        XCTAssertEqual(decoder.codecName, "pcm_s16le")
        XCTAssertEqual(decoder.expectedFrames, 3 * rate)
        var samples: [Float] = []
        let frames = try decoder.decode { samples.append(contentsOf: $0) }
        XCTAssertEqual(frames, 3 * rate)
        XCTAssertEqual(samples.count, 3 * rate)
        for frame in stride(from: 0, to: 3 * rate, by: 997) {
            let loud = frame < rate || frame >= 2 * rate
            let expected = loud ? Float((sin(2 * Double.pi * 440 * Double(frame) / Double(rate)) * 16384).rounded() / 32768) : 0
            XCTAssertEqual(samples[frame], expected, accuracy: 1e-6, "frame \(frame)")
        }
        XCTAssertEqual(decoder.damagedPackets, 0)
        XCTAssertThrowsError(try decoder.decode { _ in }) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput)
        }
    }

    func testEverySampleFormatMixesToTheSameColumns() throws {
        // Each codec's decoder gives the sample format in the comment.
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav"
        try writeToneSilenceTone(wav, third: 0.25)
        let reference = try WaveformRenderer.columns(of: wav, count: 60)
        // In the containers kioskcam reads (WAV, MP4/M4A): ALAC's decoder gives the planar formats.
        let codecs = ["pcm_f32le": "flt", "pcm_s32le": "s32", "alac": "s16p", "alac-24": "s32p",
                      "pcm_f64le": "dbl", "pcm_u8": "u8", "flac": "s16", "libopus": "flt"].sorted { $0.key < $1.key }
        func path(_ codec: String) -> String {
            folder.path + "/\(codec)" + (codec.hasPrefix("pcm") ? ".wav" : codec.hasPrefix("alac") ? ".m4a" : ".mp4")
        }
        func arguments(_ codec: String) -> [String] {
            switch codec {
            case "alac-24": ["-c:a", "alac", "-sample_fmt", "s32p"]
            case "flac", "libopus": ["-c:a", codec, "-strict", "-2"]
            default: ["-c:a", codec]
            }
        }
        // One ffmpeg run for all (each start costs ~0.1 s); without Opus if this build lacks it.
        func outputs(_ names: [String]) -> [String] { names.flatMap { arguments($0) + [path($0)] } }
        let names = codecs.map(\.key)
        if try Tool.run("ffmpeg", ["-v", "error", "-i", wav] + outputs(names), allowFailure: true).status != 0 {
            try Tool.run("ffmpeg", ["-v", "error", "-y", "-i", wav] + outputs(names.filter { $0 != "libopus" }))
        }
        var tested: [String] = []
        for (codec, format) in codecs where codec != "libopus" || FileManager.default.fileExists(atPath: path(codec)) {
            let columns = try WaveformRenderer.columns(of: path(codec), count: 60)
            tested.append(format)
            // 8-bit keeps 1/128 steps; Opus is lossy. The others are lossless, but NUT states
            // a length one packet short, within the one column the renderer tolerates, so
            // the last columns' edges move by a fraction of a column (a different peak).
            let tolerance: Float = codec == "libopus" ? 0.05 : codec == "pcm_u8" ? 0.01 : 0.002
            for index in Array(2..<18) + Array(22..<38) + Array(42..<58) {
                XCTAssertEqual(columns[index].max, reference[index].max, accuracy: tolerance, "\(codec) (\(format)) column \(index)")
                XCTAssertEqual(columns[index].min, reference[index].min, accuracy: tolerance, "\(codec) (\(format)) column \(index)")
            }
        }
        XCTAssertEqual(Set(tested), ["flt", "s32", "s16p", "s32p", "dbl", "u8", "s16"])
    }

    func testChannelsAreAveraged() throws {
        let folder = TemporaryDirectory()
        let wav = folder.path + "/left.wav"
        try writeToneSilenceTone(wav, third: 0.25, leftOnly: true)
        let columns = try WaveformRenderer.columns(of: wav, count: 60)
        XCTAssertEqual(columns[10].max, 0.25, accuracy: 0.01)
        XCTAssertEqual(columns[10].min, -0.25, accuracy: 0.01)
        XCTAssertEqual(columns[30].max, 0)
    }

    func testPNGEncoderWritesWhatItIsGiven() throws {
        let folder = TemporaryDirectory()
        var pixels: [UInt8] = []
        for y in 0..<16 { for x in 0..<24 { pixels += [UInt8(x * 10), UInt8(y * 15), 200, 128] } }
        let png = try PNGEncoder.encode(pixels, size: FrameSize(width: 24, height: 16), layout: .rgba)
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let path = folder.path + "/picture.png"
        try Data(png).write(to: URL(fileURLWithPath: path))
        let rgb = try readPNG(path)
        XCTAssertEqual(rgb.count, 24 * 16 * 3)
        XCTAssertEqual(Array(rgb[(5 * 24 + 7) * 3..<(5 * 24 + 7) * 3 + 3]), [70, 75, 200])
        XCTAssertThrowsError(try PNGEncoder.encode([1, 2, 3], size: FrameSize(width: 24, height: 16))) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput)
        }
    }

    // MARK: Files that are not sound

    /// Renders `input` expecting `MediaError.invalidInput` naming it, and no picture.
    private func assertRefused(_ input: String, in folder: TemporaryDirectory, mentioning words: String? = nil,
                               file: StaticString = #filePath, line: UInt = #line) {
        let png = folder.path + "/out.png"
        XCTAssertThrowsError(try WaveformRenderer.render(audioFile: input, to: png, size: size), file: file, line: line) { error in
            guard let error = error as? MediaError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, .invalidInput, "\(error)", file: file, line: line)
            XCTAssertEqual(error.subject, input, file: file, line: line)
            XCTAssertTrue(error.description.contains(input), error.description, file: file, line: line)
            if let words { XCTAssertTrue(error.description.contains(words), error.description, file: file, line: line) }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: png), file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: png + ".tmp"), file: file, line: line)
    }

    func testMissingFileIsInvalidInputNamingIt() {
        let folder = TemporaryDirectory()
        assertRefused(folder.path + "/nowhere.m4a", in: folder, mentioning: "No such file or directory")
    }

    func testFilesWithoutSoundAreInvalidInputNamingThem() throws {
        let folder = TemporaryDirectory()
        let jpeg = folder.path + "/still.jpg", mp4 = folder.path + "/silent-film.mp4", text = folder.path + "/notes.m4a"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=c=red:s=64x64", "-frames:v", "1", jpeg])
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=d=0.2:s=64x64:r=10", "-c:v", "mpeg4", mp4])
        try Data("this is not a recording\n".utf8).write(to: URL(fileURLWithPath: text))
        assertRefused(jpeg, in: folder, mentioning: "no audio stream")   // kioskcam's stills are read (thumbnails)
        assertRefused(mp4, in: folder, mentioning: "no audio stream (it holds video mpeg4)")
        assertRefused(text, in: folder)
        XCTAssertEqual(folder.files(), ["notes.m4a", "silent-film.mp4", "still.jpg"])
    }

    func testDamagedSoundIsSkippedAndCountedOrRefused() throws {
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav", m4a = folder.path + "/sound.m4a"
        try writeToneSilenceTone(wav, third: 0.25)
        try Tool.run("ffmpeg", ["-v", "error", "-i", wav, "-c:a", "aac", m4a])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: m4a)))
        let mdat = try XCTUnwrap((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)] == ArraySlice("mdat".utf8) })
        let payloadEnd = mdat - 4 + Int(bytes[(mdat - 4)..<mdat].reduce(0) { $0 << 8 | UInt32($1) })

        // A quarter of the bytes scrambled: the picture still comes, the damage is counted,
        // and silence stands in for it so the rest stays in place.
        var state: UInt32 = 2024
        func scramble(_ range: Range<Int>) {
            for index in range {
                state = state &* 1_664_525 &+ 1_013_904_223
                bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
            }
        }
        for start in stride(from: mdat + 4 + 400, to: payloadEnd - 200, by: 800) { scramble(start..<(start + 200)) }
        try Data(bytes).write(to: URL(fileURLWithPath: m4a))
        let decoder = try AudioFileDecoder(path: m4a)
        let frames = try decoder.decode { _ in }
        XCTAssertGreaterThan(decoder.damagedPackets, 0)
        XCTAssertEqual(frames, 3 * rate / 4, accuracy: 1024, "as long as the undamaged sound")
        let summary = try WaveformRenderer.render(audioFile: m4a, to: folder.path + "/damaged.png", size: size)
        XCTAssertEqual(summary.damagedPackets, decoder.damagedPackets)
        XCTAssertEqual(summary.frames, frames)
        XCTAssertEqual(summary.sampleRate, rate)
        try FileManager.default.removeItem(atPath: folder.path + "/damaged.png")

        // All of it scrambled: nothing to draw, and the error says why.
        scramble((mdat + 4)..<payloadEnd)
        try Data(bytes).write(to: URL(fileURLWithPath: m4a))
        assertRefused(m4a, in: folder, mentioning: "could be decoded")
    }

    func testUnwritableDestinationAndBadSizeLeaveNothing() throws {
        let folder = TemporaryDirectory()
        let wav = folder.path + "/sound.wav"
        try TestMedia.writeWAV(wav, seconds: 0.1)
        let png = folder.path + "/missing-folder/sound.png"
        XCTAssertThrowsError(try WaveformRenderer.render(audioFile: wav, to: png)) { error in
            XCTAssertEqual((error as? MediaError)?.code, .io, "\(error)")
            XCTAssertEqual((error as? MediaError)?.subject, png + ".tmp")
        }
        XCTAssertThrowsError(try WaveformRenderer.render(audioFile: wav, to: folder.path + "/x.png",
                                                         size: FrameSize(width: 8, height: 200))) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
        }
        XCTAssertThrowsError(try WaveformRenderer.render(audioFile: wav, to: folder.path + "/./sound.wav")) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
        }
        XCTAssertEqual(folder.files(), ["sound.wav"])
        XCTAssertEqual(try AudioFileDecoder(path: wav).expectedFrames, 4800, "the recording is untouched")
    }

    func testDefaultSizeIs800x200() throws {
        // TestMedia's tone peaks at 8000/32768 ≈ 0.244: 24 rows either side of row 100.
        let folder = TemporaryDirectory()
        let wav = folder.path + "/short.wav", png = folder.path + "/short.png"
        try TestMedia.writeWAV(wav, seconds: 0.1)
        try WaveformRenderer.render(audioFile: wav, to: png)
        let picture = try XCTUnwrap(FFprobe.probe(png, countFrames: false).video)
        XCTAssertEqual(picture.width, 800)
        XCTAssertEqual(picture.height, 200)
        let pixels = try readPNG(png)
        XCTAssertEqual(pixels.count, 800 * 200 * 3)
        guard pixels.count == 800 * 200 * 3 else { return }
        // 6 frames a column, so only the columns at the sine's peaks reach them.
        let painted = (0..<200).filter { y in
            (0..<800).contains { x in
                let offset = (y * 800 + x) * 3
                return RGBColour(red: pixels[offset], green: pixels[offset + 1], blue: pixels[offset + 2]) != colours.background
            }
        }
        XCTAssertEqual(painted, Array(76...124))
    }
}
