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

    /// `overlay.preview = true`: the text is on the preview's own copy, white on black at
    /// the corner asked for, at the share of its height asked for; without it, nothing.
    func testTheOverlayOnThePreviewWhenAskedFor() throws {
        let renderer = try ScreenRenderer(framebuffer: Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888),
                                          rotation: .none, previewOrientation: .upright)
        let frame = markedFrame()   // the bottom right is grey (luma 40)
        let overlay = PreviewOverlay(text: "2026-11-29 05:54:09", position: .bottomRight, heightFraction: 0.08)
        try renderer.updatePreview(frame, overlay: overlay)
        let picture = try XCTUnwrap(renderer.scaler?.destination)
        let size = picture.size
        func green(_ x: Int, _ y: Int) -> Int { Int(picture.pixels.load(fromByteOffset: y * picture.stride + x * 4 + 1, as: UInt8.self)) }
        let box = overlay.box(on: size, textWidth: 0)
        XCTAssertEqual(box.height, Int((0.08 * Double(size.height)).rounded()) + max(2, Int((0.08 * Double(size.height)).rounded()) / 6))
        // Inside the box's rows at the bottom right: black with white text.
        var black = 0, white = 0, total = 0
        for y in (size.height - box.height + 1)..<(size.height - 1) {
            for x in (size.width / 2)..<(size.width - 1) {
                total += 1
                if green(x, y) < 16 { black += 1 } else if green(x, y) > 220 { white += 1 }
            }
        }
        XCTAssertGreaterThan(Double(white) / Double(total), 0.05, "white glyphs")
        XCTAssertGreaterThan(Double(black) / Double(total), 0.4, "on a black box")
        XCTAssertGreaterThan(green(size.width / 4, size.height / 4), 200, "the picture elsewhere is untouched (the bright quadrant)")
        XCTAssertEqual(frame.buffer.mutableBytes[640 * 479 + 639], 40, "the camera's frame is never written")

        try renderer.updatePreview(frame)
        var lit = 0
        for y in (size.height - box.height + 1)..<(size.height - 1) {
            for x in (size.width / 2)..<(size.width - 1) where green(x, y) > 220 || green(x, y) < 16 { lit += 1 }
        }
        XCTAssertEqual(lit, 0, "without overlay.preview the preview is the camera's picture alone")
    }
}
