import KioskCore
import KioskMedia
@testable import KioskFramebuffer
@testable import KioskScreen
import XCTest

/// `camera.rotation`/`camera.mirror` on the live preview: a camera on its side shows an
/// upright picture, letter-boxed to the turned shape.
final class PreviewOrientationTests: XCTestCase {
    /// A 640x480 grey frame (I420) with its top-left quadrant white.
    func markedFrame() -> VideoFrame {
        let format = VideoFormat(size: FrameSize(width: 640, height: 480), pixelFormat: .yuv420, framesPerSecond: 30)
        let buffer = MediaBuffer(capacity: format.frameByteCount)
        buffer.byteCount = format.frameByteCount
        let bytes = buffer.mutableBytes
        for index in 0..<bytes.count { bytes[index] = index < 640 * 480 ? 40 : 128 }
        for y in 0..<240 { for x in 0..<320 { bytes[y * 640 + x] = 235 } }
        return VideoFrame(buffer: buffer, format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 1)
    }

    /// Which quadrant of the preview picture is bright: 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right.
    func brightQuadrant(_ orientation: PictureOrientation) throws -> (quadrant: Int, size: ScreenSize) {
        let renderer = try ScreenRenderer(framebuffer: Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888),
                                          rotation: .none, previewOrientation: orientation)
        try renderer.updatePreview(markedFrame())
        let picture = try XCTUnwrap(renderer.scaler?.destination)
        let size = picture.size
        var sums = [0, 0, 0, 0]
        for y in 0..<size.height {
            for x in 0..<size.width {
                let green = Int(picture.pixels.load(fromByteOffset: y * picture.stride + x * 4 + 1, as: UInt8.self))
                sums[(y < size.height / 2 ? 0 : 2) + (x < size.width / 2 ? 0 : 1)] += green
            }
        }
        let brightest = try XCTUnwrap(sums.indices.max { sums[$0] < sums[$1] })
        XCTAssertGreaterThan(sums[brightest], 2 * sums.enumerated().filter { $0.offset != brightest }.map(\.element).max()!, "\(sums)")
        return (brightest, size)
    }

    func testThePreviewIsTurnedUpright() throws {
        let upright = try brightQuadrant(.upright)
        XCTAssertEqual(upright.quadrant, 0)
        XCTAssertGreaterThan(upright.size.width, upright.size.height)
        let quarter = try brightQuadrant(PictureOrientation(rotation: .quarter))
        XCTAssertEqual(quarter.quadrant, 1, "a quarter turn clockwise takes the top left to the top right")
        XCTAssertLessThan(quarter.size.width, quarter.size.height, "letter-boxed as a portrait picture")
        XCTAssertEqual(try brightQuadrant(PictureOrientation(rotation: .half)).quadrant, 3)
        XCTAssertEqual(try brightQuadrant(PictureOrientation(rotation: .threeQuarters)).quadrant, 2)
        XCTAssertEqual(try brightQuadrant(PictureOrientation(mirror: true)).quadrant, 1)
        XCTAssertEqual(try brightQuadrant(PictureOrientation(rotation: .quarter, mirror: true)).quadrant, 0)
    }
}
