import Foundation
import KioskCore
import KioskMedia
import KioskTestSupport
import XCTest

/// Thumbnails and the decoder's seek, on files ffmpeg made (real H.264, JPEG, AAC).
final class MediaThumbnailTests: XCTestCase {
    /// A 1280x720 H.264 video: red for the first second, then blue; a keyframe every 30 frames.
    private func video(in folder: TemporaryDirectory, seconds: Int = 4) throws -> String {
        let path = folder.path + "/video/20261124/101500.mp4"
        try FileManager.default.createDirectory(atPath: folder.path + "/video/20261124", withIntermediateDirectories: true)
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=red:size=1280x720:rate=30:duration=1",
                                "-f", "lavfi", "-i", "color=blue:size=1280x720:rate=30:duration=\(seconds - 1)",
                                "-filter_complex", "[0:v][1:v]concat=n=2:v=1[v]", "-map", "[v]",
                                "-c:v", "libx264", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0",
                                "-pix_fmt", "yuv420p", path])
        return path
    }

    /// The PNG's pixels as RGB24, read back by ffmpeg (not by our own code), and its size.
    private func pixels(of png: String) throws -> (bytes: [UInt8], size: (Int, Int)) {
        let probe = try FFprobe.probe(png, countFrames: false)
        let raw = png + ".rgb"
        try Tool.run("ffmpeg", ["-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        return (bytes, (probe.video?.width ?? 0, probe.video?.height ?? 0))
    }

    private func centre(_ picture: (bytes: [UInt8], size: (Int, Int))) -> (Int, Int, Int) {
        let (w, h) = picture.size
        let i = ((h / 2) * w + w / 2) * 3
        return (Int(picture.bytes[i]), Int(picture.bytes[i + 1]), Int(picture.bytes[i + 2]))
    }

    func testAVideoThumbnailIsItsFirstPictureFittedAndStoredOnce() throws {
        let folder = TemporaryDirectory()
        let path = try video(in: folder)
        let png = try MediaThumbnail.stored(for: path, kind: .video, size: MediaViewLayout.thumbnailSize)
        XCTAssertEqual(png, folder.path + "/video/20261124/.thumbs/101500.mp4.png")
        let picture = try pixels(of: png)
        XCTAssertEqual(picture.size.0, 192)
        XCTAssertEqual(picture.size.1, 108)
        let (r, g, b) = centre(picture)
        XCTAssertGreaterThan(r, 200, "the first second is red")
        XCTAssertLessThan(g, 40)
        XCTAssertLessThan(b, 40)

        // Made once: a second call finds it and does not write it again.
        var before = stat(), after = stat()
        XCTAssertEqual(stat(png, &before), 0)
        usleep(20_000)
        XCTAssertEqual(try MediaThumbnail.stored(for: path, kind: .video, size: MediaViewLayout.thumbnailSize), png)
        XCTAssertEqual(stat(png, &after), 0)
        XCTAssertEqual(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec)
        XCTAssertEqual(before.st_ino, after.st_ino)
        // The day's listing does not take the folder for a recording.
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/video/20261124/.thumbs")
            .contains { $0.hasSuffix(".tmp") })
    }

    func testAPhotoThumbnailKeepsItsAspect() throws {
        let folder = TemporaryDirectory()
        let jpeg = folder.path + "/101500.jpg"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=0x00ff00:size=640x480", "-frames:v", "1", jpeg])
        let png = try MediaThumbnail.stored(for: jpeg, kind: .photo, size: MediaViewLayout.thumbnailSize)
        let picture = try pixels(of: png)
        XCTAssertEqual(picture.size.0, 144, "4:3 into 192x108 is 144x108")
        XCTAssertEqual(picture.size.1, 108)
        let (r, g, b) = centre(picture)
        XCTAssertLessThan(r, 40)
        XCTAssertGreaterThan(g, 200)
        XCTAssertLessThan(b, 40)
    }

    func testASoundThumbnailIsItsWaveform() throws {
        let folder = TemporaryDirectory()
        let m4a = folder.path + "/101500.m4a"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-af", "volume=6", "-c:a", "aac", m4a])
        let png = try MediaThumbnail.stored(for: m4a, kind: .audio, size: MediaViewLayout.thumbnailSize)
        let picture = try pixels(of: png)
        XCTAssertEqual(picture.size.0, 192)
        let background = WaveformColours.standard.background
        let waveform = WaveformColours.standard.waveform
        // A loud tone fills most of the height: a pixel a quarter down the middle column is waveform.
        let i = ((108 / 4) * 192 + 96) * 3
        XCTAssertEqual([picture.bytes[i], picture.bytes[i + 1], picture.bytes[i + 2]], [waveform.red, waveform.green, waveform.blue])
        XCTAssertEqual([picture.bytes[0], picture.bytes[1], picture.bytes[2]], [background.red, background.green, background.blue])
    }

    func testAFileThatIsNotMediaIsAClearError() throws {
        let folder = TemporaryDirectory()
        let bogus = folder.path + "/101500.mp4"
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: bogus))
        XCTAssertThrowsError(try MediaThumbnail.stored(for: bogus, kind: .video, size: MediaViewLayout.thumbnailSize)) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
            XCTAssertTrue("\(error)".contains(bogus), "\(error)")
        }
        XCTAssertThrowsError(try MediaThumbnail.stored(for: folder.path + "/gone.mp4", kind: .video, size: MediaViewLayout.thumbnailSize))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path + "/.thumbs/101500.mp4.png"))
    }

    func testSeekLandsOnTheKeyframeBeforeAndDecodesForward() throws {
        let folder = TemporaryDirectory()
        let path = try video(in: folder)
        let decoder = try VideoFileDecoder(path: path)
        XCTAssertEqual(decoder.durationSeconds ?? 0, 4, accuracy: 0.1)
        try decoder.seek(to: 2.5)
        var times: [Double] = []
        var firstPixel: [UInt8] = []
        try decoder.decode(scaledTo: FrameSize(width: 64, height: 36), layout: .bgrx) { bytes, seconds in
            if times.isEmpty { firstPixel = Array(bytes.prefix(4)) }
            times.append(seconds)
            return true
        }
        XCTAssertEqual(times.first ?? -1, 2.0, accuracy: 0.001, "the keyframe at 2 s, the one before 2.5 s")
        XCTAssertEqual(times.count, 60, "2.0 s to the end at 30 fps")
        XCTAssertGreaterThan(firstPixel[0], 200, "blue, stored B G R X")
        XCTAssertLessThan(firstPixel[2], 40)
        XCTAssertThrowsError(try decoder.seek(to: .infinity))
    }
}
