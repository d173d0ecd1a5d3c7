import Foundation
import KioskTestSupport
import XCTest

/// `kioskcam record` from a raw-file camera in layouts that are not YUYV/YU12/NV12: the
/// whole path (file camera → queue → libswscale → libx264 → MP4) and the picture that
/// comes out, compared with the ffmpeg CLI's own reading of the same frames.
final class PixelFormatRecordingTests: XCTestCase {
    let size = "320x240"
    /// Enough for a second even when the file camera, which does not wait for the
    /// recorder, runs ahead of it while the recording starts.
    let frames = 90

    /// Records one second from `frames` of ffmpeg's testsrc2 written in `ffmpegName`,
    /// announced to kioskcam as `fourcc`.
    func record(fourcc: String, ffmpegName: String) throws {
        let folder = TemporaryDirectory()
        let raw = folder.path + "/frames.\(fourcc).raw"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-frames:v", String(frames),
                                "-pix_fmt", ffmpegName, "-f", "rawvideo", "-y", raw])
        let result = try Tool.run(Package.kioskcamBinary, [
            "record", "--camera", "file:" + raw, "--pixel-format", fourcc, "--size", size, "--fps", "30",
            "--mic", "none", "--duration", "1s", "--root", folder.path + "/media", "--quiet",
        ], allowFailure: true)
        XCTAssertEqual(result.status, 0, "\(fourcc): \(result.stderr)")
        XCTAssertTrue(result.stderr.contains(fourcc), "the log names the layout: \(result.stderr)")
        let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let probe = try FFprobe.probe(path)
        let video = try XCTUnwrap(probe.video, fourcc)
        XCTAssertEqual(video.codec_name, "h264", fourcc)
        XCTAssertEqual(video.width, 320, fourcc)
        XCTAssertEqual(video.height, 240, fourcc)
        XCTAssertEqual(video.pix_fmt, "yuv420p", "\(fourcc): the recording is 4:2:0, whatever the camera gave")
        XCTAssertEqual(video.frameCount, 30, fourcc)
        XCTAssertEqual(probe.format.durationSeconds, 1.0, accuracy: 0.05, fourcc)

        // The first recorded picture is one of the file's frames (the file camera may have
        // run ahead while the recording started), as the ffmpeg CLI reads it: H.264 at this
        // bitrate keeps it well above 30 dB, a misread layout or swapped colours do not.
        let recorded = folder.path + "/recorded.yuv", original = folder.path + "/original.yuv"
        try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-frames:v", "1", "-pix_fmt", "yuv420p", "-f", "rawvideo", "-y", recorded])
        try Tool.run("ffmpeg", ["-v", "error", "-f", "rawvideo", "-pix_fmt", ffmpegName, "-s", size, "-i", raw,
                                "-pix_fmt", "yuv420p", "-f", "rawvideo", "-y", original])
        let ours = try [UInt8](Data(contentsOf: URL(fileURLWithPath: recorded)))
        let all = try [UInt8](Data(contentsOf: URL(fileURLWithPath: original)))
        let luma = 320 * 240, chroma = luma / 4, frameBytes = luma + 2 * chroma
        XCTAssertEqual(ours.count, frameBytes, fourcc)
        XCTAssertEqual(all.count, frameBytes * frames, fourcc)
        guard ours.count == frameBytes, all.count == frameBytes * frames else { return }
        func psnr(_ frame: Int, _ range: Range<Int>) -> Double {
            let base = frame * frameBytes
            let squares = range.reduce(0.0) { $0 + pow(Double(Int(ours[$1]) - Int(all[base + $1])), 2) }
            return squares == 0 ? .infinity : 10 * log10(255 * 255 / (squares / Double(range.count)))
        }
        let lumaRange = 0..<luma
        // Which frame: found on every 13th luma sample (a debug build is slow), then measured in full.
        func distance(_ frame: Int) -> Int {
            stride(from: 0, to: luma, by: 13).reduce(0) { $0 + abs(Int(ours[$1]) - Int(all[frame * frameBytes + $1])) }
        }
        let best = (0..<frames).min { distance($0) < distance($1) } ?? 0
        for (name, range) in [("Y", lumaRange), ("U", luma..<(luma + chroma)), ("V", (luma + chroma)..<frameBytes)] {
            XCTAssertGreaterThan(psnr(best, range), 30, "\(fourcc) \(name) PSNR against file frame \(best)")
        }
    }

    func testRecordsNV21() throws { try record(fourcc: "NV21", ffmpegName: "nv21") }

    func testRecordsRGB3() throws { try record(fourcc: "RGB3", ffmpegName: "rgb24") }

    func testRecordsXR24() throws { try record(fourcc: "XR24", ffmpegName: "bgr0") }

    func testRecords422P() throws { try record(fourcc: "422P", ffmpegName: "yuv422p") }

    func testAWrongLayoutNamesTheRightOnes() throws {
        let folder = TemporaryDirectory()
        let result = try Tool.run(Package.kioskcamBinary, ["record", "--camera", "test", "--pixel-format", "RGB", "--duration", "1s",
                                                           "--root", folder.path], allowFailure: true)
        XCTAssertEqual(result.status, 64, result.stderr)
        for fourcc in ["\"NV21\"", "\"YV12\"", "\"RGB3\"", "\"XR24\"", "\"BA81\"", "\"GREY\""] {
            XCTAssertTrue(result.stderr.contains(fourcc), "names \(fourcc): \(result.stderr)")
        }
    }
}
