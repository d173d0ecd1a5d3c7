import Foundation
import KioskCore
import KioskTestSupport
import XCTest

@testable import KioskMedia

/// `camera.rotation`/`camera.mirror`: recordings carry a display matrix (ffprobe reads the
/// turn back), clips cut from them keep it, and stills are turned pixel for pixel as
/// ffmpeg's own transpose turns them.
final class OrientationTests: XCTestCase {
    let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuyv, framesPerSecond: 30)

    func frame(_ index: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        pixels.withUnsafeMutableBytes { TestPatternRenderer(format: format).render(into: $0, sequence: index, caption: Array("TURN".utf8)) }
        return pixels
    }

    func writeClip(_ path: String, orientation: PictureOrientation) throws {
        var video = VideoTrackSettings(input: format)
        video.orientation = orientation
        let writer = try MP4Writer(settings: MP4WriterSettings(path: path, video: video, audio: nil))
        for index in 0..<35 {
            try frame(index).withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: Int64(index) * 1_000_000_000 / 30) }
        }
        try writer.finish()
    }

    /// The `rotation` ffprobe reads from the video stream's display matrix; nil without one.
    func probedRotation(_ path: String) throws -> Int? {
        let output = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream_side_data=rotation",
                                              "-of", "csv=p=0", path])
        return Int(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testRecordingsCarryTheTurnAsTheirDisplayMatrix() throws {
        let folder = TemporaryDirectory()
        // As a phone's portrait video: a picture to turn 90° clockwise reads -90.
        let cases: [(PictureOrientation, Int?)] = [
            (.upright, nil), (PictureOrientation(rotation: .quarter), -90), (PictureOrientation(rotation: .threeQuarters), 90),
            // Turned then mirrored is a transpose: the angle reads the same, the flip is in the
            // sign of the matrix's third entry (FFmpeg 6.1+ plays it as transpose=cclock_flip,
            // which is what the still test's "transpose=clock,hflip" shows).
            (PictureOrientation(rotation: .quarter, mirror: true), -90),
        ]
        for (index, (orientation, expected)) in cases.enumerated() {
            let path = folder.path + "/turn-\(index).mp4"
            try writeClip(path, orientation: orientation)
            XCTAssertEqual(try probedRotation(path), expected, "\(orientation)")
            let probe = try FFprobe.probe(path)
            XCTAssertEqual(probe.video?.width, 320, "the pixels stay as the camera gave them")
        }
        // What a player does with it: ffmpeg's autorotate turns the quarter clockwise.
        let quarter = folder.path + "/turn-1.mp4"
        func firstFrame(_ options: [String], _ name: String) throws -> Data {
            let out = folder.path + "/" + name
            try Tool.run("ffmpeg", ["-v", "error"] + options + ["-frames:v", "1", "-pix_fmt", "gray", "-f", "rawvideo", "-y", out])
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let played = try firstFrame(["-i", quarter], "played.gray")
        let clockwise = try firstFrame(["-noautorotate", "-i", quarter, "-vf", "transpose=clock"], "clockwise.gray")
        let anticlockwise = try firstFrame(["-noautorotate", "-i", quarter, "-vf", "transpose=cclock"], "anticlockwise.gray")
        XCTAssertEqual(played.count, 320 * 240)
        XCTAssertEqual(played, clockwise, "autorotate turns the picture clockwise")
        XCTAssertNotEqual(played, anticlockwise)
        let half = folder.path + "/half.mp4"
        try writeClip(half, orientation: PictureOrientation(rotation: .half))
        XCTAssertEqual(try probedRotation(half).map(abs), 180)
        // A clip cut from a turned recording is still turned.
        let turned = folder.path + "/turn-1.mp4"
        let outline = try ClipCopy.outline(of: turned)
        let clip = folder.path + "/clip.mp4"
        _ = try ClipCopy.copy(input: turned, output: clip, range: ClipRange(start: 0, end: 1, endWasClamped: false), outline: outline)
        XCTAssertEqual(try probedRotation(clip), -90)
        // So is a re-encoded one, smaller or not, for every turn and mirror.
        for (index, (orientation, expected)) in cases.enumerated() {
            let small = folder.path + "/small-\(index).mp4"
            _ = try ClipTranscode.write(input: folder.path + "/turn-\(index).mp4", output: small,
                                        range: ClipRange(start: 0.5, end: 1, endWasClamped: false),
                                        size: FrameSize(width: 160, height: 90), bitrate: nil)
            XCTAssertEqual(try probedRotation(small), expected, "re-encoded \(orientation)")
            XCTAssertEqual(try VideoFileDecoder(path: small).orientation, orientation)
        }
    }

    /// A JPEG decoded to 8-bit grey by ffmpeg, through `filter` ("null" for none).
    func grey(_ jpeg: [UInt8], filter: String, folder: TemporaryDirectory) throws -> [UInt8] {
        let input = folder.path + "/\(UUID().uuidString).jpg", output = input + ".gray"
        try Data(jpeg).write(to: URL(fileURLWithPath: input))
        try Tool.run("ffmpeg", ["-v", "error", "-i", input, "-vf", filter, "-pix_fmt", "gray", "-f", "rawvideo", "-y", output])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }

    func testStillsAreTurnedLikeFFmpegTurnsThem() throws {
        let folder = TemporaryDirectory()
        let pixels = frame(7)
        let upright = try pixels.withUnsafeBytes { try JPEGEncoder(input: format, quality: 95).encode($0) }
        let cases: [(PictureOrientation, String, String)] = [
            (PictureOrientation(rotation: .quarter), "transpose=clock", "transpose=cclock"),
            (PictureOrientation(rotation: .half), "hflip,vflip", "null"),
            (PictureOrientation(rotation: .threeQuarters), "transpose=cclock", "transpose=clock"),
            (PictureOrientation(rotation: .quarter, mirror: true), "transpose=clock,hflip", "transpose=clock"),
            (PictureOrientation(mirror: true), "hflip", "null"),
        ]
        for (orientation, same, other) in cases {
            let jpeg = try pixels.withUnsafeBytes { try JPEGEncoder(input: format, quality: 95, orientation: orientation).encode($0) }
            let size = try FFprobe.probe(folder.path + "/" + { () -> String in
                let name = "probe-\(UUID().uuidString).jpg"
                try? Data(jpeg).write(to: URL(fileURLWithPath: folder.path + "/" + name))
                return name
            }(), countFrames: false).video
            XCTAssertEqual(size?.width, orientation.rotation.swapsAxes ? 240 : 320, "\(orientation)")
            let turned = try grey(jpeg, filter: "null", folder: folder)
            let expected = try grey(upright, filter: same, folder: folder)
            let wrong = try grey(upright, filter: other, folder: folder)
            XCTAssertLessThan(meanDifference(turned, expected), 3, "\(orientation) against \(same)")
            XCTAssertGreaterThan(meanDifference(turned, wrong), 10, "\(orientation) against \(other)")
        }
    }
}
