import Foundation
import KioskCore
@testable import KioskMedia
import KioskTestSupport
import XCTest

/// Choosing the encoder by name: `auto` looks for a V4L2 encoder by the kernel's node
/// names before libavcodec opens every /dev/video* node looking for one.
final class VideoEncodersTests: XCTestCase {
    private func sysfs(_ names: [String]) throws -> TemporaryDirectory {
        let folder = TemporaryDirectory()
        for (index, name) in names.enumerated() {
            let node = folder.path + "/video\(index)"
            try FileManager.default.createDirectory(atPath: node, withIntermediateDirectories: true)
            try (name + "\n").write(toFile: node + "/name", atomically: true, encoding: .utf8)
        }
        return folder
    }

    func testAnEncoderNodeIsRecognisedByItsName() throws {
        XCTAssertFalse(VideoEncoders.hasV4L2EncoderNode(sysfs: "/nonexistent/video4linux"), "no video4linux at all")
        // Each folder is kept until the check has run (it is removed when let go).
        let empty = try sysfs([])
        XCTAssertFalse(VideoEncoders.hasV4L2EncoderNode(sysfs: empty.path))
        let cameras = try sysfs(["vivid-000-vid-cap", "vivid-000-vid-out", "UVC Camera (046d:0825)"])
        XCTAssertFalse(VideoEncoders.hasV4L2EncoderNode(sysfs: cameras.path), "cameras are not encoders")
        let pi4 = try sysfs(["unicam-image", "bcm2835-codec-decode", "bcm2835-codec-encode"])
        XCTAssertTrue(VideoEncoders.hasV4L2EncoderNode(sysfs: pi4.path), "a Raspberry Pi 4's encoder")
        let rockchip = try sysfs(["rkvenc"])
        XCTAssertTrue(VideoEncoders.hasV4L2EncoderNode(sysfs: rockchip.path))
    }

    func testAutoFallsBackToLibx264AndSaysWhy() throws {
        let input = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuv420, framesPerSecond: 30)
        let (encoder, reason) = try VideoEncoders.open(VideoTrackSettings(input: input, codecName: "auto"))
        guard !VideoEncoders.hasV4L2EncoderNode() else {
            throw XCTSkip("this machine has a V4L2 encoder node; auto chose \(encoder.name): \(reason)")
        }
        XCTAssertEqual(encoder.name, "libx264")
        XCTAssertTrue(reason.hasPrefix("libx264: no hardware encoder works here"), reason)
        XCTAssertTrue(reason.contains("h264_v4l2m2m"), "names the hardware encoder it passed over: \(reason)")
    }

    func testNullAndUnknownNames() throws {
        let input = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuv420, framesPerSecond: 30)
        XCTAssertEqual(try VideoEncoders.open(VideoTrackSettings(input: input, codecName: "null")).encoder.name, "null")
        XCTAssertThrowsError(try VideoEncoders.open(VideoTrackSettings(input: input, codecName: "nope264"))) { error in
            XCTAssertTrue("\(error)".contains("auto, null or one of"), "\(error)")
        }
    }
}
