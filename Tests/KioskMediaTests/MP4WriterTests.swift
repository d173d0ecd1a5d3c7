import Foundation
import KioskCore
import KioskTestSupport
import XCTest

@testable import KioskMedia

/// Real libavcodec/libavformat on synthetic frames; every file is checked with ffprobe.
final class MP4WriterTests: XCTestCase {
    let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuyv, framesPerSecond: 30)
    let audioFormat = AudioFormat(sampleRate: 48_000, channels: 1)

    /// Writes `frames` test-pattern frames and the matching tone, 1/30 s apart.
    func writeClip(_ path: String, frames: Int, pixelFormat: PixelFormat = .yuyv, audio: Bool = true, finish: Bool = true) throws -> MP4Writer {
        var videoFormat = format
        videoFormat.pixelFormat = pixelFormat
        let writer = try MP4Writer(settings: MP4WriterSettings(
            path: path, video: VideoTrackSettings(input: videoFormat),
            audio: audio ? AudioTrackSettings(input: audioFormat) : nil))
        let renderer = TestPatternRenderer(format: videoFormat)
        var pixels = [UInt8](repeating: 0, count: videoFormat.frameByteCount)
        var tone = ToneGenerator(format: audioFormat, frequency: 1000)
        var samples = [Int16](repeating: 0, count: 1600)  // one frame's worth at 48 kHz
        for index in 0..<frames {
            pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: index, caption: Array("2026-01-01".utf8)) }
            try pixels.withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: Int64(index) * 1_000_000_000 / 30) }
            if audio {
                samples.withUnsafeMutableBufferPointer { tone.fill($0, frameCount: 1600) }
                try samples.withUnsafeBufferPointer { try writer.writeAudio($0) }
            }
        }
        if finish { try writer.finish() }
        return writer
    }

    func testVideoAndAudioFileHasEveryFrameAndAlignedTracks() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/clip.mp4"
        let writer = try writeClip(path, frames: 90)
        XCTAssertEqual(writer.videoFrameCount, 90)
        XCTAssertGreaterThan(writer.bytesWritten, 10_000)

        let probe = try FFprobe.probe(path)
        let video = try XCTUnwrap(probe.video)
        let audio = try XCTUnwrap(probe.audio)
        XCTAssertEqual(video.codec_name, "h264")
        XCTAssertEqual(video.width, 320)
        XCTAssertEqual(video.height, 240)
        XCTAssertEqual(video.frameCount, 90)
        XCTAssertEqual(audio.codec_name, "aac")
        XCTAssertEqual(audio.sample_rate, "48000")
        let frame = 1.0 / 30
        XCTAssertEqual(video.durationSeconds, 3.0, accuracy: frame)
        XCTAssertEqual(audio.durationSeconds, 3.0, accuracy: frame)
        XCTAssertEqual(video.startSeconds, audio.startSeconds, accuracy: frame)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, Int(writer.bytesWritten))
    }

    func testEveryCameraLayoutEncodes() throws {
        for layout in PixelFormat.allCases {
            let folder = TemporaryDirectory()
            let path = folder.path + "/\(layout.rawValue).mp4"
            _ = try writeClip(path, frames: 10, pixelFormat: layout, audio: false)
            let video = try XCTUnwrap(FFprobe.probe(path).video, "\(layout)")
            XCTAssertEqual(video.frameCount, 10, "\(layout)")
            XCTAssertEqual(video.pix_fmt, "yuv420p", "\(layout)")
        }
    }

    func testAudioOnlyFileIsAACInM4A() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/sound.m4a"
        let writer = try MP4Writer(settings: MP4WriterSettings(path: path, video: nil, audio: AudioTrackSettings(input: audioFormat)))
        var tone = ToneGenerator(format: audioFormat, frequency: 440)
        var samples = [Int16](repeating: 0, count: 960)
        for _ in 0..<100 {  // 100 × 20 ms
            samples.withUnsafeMutableBufferPointer { tone.fill($0, frameCount: 960) }
            try samples.withUnsafeBufferPointer { try writer.writeAudio($0) }
        }
        XCTAssertEqual(writer.secondsWritten, 2.0, accuracy: 0.001)
        try writer.finish()
        let probe = try FFprobe.probe(path)
        XCTAssertNil(probe.video)
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertTrue(probe.format.format_name.contains("m4a") || probe.format.format_name.contains("mp4"))
        XCTAssertEqual(probe.format.durationSeconds, 2.0, accuracy: 0.05)
    }

    func testUnknownEncoderListsTheAvailableOnesAndLeavesNoFile() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/x.mp4"
        XCTAssertThrowsError(try MP4Writer(settings: MP4WriterSettings(
            path: path, video: VideoTrackSettings(input: format, codecName: "h264_nonexistent"), audio: nil))) { error in
            let media = error as? MediaError
            XCTAssertEqual(media?.code, .encoderNotFound)
            XCTAssertTrue("\(error)".contains("h264_nonexistent"))
            XCTAssertTrue("\(error)".contains("libx264"), "the message should list usable encoders: \(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testEncoderThatRefusesTheSizeIsAClearErrorAndLeavesNoFile() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/odd.mp4"
        let odd = VideoFormat(size: FrameSize(width: 321, height: 241), pixelFormat: .yuv420, framesPerSecond: 30)
        XCTAssertThrowsError(try MP4Writer(settings: MP4WriterSettings(path: path, video: VideoTrackSettings(input: odd), audio: nil))) { error in
            XCTAssertEqual((error as? MediaError)?.code, .encoderRejectedSettings)
            XCTAssertTrue("\(error)".contains("321x241"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testNeverOverwritesAnExistingFile() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/taken.mp4"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try MP4Writer(settings: MP4WriterSettings(path: path, video: VideoTrackSettings(input: format), audio: nil))) { error in
            XCTAssertEqual((error as? MediaError)?.code, .io)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "precious")
    }

    func testShortFrameIsRejected() throws {
        let folder = TemporaryDirectory()
        let writer = try MP4Writer(settings: MP4WriterSettings(path: folder.path + "/s.mp4", video: VideoTrackSettings(input: format), audio: nil))
        let short = [UInt8](repeating: 0, count: 100)
        XCTAssertThrowsError(try short.withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: 0) }) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput)
        }
        writer.abandon()
    }

    /// The power-cut guarantee: without a trailer the file on disk is still playable
    /// up to its last fragment, and fragments come at least every 30 frames.
    func testUnfinishedFileIsPlayableUpToItsLastFragment() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/cut.mp4"
        let writer = try writeClip(path, frames: 95, finish: false)
        writer.abandon()
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(bytes.count, size)
        let scan = FragmentedMP4Scan.scan(fileSize: Int64(size)) { offset, count in
            Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
        XCTAssertTrue(scan.hasHeader)
        XCTAssertGreaterThanOrEqual(scan.fragments, 2, "95 frames with a keyframe every 30 make ≥ 2 closed fragments")
        let report = try MediaSalvage.inspect(path)
        XCTAssertGreaterThanOrEqual(report.seconds, 2.0, "at most the open fragment (≤ 1 s) may be missing")
        XCTAssertGreaterThanOrEqual(report.videoPackets, 60)
    }

    /// At a segment cut the old file still waits for its sound tail: its video must be
    /// in the file already, so a power cut then costs no video of it. Before, its last
    /// frames stayed in the encoder and the open fragment until the file was finished,
    /// and the power-cut battery (scripts/torture) lost 2.0 s at such a kill.
    func testFinishedVideoIsInTheFileBeforeTheFileIsFinished() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/cut.mp4"
        let writer = try writeClip(path, frames: 50, finish: false)
        try writer.finishVideo()
        var samples = [Int16](repeating: 0, count: 1600)
        try samples.withUnsafeMutableBufferPointer { try writer.writeAudio(UnsafeBufferPointer($0)) }  // the sound goes on
        // A power cut now: the file as it is on disk.
        let copy = folder.path + "/as-on-disk.mp4"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let report = try MediaSalvage.inspect(copy)
        XCTAssertEqual(report.videoPackets, 50, "every frame, not just the 30 of the first fragment")
        XCTAssertEqual(report.seconds, 50.0 / 30, accuracy: 0.05)

        try writer.finish()
        let probe = try FFprobe.probe(path)
        XCTAssertEqual(probe.video?.frameCount, 50)
        XCTAssertEqual(probe.audio?.durationSeconds ?? 0, 51.0 / 30, accuracy: 0.05, "the sound tail after the video's end is kept")
    }

    func testSalvageRemuxRecoversATornFile() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/torn.mp4"
        _ = try writeClip(path, frames: 120)
        // Tear the file mid-fragment, as a power cut would.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        let size = handle.seekToEndOfFile()
        handle.truncateFile(atOffset: size * 2 / 3)
        handle.closeFile()
        let repaired = folder.path + "/repaired.mp4"
        let report = try MediaSalvage.remux(input: path, output: repaired)
        XCTAssertGreaterThan(report.videoPackets, 30)
        let probe = try FFprobe.probe(repaired)
        XCTAssertEqual(probe.video?.frameCount, report.videoPackets)
        XCTAssertNotNil(probe.audio)
    }

    func testSalvageOfGarbageIsInvalidInput() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/garbage.mp4"
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try MediaSalvage.inspect(path)) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput)
        }
    }

    func testJPEGStillDecodes() throws {
        let encoder = try JPEGEncoder(input: format, quality: 90)
        let renderer = TestPatternRenderer(format: format)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: 0, caption: []) }
        let jpeg = try pixels.withUnsafeBytes { try encoder.encode($0) }
        XCTAssertEqual(Array(jpeg.prefix(2)), [0xFF, 0xD8])
        XCTAssertEqual(Array(jpeg.suffix(2)), [0xFF, 0xD9])
        let folder = TemporaryDirectory()
        let path = folder.path + "/still.jpg"
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let video = try XCTUnwrap(FFprobe.probe(path, countFrames: false).video)
        XCTAssertEqual(video.codec_name, "mjpeg")
        XCTAssertEqual(video.width, 320)
        XCTAssertEqual(video.height, 240)
        // A lower quality gives a smaller file from the same frame.
        let small = try pixels.withUnsafeBytes { try JPEGEncoder(input: format, quality: 10).encode($0) }
        XCTAssertLessThan(small.count, jpeg.count)
    }

    /// The daemon keeps one encoder for every still it takes.
    func testOneJPEGEncoderTakesStillAfterStill() throws {
        let encoder = try JPEGEncoder(input: format, quality: 90)
        let renderer = TestPatternRenderer(format: format)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        for sequence in 0..<3 {
            pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: sequence, caption: []) }
            let jpeg = try pixels.withUnsafeBytes { try encoder.encode($0) }
            XCTAssertEqual(Array(jpeg.prefix(2)), [0xFF, 0xD8], "still \(sequence)")
        }
    }

    func testAvailableEncodersIncludeLibx264() {
        XCTAssertTrue(availableH264Encoders().contains("libx264"))
        XCTAssertTrue(MediaCapabilities.hasVideoEncoder("libx264"))
        XCTAssertFalse(MediaCapabilities.hasVideoEncoder("aac"), "an audio encoder is not a video encoder")
        XCTAssertFalse(MediaCapabilities.hasVideoEncoder("nope"))
    }
}
